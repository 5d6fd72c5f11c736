package schema

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scidex/substrate/internal/problem"
)

// reserved are names no type may take: the namespaces of events that are not
// about an artifact of that type (system.*, agent.*) and those the write path
// emits for every type (artifact.superseded, link.created, signal.created).
// A type named system would have events only admins see, its creator included.
var reserved = map[string]string{
	"system":   "system.* events are the server's own, visible to admins only",
	"agent":    "agent.* events are about actors, private to the actor",
	"artifact": "artifact.* events are emitted for every type",
	"link":     "link.* events are emitted for links between artifacts of every type",
	"signal":   "signal.* events are emitted for signals on artifacts of every type",
}

// Reserved reports why a type name is reserved, or "" when it is free.
func Reserved(name string) string { return reserved[name] }

// Known is what this server build knows of the names a document may use.
type Known struct {
	// Validator reports whether a named validator is in this build.
	Validator func(name string) bool
	// Validators lists them, for the refusal's suggestion.
	Validators []string
	// Operation reports whether an operation exists (policy via and written_by).
	Operation func(name string) bool
}

// CheckKnown returns a problem for every name in d this build does not know:
// validators it has not got and operations it does not have, and for a
// reserved type name. Paths are under "content" (the schema artifact's).
// A document that passed would otherwise register a type whose rules this
// server silently cannot enforce.
func (d *Document) CheckKnown(k Known) []problem.Detail {
	var out []problem.Detail
	if why := Reserved(d.Type); why != "" {
		out = append(out, problem.Detail{Path: "content.type", Constraint: "reserved",
			Message: fmt.Sprintf("%q is a reserved name (%s); choose another type name", d.Type, why), Value: mustJSON(d.Type)})
	}
	for i, name := range d.Validators {
		if k.Validator != nil && !k.Validator(name) {
			out = append(out, problem.Detail{Path: fmt.Sprintf("content.validators[%d]", i), Constraint: "known_validator",
				Message:    fmt.Sprintf("this server has no validator %q", name),
				Value:      mustJSON(name),
				Suggestion: "use one of " + strings.Join(k.Validators, ", ")})
		}
	}
	op := func(path, name string) {
		if k.Operation != nil && !k.Operation(name) {
			out = append(out, problem.Detail{Path: path, Constraint: "known_operation",
				Message: fmt.Sprintf("this server has no operation %q", name), Value: mustJSON(name)})
		}
	}
	for _, r := range []struct {
		kind string
		rule WriteRule
	}{{"create", d.Policy.Create}, {"update", d.Policy.Update}, {"supersede", d.Policy.Supersede}} {
		for i, name := range r.rule.Via {
			op(fmt.Sprintf("content.policy.%s.via[%d]", r.kind, i), name)
		}
	}
	for i, f := range d.Policy.ServerFields {
		for j, name := range f.WrittenBy {
			op(fmt.Sprintf("content.policy.server_fields[%d].written_by[%d]", i, j), name)
		}
	}
	return out
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
