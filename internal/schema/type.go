package schema

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/internal/problem"
)

// Type is one version of a schema document, compiled and ready to validate.
type Type struct {
	Doc     *Document
	Raw     json.RawMessage
	Version int
	Hash    string
	content *jsonschema.Schema
	idRE    *regexp.Regexp
	// ownProducedBy: the content schema declares produced_by itself, so the
	// shared shape (producedby.go) does not apply.
	ownProducedBy bool

	refOnce  sync.Once
	refPaths [][]string

	slotsOnce sync.Once
	slots     []SignalSlot
}

// Compile parses and compiles a schema document.
func Compile(raw json.RawMessage, version int, hash string) (*Type, error) {
	doc, err := ParseDocument(raw)
	if err != nil {
		return nil, err
	}
	cs, err := CompileJSONSchema(doc.ContentSchema)
	if err != nil {
		return nil, fmt.Errorf("schema document %s: content_schema: %w", doc.Type, err)
	}
	pattern := doc.IDPattern
	if pattern == "" {
		pattern = DefaultIDPattern
	}
	return &Type{Doc: doc, Raw: raw, Version: version, Hash: hash, content: cs, idRE: regexp.MustCompile(pattern),
		ownProducedBy: declaresProducedBy(doc.ContentSchema)}, nil
}

// Name is the type's name.
func (t *Type) Name() string { return t.Doc.Type }

// ValidateContent checks content against the type's content schema, and
// content.produced_by against the shape every type shares (producedby.go).
// Content must be a JSON object; every problem comes back, each with its path
// under "content".
func (t *Type) ValidateContent(content json.RawMessage) []problem.Detail {
	trimmed := strings.TrimSpace(string(content))
	if trimmed == "" || trimmed[0] != '{' {
		var v any
		_ = json.Unmarshal(content, &v)
		return []problem.Detail{problem.Field("content", "type", "content must be a JSON object", v)}
	}
	return append(ValidateJSON(t.content, "content", content), t.validateProducedBy(content)...)
}

// CheckID checks a client-chosen id against the type's id grammar.
func (t *Type) CheckID(id string) *problem.Detail {
	if strings.ContainsAny(id, "@") {
		d := problem.Field("id", "pattern", "an id never contains '@' (it separates the id from a version hash in a ref)", id)
		return &d
	}
	if !t.idRE.MatchString(id) {
		msg := fmt.Sprintf("must match %s", t.idRE)
		if strings.Contains(id, ":") {
			msg = fmt.Sprintf("%s ids may not contain ':' (it separates type and id in a ref); must match %s", t.Doc.Type, t.idRE)
		}
		d := problem.Field("id", "pattern", msg, id)
		return &d
	}
	return nil
}
