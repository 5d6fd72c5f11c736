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
	row, err := s.q.ArtifactGetByTypeID(ctx, r.Type, r.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", r, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", r, err)
	}
	a := fromRow(row)
	if ok, err := s.canRead(ctx, s.q, a); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%s: %w", r, ErrNotFound)
	}
	if !r.IsPinned() || r.Hash == a.ContentHash {
		return a, nil
	}
	v, err := s.q.ArtifactVersionGetByHash(ctx, a.PK, r.Hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: no version with that hash: %w", r, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", r, err)
	}
	return atVersion(a, v), nil
}

// GetMany returns the current versions of many artifacts in one statement, keyed
// by unpinned ref string. Absent artifacts are absent from the map.
func (s *Store) GetMany(ctx context.Context, refs []ref.Ref) (map[string]*Artifact, error) {
	types := make([]string, len(refs))
	ids := make([]string, len(refs))
	for i, r := range refs {
		types[i], ids[i] = r.Type, r.ID
	}
	rows, err := s.q.ArtifactGetManyByTypeID(ctx, types, ids)
	if err != nil {
		return nil, fmt.Errorf("get %d artifacts: %w", len(refs), err)
	}
	out := make(map[string]*Artifact, len(rows))
	arts := make([]*Artifact, 0, len(rows))
	for _, row := range rows {
		arts = append(arts, fromRow(row))
	}
	hidden, err := s.hidden(ctx, arts)
	if err != nil {
		return nil, err
	}
	for _, a := range arts {
		if !hidden[a.PK] {
			out[a.Unpinned().String()] = a
		}
	}
	return out, nil
}

// Actor is what the substrate records of an actor from its writes.
type Actor struct {
	ID          string
	Kind        string
	Permissions []string
	Handle      *string
}

// Actors returns what is recorded of many actors.
func (s *Store) Actors(ctx context.Context, ids []string) ([]Actor, error) {
	rows, err := s.q.ActorGetMany(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("get %d actors: %w", len(ids), err)
	}
	out := make([]Actor, len(rows))
	for i, r := range rows {
		out[i] = Actor{ID: r.ID, Kind: r.Kind, Permissions: r.Permissions, Handle: r.Handle}
	}
	return out, nil
}
