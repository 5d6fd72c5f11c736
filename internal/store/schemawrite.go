package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/pgjson"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/internal/schema/evolve"
)

// schemaWrite is the registry side of writing a `schema` artifact: the document
// becomes a new version of its type in the same transaction.
type schemaWrite struct {
	typ     string
	version int
	doc     json.RawMessage
	// read is the new document's policy.read, stamped on the type's artifacts.
	read string
	// registered is true when the registry already holds this exact document.
	registered bool
}

// checkSchemaWrite enforces what a schema document must satisfy beyond its JSON
// Schema (who may write one is the schema type's own policy): the id is the
// type name, the document compiles, names only validators and operations this
// build has and no reserved type, and its version moves forward.
func (s *Store) checkSchemaWrite(ctx context.Context, w *writer, id string, content json.RawMessage) (*schemaWrite, error) {
	t, err := schema.Compile(content, 0, "")
	if err != nil {
		return nil, problem.Invalid(problem.Field("content", "schema_compiles", err.Error(), nil))
	}
	if problems := t.Doc.CheckKnown(Known()); len(problems) > 0 {
		return nil, problem.Invalid(problems...)
	}
	if id != "" && t.Name() != id {
		return nil, problem.Invalid(problem.Field("content.type", "const",
			fmt.Sprintf("a schema artifact's id is its type name: expected %q", id), t.Name()))
	}
	latest, err := w.q.SchemaLatestVersion(ctx, t.Name())
	if err != nil {
		return nil, fmt.Errorf("schema %s: latest version: %w", t.Name(), err)
	}
	if t.Doc.SchemaVersion == int(latest) {
		// Registering the very document already registered at that version is a
		// no-op (the seeder registers the meta-schema before anything else).
		hash, err := canon.HashJSON(content)
		if err != nil {
			return nil, err
		}
		reg, err := w.q.SchemaGet(ctx, t.Name(), latest)
		if err != nil {
			return nil, fmt.Errorf("schema %s v%d: %w", t.Name(), latest, err)
		}
		if reg.ContentHash == hash {
			return &schemaWrite{typ: t.Name(), version: int(latest), doc: content, read: t.Doc.Policy.Read, registered: true}, nil
		}
	}
	if t.Doc.SchemaVersion <= int(latest) {
		return nil, problem.Invalid(problem.Detail{Path: "content.schema_version", Constraint: "minimum",
			Message:    fmt.Sprintf("%s is at schema version %d; a new document must carry a higher schema_version", t.Name(), latest),
			Value:      mustJSON(t.Doc.SchemaVersion),
			Suggestion: fmt.Sprintf("set schema_version to %d", latest+1)})
	}
	if latest > 0 && !(w.rc.Actor.ID == auth.SystemID && w.rc.RequestID == "seed") {
		if err := checkBreaking(ctx, w, t, int(latest)); err != nil {
			return nil, err
		}
	}
	return &schemaWrite{typ: t.Name(), version: t.Doc.SchemaVersion, doc: content, read: t.Doc.Policy.Read}, nil
}

// checkBreaking refuses a new version whose content schema stored content of
// the latest version would not survive (evolve.Breaking: top-level properties
// only) unless its migrations cover the change. The seeder's built-in
// documents are exempt: they ship with the build and are reviewed with it.
func checkBreaking(ctx context.Context, w *writer, t *schema.Type, latest int) error {
	reg, err := w.q.SchemaGet(ctx, t.Name(), int32(latest))
	if err != nil {
		return fmt.Errorf("schema %s v%d: %w", t.Name(), latest, err)
	}
	old, err := schema.ParseDocument(reg.Document)
	if err != nil {
		return fmt.Errorf("schema %s v%d: %w", t.Name(), latest, err)
	}
	breaks := evolve.Breaking(old.ContentSchema, t.Doc.ContentSchema, t.Doc.Migrations)
	if len(breaks) == 0 {
		return nil
	}
	details := make([]problem.Detail, len(breaks))
	for i, b := range breaks {
		details[i] = problem.Detail{Path: "content.content_schema.properties." + b.Field, Constraint: "breaking_change",
			Message:    fmt.Sprintf("%s v%d → v%d: %s, and no migration covers it", t.Name(), latest, t.Doc.SchemaVersion, b.Message),
			Suggestion: b.Suggestion}
	}
	return problem.Invalid(details...)
}

func (h *schemaWrite) apply(ctx context.Context, s *Store, w *writer) error {
	if h.registered {
		return nil
	}
	hash, err := canon.HashJSON(h.doc)
	if err != nil {
		return err
	}
	n, err := w.q.SchemaInsert(ctx, dbsqlc.SchemaInsertParams{
		Type: h.typ, Version: int32(h.version), Document: pgjson.JSON(h.doc), ContentHash: hash,
		CreatedAt: w.rc.Now, CreatedBy: w.rc.Actor.ID,
	})
	if err != nil {
		return fmt.Errorf("register schema %s v%d: %w", h.typ, h.version, err)
	}
	if n == 0 {
		return problem.Invalid(problem.Field("content.schema_version", "unique",
			fmt.Sprintf("%s version %d was registered by a concurrent write; read it and try again", h.typ, h.version), h.version))
	}
	// Artifacts written under the old policy.read take the new one with the type.
	if _, err := w.q.ArtifactRestampVisibility(ctx, h.read, h.typ); err != nil {
		return fmt.Errorf("restamp %s visibility: %w", h.typ, err)
	}
	typ := h.typ
	w.afterCommit(func() { s.registry.Forget(typ) })
	return nil
}
