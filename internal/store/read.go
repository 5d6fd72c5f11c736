package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/ref"
)

// Get returns the artifact a ref names: its current version, or for a pinned ref
// that exact version. It returns ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, r ref.Ref) (*Artifact, error) {
	return s.get(ctx, r, true)
}

// get is Get, with the request actor's read rights applied or not (ServerGet).
func (s *Store) get(ctx context.Context, r ref.Ref, asActor bool) (*Artifact, error) {
	row, err := s.q.ArtifactGetByTypeID(ctx, r.Type, r.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", r, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", r, err)
	}
	a := fromRow(row)
	if asActor {
		ok, err := s.canRead(ctx, s.q, a)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s: %w", r, ErrNotFound)
		}
	}
	if !r.IsPinned() || r.Hash == a.ContentHash {
		return a, s.upgrade(ctx, a)
	}
	v, err := s.q.ArtifactVersionGetByHash(ctx, a.PK, r.Hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: no version with that hash: %w", r, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", r, err)
	}
	out := atVersion(a, v)
	return out, s.upgrade(ctx, out)
}

// LatestInState returns a's newest version in lifecycle state state (a itself
// when it is in that state), or ErrNotFound when no version ever was: a tool's
// reviewed version, which serves while a newer one waits for review.
func (s *Store) LatestInState(ctx context.Context, a *Artifact, state string) (*Artifact, error) {
	if a.LifecycleState != nil && *a.LifecycleState == state {
		return a, nil
	}
	row, err := s.q.ArtifactVersionLatestInState(ctx, a.PK, state)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%s version of %s: %w", state, a.Unpinned(), err)
	}
	return atVersion(a, row), nil
}

// History returns versions of a, newest first, older than beforeVersion.
func (s *Store) History(ctx context.Context, a *Artifact, limit, beforeVersion int) ([]*Artifact, error) {
	rows, err := s.q.ArtifactVersionList(ctx, a.PK, int32(beforeVersion), int32(limit))
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", a.Unpinned(), err)
	}
	out := make([]*Artifact, len(rows))
	for i, r := range rows {
		out[i] = atVersion(a, r)
	}
	return out, s.upgradeAll(ctx, out)
}
