package schema

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/toolname"
)

// ProducedByKey is the content property through which a result submitted with
// createArtifact (or updateArtifact) says where it came from:
// {"actor": …, "skill": …, "tool": …}. It is accepted on every type, centrally,
// rather than declared by each type's content schema: any artifact can be a
// result an agent computed in its own runtime, and one definition keeps the
// shape the same everywhere, for types registered at run time too. A type
// whose content schema declares its own produced_by keeps its own meaning
// (that schema validates it; nothing here applies), and a type whose content
// is closed (additionalProperties false) refuses it as it refuses any other
// undeclared property.
const ProducedByKey = "produced_by"

// producedBySchema is the shape of content.produced_by. Open like the rest of
// content: an agent may add what else it knows of the run (a tool version, a
// model); only actor, skill and tool are stamped.
var producedBySchema = `{
  "type": "object",
  "properties": {
    "actor": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^\\S*$",
      "description": "The actor id that produced the result; the submitter, or an actor it acts for (its delegation chain). Default: the submitter."},
    "skill": {"type": "string", "maxLength": ` + nameMax + `, "pattern": ` + namePattern + `,
      "description": "The name of the skill whose procedure produced the result, e.g. pk.nca."},
    "tool": {"type": "string", "maxLength": ` + nameMax + `, "pattern": ` + namePattern + `,
      "description": "The name of the registered tool that computed the result, e.g. pk.nca."}
  }
}`

// namePattern and nameMax are toolname's, as JSON: a skill and a tool are
// named alike.
var (
	namePattern = func() string { b, _ := json.Marshal(toolname.Pattern); return string(b) }()
	nameMax     = strconv.Itoa(toolname.MaxLength)
)

var producedBy = func() *jsonschema.Schema {
	s, err := CompileJSONSchema([]byte(producedBySchema))
	if err != nil {
		panic("schema: produced_by schema: " + err.Error())
	}
	return s
}()

// ProducedBy is content.produced_by as the write path stamps it.
type ProducedBy struct {
	Actor string `json:"actor,omitempty"`
	Skill string `json:"skill,omitempty"`
	Tool  string `json:"tool,omitempty"`
}

// ProducedByOf reads content.produced_by: nil when content has none, or has
// one of another shape (a type's own produced_by, validated by its schema).
func ProducedByOf(content json.RawMessage) *ProducedBy {
	raw := producedByRaw(content)
	if raw == nil {
		return nil
	}
	var pb ProducedBy
	if json.Unmarshal(raw, &pb) != nil {
		return nil
	}
	return &pb
}

// producedByRaw is the raw value of content.produced_by, nil when absent. Most
// content has none, and is not decoded to find out.
func producedByRaw(content json.RawMessage) json.RawMessage {
	if !bytes.Contains(content, []byte(`"`+ProducedByKey+`"`)) {
		return nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(content, &top) != nil {
		return nil
	}
	return top[ProducedByKey]
}

// validateProducedBy checks content.produced_by against the shared shape,
// unless the type declares a produced_by of its own.
func (t *Type) validateProducedBy(content json.RawMessage) []problem.Detail {
	if t.ownProducedBy {
		return nil
	}
	raw := producedByRaw(content)
	if raw == nil {
		return nil
	}
	return ValidateJSON(producedBy, "content."+ProducedByKey, raw)
}

// declaresProducedBy reports whether a content schema declares a top-level
// produced_by property of its own.
func declaresProducedBy(contentSchema json.RawMessage) bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(contentSchema, &s) != nil {
		return false
	}
	_, ok := s.Properties[ProducedByKey]
	return ok
}
