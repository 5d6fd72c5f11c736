package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/pgjson"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
)

// SeedResult says what seeding changed.
type SeedResult struct {
	Created []string // types whose schema artifact was created
	Updated []string // types given a newer default version
}

// SeedSchemas makes sure every default schema document is registered and has its
// `schema:<type>` artifact, as the system actor. A type whose registered version is
// already at or past the embedded one is left alone, so documents changed at run
// time are never overwritten by an older default. Run it under the migration lock.
func (s *Store) SeedSchemas(ctx context.Context, docs []json.RawMessage) (*SeedResult, error) {
	parsed := make([]*schema.Document, len(docs))
	for i, raw := range docs {
		d, err := schema.ParseDocument(raw)
		if err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
		parsed[i] = d
	}
	// The type of schema documents goes first: every other document is validated by it.
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return parsed[order[a]].Type == schema.MetaType && parsed[order[b]].Type != schema.MetaType
	})

	rc := request.System("seed", time.Now())
	ctx = request.With(ctx, rc)
	res := &SeedResult{}
	for _, i := range order {
		d, raw := parsed[i], docs[i]
		if d.Type == schema.MetaType {
			if err := s.bootstrapMetaSchema(ctx, rc, raw, d.SchemaVersion); err != nil {
				return nil, err
			}
		}
		latest, err := s.q.SchemaLatestVersion(ctx, d.Type)
		if err != nil {
			return nil, fmt.Errorf("seed %s: %w", d.Type, err)
		}
		existing, err := s.q.ArtifactGetByTypeID(ctx, schema.MetaType, d.Type)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if _, err := s.CreateArtifact(ctx, CreateParams{Type: schema.MetaType, ID: d.Type, Title: d.Title, Content: raw}); err != nil {
				return nil, fmt.Errorf("seed %s: %w", d.Type, err)
			}
			res.Created = append(res.Created, d.Type)
		case err != nil:
			return nil, fmt.Errorf("seed %s: %w", d.Type, err)
		case d.SchemaVersion > int(latest):
			if _, err := s.UpdateArtifact(ctx, UpdateParams{
				Ref: "schema:" + d.Type, BaseContentHash: existing.ContentHash, Content: raw, Title: &d.Title,
			}); err != nil {
				return nil, fmt.Errorf("seed %s v%d: %w", d.Type, d.SchemaVersion, err)
			}
			res.Updated = append(res.Updated, d.Type)
		}
	}
	return res, nil
}

// bootstrapMetaSchema registers the document that validates schema documents
// before anything can be validated by it.
func (s *Store) bootstrapMetaSchema(ctx context.Context, rc *request.Context, raw json.RawMessage, version int) error {
	hash, err := canon.HashJSON(raw)
	if err != nil {
		return err
	}
	_, err = s.q.SchemaInsert(ctx, dbsqlc.SchemaInsertParams{
		Type: schema.MetaType, Version: int32(version), Document: pgjson.JSON(raw), ContentHash: hash, CreatedAt: rc.Now, CreatedBy: rc.Actor.ID,
	})
	if err != nil {
		return fmt.Errorf("seed: register the schema type: %w", err)
	}
	s.registry.Forget(schema.MetaType)
	return nil
}
