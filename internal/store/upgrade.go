package store

import (
	"context"
	"errors"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/schema"
)

// upgradeOp is the server operation an eager schema upgrade writes through
// (`scidex schema upgrade`, docs/schema-evolution.md).
const upgradeOp = "upgradeSchema"

// DefaultUpgradeBatch is how many artifacts an eager upgrade reads a page.
const DefaultUpgradeBatch = 200

// UpgradeReport is what an eager schema upgrade did, so far (after each
// page) or in all.
type UpgradeReport struct {
	Type    string
	Version int // the type's current schema version, the one stored
	// Upgraded artifacts got a new version, their content upgraded and
	// stored at Version (an artifact.updated event each).
	Upgraded int
	// Restamped artifacts' content was what the migrations make of it: it
	// is marked stored at Version, no new version (nothing changed to read).
	Restamped int
	// Raced artifacts were written by someone else between the read and the
	// write; that write stored them upgraded.
	Raced int
	// Immutable is set for a type whose artifacts cannot be rewritten: none
	// is written, every read keeps serving them upgraded.
	Immutable bool
	// Stale counts the artifacts found below Version (every page's).
	Stale int
	// Failed are the artifacts left as they are, with why: the upgraded
	// content is not valid at Version (a migration is missing), or the chain
	// does not apply.
	Failed []UpgradeFailure
	// After is the id the next page starts after: the cursor a resumed run
	// may pass on, though a rerun from the start skips what is done.
	After string
}

// UpgradeFailure is one artifact an upgrade left as it was.
type UpgradeFailure struct {
	Ref    string
	Reason string
}

// UpgradeOpts tunes UpgradeSchema.
type UpgradeOpts struct {
	Batch int    // artifacts a page (DefaultUpgradeBatch when 0)
	After string // start after this id (a resumed run)
	// Page is called after each page with the report so far.
	Page func(UpgradeReport)
}

// UpgradeSchema upgrades every artifact of type typ stored below the type's
// current schema version, eagerly, a page at a time in id order (the
// lazy upgrade on read does the same for one artifact at its next write,
// evolve.go). Each artifact is its own write, as the server: its content
// upgraded through the migrations, validated against the current schema and
// stored as a new version, under the optimistic lock of the version read (a
// concurrent write wins; it stored the artifact upgraded). Content the chain
// leaves unchanged is only marked stored at the current version. An
// interrupted run loses nothing: a rerun finds only what is still stale. A
// type that is not registered is NotFound; ctx ending stops between two
// artifacts, with the report so far.
func (s *Store) UpgradeSchema(ctx context.Context, typ string, o UpgradeOpts) (*UpgradeReport, error) {
	t, err := s.registry.Get(ctx, typ)
	if errors.Is(err, schema.ErrUnknownType) {
		return nil, problem.New(problem.NotFound, "no artifact type %q is registered", typ)
	}
	if err != nil {
		return nil, err
	}
	batch := o.Batch
	if batch <= 0 {
		batch = DefaultUpgradeBatch
	}
	rep := &UpgradeReport{Type: t.Name(), Version: t.Version, After: o.After, Immutable: t.Doc.Mutability == schema.Immutable}
	for {
		page, err := s.q.ArtifactListStaleSchema(ctx, dbsqlc.ArtifactListStaleSchemaParams{
			Type: typ, After: rep.After, Below: int32(t.Version), N: int32(batch)})
		if err != nil {
			return rep, err
		}
		if len(page) == 0 {
			return rep, nil
		}
		rep.Stale += len(page)
		for _, row := range page {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			if !rep.Immutable {
				if err := s.upgradeOne(ctx, t, ref.Ref{Type: typ, ID: row.ID}, rep); err != nil {
					return rep, err
				}
			}
			rep.After = row.ID
		}
		if o.Page != nil {
			o.Page(*rep)
		}
	}
}

// upgradeOne upgrades one artifact, counting the outcome in rep; an error
// is the database's, which stops the run.
func (s *Store) upgradeOne(ctx context.Context, t *schema.Type, r ref.Ref, rep *UpgradeReport) error {
	a, err := s.ServerGet(ctx, upgradeOp, r) // served upgraded
	if errors.Is(err, ErrNotFound) {
		return nil // gone meanwhile
	}
	if err != nil {
		// The chain does not apply to this content (evolve.Apply), or the
		// read was refused: the artifact stays as it is, listed.
		rep.Failed = append(rep.Failed, UpgradeFailure{Ref: r.String(), Reason: err.Error()})
		return nil
	}
	if a.StoredSchemaVersion >= t.Version {
		return nil // written meanwhile
	}
	res, err := s.ServerUpdate(ctx, upgradeOp, UpdateParams{Ref: r.String(), BaseContentHash: a.ContentHash, Content: a.Content})
	if pr, ok := problem.As(err); ok {
		if pr.Code == problem.VersionConflict {
			rep.Raced++
		} else {
			rep.Failed = append(rep.Failed, UpgradeFailure{Ref: r.String(), Reason: pr.Error()})
		}
		return nil
	}
	if err != nil {
		return err
	}
	if res.ContentHash != a.ContentHash {
		rep.Upgraded++
		return nil
	}
	// The same content (a "no change" answer): it is valid at the current
	// version (the update checked it), so it is stored there.
	n, err := s.q.ArtifactRestampSchemaVersion(ctx, dbsqlc.ArtifactRestampSchemaVersionParams{
		Type: r.Type, ID: r.ID, ContentHash: a.ContentHash, Version: int32(t.Version)})
	if err != nil {
		return err
	}
	if n == 0 {
		rep.Raced++
	} else {
		rep.Restamped++
	}
	return nil
}
