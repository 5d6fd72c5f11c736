package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/internal/schema/evolve"
)

// Lazy schema evolution (docs/schema-evolution.md): an artifact stored at an
// older schema version of its type is served with its content upgraded through
// the migrations the newer documents declare, and says the version it was
// stored at (StoredSchemaVersion). Nothing is rewritten on read; the next
// update of the artifact starts from the upgraded content and stores it, so
// its contentHash is of what is stored. Filters and search run in SQL over
// the STORED content.

// upgrade serves a at its type's current schema version. It does nothing for
// content already there (the common case: one cached registry lookup).
func (s *Store) upgrade(ctx context.Context, a *Artifact) error {
	if a.StoredSchemaVersion == 0 {
		a.StoredSchemaVersion = a.SchemaVersion
	}
	if a.SchemaVersion == 0 {
		return nil
	}
	t, err := s.registry.Get(ctx, a.Type)
	if err != nil {
		return err
	}
	return s.upgradeTo(ctx, s.q, a, t)
}

// upgradeTo upgrades a to version t (the type's current one), reading older
// documents through q (inside a write, the transaction's queries).
func (s *Store) upgradeTo(ctx context.Context, q *dbsqlc.Queries, a *Artifact, t *schema.Type) error {
	if a.StoredSchemaVersion == 0 {
		a.StoredSchemaVersion = a.SchemaVersion
	}
	if a.SchemaVersion == 0 || a.SchemaVersion >= t.Version {
		return nil
	}
	var steps []evolve.Step
	var err error
	for v := a.SchemaVersion + 1; v <= t.Version; v++ {
		vt := t
		if v < t.Version {
			if vt, err = s.registry.GetVersionWith(ctx, q, a.Type, v); errors.Is(err, schema.ErrUnknownType) {
				continue // versions need not be contiguous
			} else if err != nil {
				return err
			}
		}
		if len(vt.Doc.Migrations) > 0 {
			steps = append(steps, evolve.Step{Version: v, Ops: vt.Doc.Migrations})
		}
	}
	content := a.Content
	if len(steps) > 0 {
		if content, err = evolve.Apply(a.Content, steps); err != nil {
			return fmt.Errorf("upgrade %s from schema version %d to %d: %w", a.Unpinned(), a.SchemaVersion, t.Version, err)
		}
	}
	a.Content, a.SchemaVersion = content, t.Version
	return nil
}

// upgradeAll upgrades each artifact of a read.
func (s *Store) upgradeAll(ctx context.Context, arts []*Artifact) error {
	for _, a := range arts {
		if err := s.upgrade(ctx, a); err != nil {
			return err
		}
	}
	return nil
}
