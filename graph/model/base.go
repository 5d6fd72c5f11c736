// Package model holds the Go types of the GraphQL schema: models_gen.go from
// gqlgen, artifact_types_gen.go from cmd/typegen, and the hand-written Base that
// every artifact model embeds.
package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/scidex/substrate/internal/store"
)

// Base is the envelope every artifact model shares; the typed subtypes embed it
// and add accessors for their content fields.
type Base struct {
	A *store.Artifact

	once   sync.Once
	fields map[string]any
	err    error
}

// NewArtifact wraps a stored artifact in its typed GraphQL model.
func NewArtifact(a *store.Artifact) Artifact { return Wrap(&Base{A: a}) }

// IsNode marks artifacts as Relay nodes.
func (*Base) IsNode() {}

// IsArtifact marks the artifact models.
func (*Base) IsArtifact() {}

// ID is the Relay id: the unpinned ref for the current version, the pinned ref
// for an older one, so each version is a distinct node.
func (b *Base) ID() string {
	if b.A.Current {
		return b.A.Unpinned().String()
	}
	return b.A.Ref().String()
}

// Ref is the pinned ref of this version.
func (b *Base) Ref() string { return b.A.Ref().String() }

// Type is the artifact type.
func (b *Base) Type() string { return b.A.Type }

// ArtifactID is the <id> part of the ref.
func (b *Base) ArtifactID() string { return b.A.ID }

// Title is the artifact's title.
func (b *Base) Title() string { return b.A.Title }

// Content is the whole content document.
func (b *Base) Content() JSON { return JSON(b.A.Content) }

// ContentHash is the version's content hash.
func (b *Base) ContentHash() string { return b.A.ContentHash }

// StoredSchemaVersion is the schema version the content is stored at.
func (b *Base) StoredSchemaVersion() int {
	if b.A.StoredSchemaVersion != 0 {
		return b.A.StoredSchemaVersion
	}
	return b.A.SchemaVersion
}

// Revision is the version number.
func (b *Base) Revision() int { return b.A.Version }

// CreatedAt is when the artifact was created.
func (b *Base) CreatedAt() time.Time { return b.A.CreatedAt }

// UpdatedAt is when this version was written.
func (b *Base) UpdatedAt() time.Time { return b.A.UpdatedAt }

// IsLatest is false for superseded artifacts and older versions.
func (b *Base) IsLatest() bool { return b.A.IsLatest }

// SupersededBy names the replacement of a superseded artifact.
func (b *Base) SupersededBy() *string { return b.A.SupersededBy }

// LifecycleState is the artifact's lifecycle state, if its type has one.
func (b *Base) LifecycleState() *string { return b.A.LifecycleState }

// QualityScore is the artifact's quality score, if one was computed.
func (b *Base) QualityScore() *float64 { return b.A.QualityScore }

// Steps decodes the provenance steps the artifact's rows carry (the
// provenance resolver adds the produced_by steps of its stamps).
func (b *Base) Steps() ([]*ProvenanceStep, error) {
	var steps []store.ProvenanceStep
	if len(b.A.Provenance) > 0 {
		if err := json.Unmarshal(b.A.Provenance, &steps); err != nil {
			return nil, fmt.Errorf("%s: provenance: %w", b.A.Unpinned(), err)
		}
	}
	out := make([]*ProvenanceStep, len(steps))
	for i, s := range steps {
		steps := s.Steps()
		delegation := make([]*DelegationStep, len(steps))
		for j, d := range steps {
			delegation[j] = &DelegationStep{ActorID: d.ActorID, SessionID: nonEmpty(d.SessionID), TaskID: nonEmpty(d.TaskID)}
		}
		out[i] = &ProvenanceStep{Operation: s.Operation, ActorID: s.ActorID, ActorKind: s.ActorKind,
			RequestID: s.RequestID, SessionID: nonEmpty(s.SessionID), TaskID: nonEmpty(s.TaskID),
			DelegationChain: steps.ActorIDs(), Delegation: delegation, Tool: nonEmpty(s.Tool), At: s.At}
	}
	return out, nil
}

// content decodes the content document once; accessors read from it.
func (b *Base) content() (map[string]any, error) {
	b.once.Do(func() {
		dec := json.NewDecoder(bytes.NewReader(b.A.Content))
		dec.UseNumber()
		b.err = dec.Decode(&b.fields)
	})
	return b.fields, b.err
}

func (b *Base) field(key string) (any, error) {
	m, err := b.content()
	if err != nil {
		return nil, fmt.Errorf("%s: content: %w", b.A.Unpinned(), err)
	}
	return m[key], nil
}

// wrongType explains content written under an older schema that no longer fits.
func (b *Base) wrongType(key, want string, got any) error {
	return fmt.Errorf("%s: content.%s is %T, not %s (written under schema version %d)", b.A.Unpinned(), key, got, want, b.A.SchemaVersion)
}

func (b *Base) str(key string) (*string, error) {
	v, err := b.field(key)
	if v == nil || err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, b.wrongType(key, "a string", v)
	}
	return &s, nil
}

func (b *Base) integer(key string) (*int, error) {
	v, err := b.field(key)
	if v == nil || err != nil {
		return nil, err
	}
	n, ok := v.(json.Number)
	if !ok {
		return nil, b.wrongType(key, "an integer", v)
	}
	i, err := n.Int64()
	if err != nil || i > math.MaxInt32 || i < math.MinInt32 {
		return nil, b.wrongType(key, "a 32-bit integer", v)
	}
	out := int(i)
	return &out, nil
}

func (b *Base) number(key string) (*float64, error) {
	v, err := b.field(key)
	if v == nil || err != nil {
		return nil, err
	}
	n, ok := v.(json.Number)
	if !ok {
		return nil, b.wrongType(key, "a number", v)
	}
	f, err := n.Float64()
	if err != nil {
		return nil, b.wrongType(key, "a number", v)
	}
	return &f, nil
}

func (b *Base) boolean(key string) (*bool, error) {
	v, err := b.field(key)
	if v == nil || err != nil {
		return nil, err
	}
	x, ok := v.(bool)
	if !ok {
		return nil, b.wrongType(key, "a boolean", v)
	}
	return &x, nil
}

func (b *Base) strings(key string) ([]string, error) {
	v, err := b.field(key)
	if v == nil || err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, b.wrongType(key, "an array of strings", v)
	}
	out := make([]string, len(list))
	for i, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, b.wrongType(fmt.Sprintf("%s[%d]", key, i), "a string", x)
		}
		out[i] = s
	}
	return out, nil
}

func (b *Base) dateTime(key string) (*time.Time, error) {
	s, err := b.str(key)
	if s == nil || err != nil {
		return nil, err
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return nil, b.wrongType(key, "an RFC 3339 time", *s)
	}
	return &t, nil
}

func (b *Base) json(key string) (JSON, error) {
	v, err := b.field(key)
	if v == nil || err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	return JSON(raw), err
}

// enumField reads a string enum property as its GraphQL enum (values upper-cased).
func enumField[E interface {
	~string
	IsValid() bool
}](b *Base, key string) (*E, error) {
	s, err := b.str(key)
	if s == nil || err != nil {
		return nil, err
	}
	e := E(upper(*s))
	if !e.IsValid() {
		return nil, b.wrongType(key, "one of the enum's values", *s)
	}
	return &e, nil
}

func upper(s string) string {
	out := []byte(s)
	for i, c := range out {
		if c >= 'a' && c <= 'z' {
			out[i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
