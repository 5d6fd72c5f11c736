// Package evolve upgrades content from one schema version to the next with
// migrators declared as data: a schema document of version N carries
// `migrations`, the operations that turn content valid at the version
// registered before it into content valid at N. No code per type.
//
// The operations (paths are RFC 6901 JSON Pointers into content):
//
//	{"op": "rename",  "from": "/a", "path": "/b"}        move a field; nothing when /a is absent
//	{"op": "default", "path": "/c", "value": <json>}      set a field that is absent
//	{"op": "remove",  "path": "/d"}                       drop a field; nothing when absent
//	{"op": "map",     "path": "/e", "values": {"old": "new"}}  replace string values
//
// An operation whose parent object is absent does nothing: content that never
// had the branch is left without it. Apply never fails on content; Check refuses
// malformed operations when the document is registered.
package evolve

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Op is one declared migration operation.
type Op struct {
	Op     string            `json:"op"`
	From   string            `json:"from,omitempty"`
	Path   string            `json:"path"`
	Value  json.RawMessage   `json:"value,omitempty"`
	Values map[string]string `json:"values,omitempty"`
}

// Step is the migration into one version: the ops of the document registered
// at Version, applied to content stored at the version before it.
type Step struct {
	Version int
	Ops     []Op
}

// Problem is a refused operation: Index is its position in migrations, Field
// the member at fault.
type Problem struct {
	Index   int
	Field   string
	Message string
	Value   any
}

func (p Problem) Error() string {
	return fmt.Sprintf("migrations[%d].%s: %s", p.Index, p.Field, p.Message)
}

// Check returns the problems of a migrations list, one per bad operation.
func Check(ops []Op) []Problem {
	var out []Problem
	bad := func(i int, field, msg string, v any) {
		out = append(out, Problem{Index: i, Field: field, Message: msg, Value: v})
	}
	for i, o := range ops {
		switch o.Op {
		case "rename", "default", "remove", "map":
		default:
			bad(i, "op", "want one of rename, default, remove, map", o.Op)
			continue
		}
		if _, err := parsePointer(o.Path); err != nil {
			bad(i, "path", err.Error(), o.Path)
			continue
		}
		switch o.Op {
		case "rename":
			if _, err := parsePointer(o.From); err != nil {
				bad(i, "from", err.Error(), o.From)
			} else if o.From == o.Path {
				bad(i, "from", "a rename must move the field somewhere else than path", o.From)
			} else if strings.HasPrefix(o.Path+"/", o.From+"/") {
				bad(i, "path", "a field cannot be renamed into itself", o.Path)
			}
		case "default":
			if len(o.Value) == 0 || !json.Valid(o.Value) {
				bad(i, "value", "a default needs a JSON value", string(o.Value))
			}
		case "map":
			if len(o.Values) == 0 {
				bad(i, "values", "a map needs at least one old→new string pair", o.Values)
			}
		}
		if o.Op != "rename" && o.From != "" {
			bad(i, "from", "only rename takes from", o.From)
		}
		if o.Op != "default" && len(o.Value) > 0 {
			bad(i, "value", "only default takes value", string(o.Value))
		}
		if o.Op != "map" && o.Values != nil {
			bad(i, "values", "only map takes values", o.Values)
		}
	}
	return out
}

// parsePointer splits a JSON Pointer into unescaped tokens; the root pointer
// ("") is refused, since no operation may replace the whole content.
func parsePointer(p string) ([]string, error) {
	if p == "" || p[0] != '/' {
		return nil, fmt.Errorf("want a JSON Pointer below the root, like /field")
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		if t == "" {
			return nil, fmt.Errorf("empty token in JSON Pointer")
		}
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 >= len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("'~' must be followed by 0 or 1")
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// Apply runs the steps in order on content and returns the upgraded content.
// Content that is not a JSON object is returned as it is.
func Apply(content json.RawMessage, steps []Step) (json.RawMessage, error) {
	var doc any
	if err := json.Unmarshal(content, &doc); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return content, nil
	}
	for _, s := range steps {
		for i, o := range s.Ops {
			if err := apply(doc, o); err != nil {
				return nil, fmt.Errorf("migration to version %d, op %d: %w", s.Version, i, err)
			}
		}
	}
	return json.Marshal(doc)
}

// parent walks to the object holding the pointer's last token.
func parent(doc any, toks []string) (map[string]any, string) {
	cur := doc
	for _, t := range toks[:len(toks)-1] {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, ""
		}
		cur = m[t]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, ""
	}
	return m, toks[len(toks)-1]
}

func apply(doc any, o Op) error {
	toks, err := parsePointer(o.Path)
	if err != nil {
		return err
	}
	m, key := parent(doc, toks)
	switch o.Op {
	case "rename":
		ft, err := parsePointer(o.From)
		if err != nil {
			return err
		}
		src, skey := parent(doc, ft)
		if src == nil {
			return nil
		}
		v, ok := src[skey]
		if !ok {
			return nil
		}
		if m == nil {
			return nil
		}
		delete(src, skey)
		m[key] = v
	case "default":
		if m == nil {
			return nil
		}
		if _, ok := m[key]; !ok {
			var v any
			if err := json.Unmarshal(o.Value, &v); err != nil {
				return err
			}
			m[key] = v
		}
	case "remove":
		if m != nil {
			delete(m, key)
		}
	case "map":
		if m == nil {
			return nil
		}
		if s, ok := m[key].(string); ok {
			if n, ok := o.Values[s]; ok {
				m[key] = n
			}
		}
	default:
		return fmt.Errorf("unknown op %q", o.Op)
	}
	return nil
}
