package evolve

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Break is one change from an old content schema to a new one that content
// stored at the old version would not survive, with the op that would cover it.
type Break struct {
	Field      string // top-level property name
	Message    string
	Suggestion string
}

type propSchema struct {
	Type json.RawMessage   `json:"type"`
	Enum []json.RawMessage `json:"enum"`
}

type objSchema struct {
	Properties map[string]propSchema `json:"properties"`
	Required   []string              `json:"required"`
}

// Breaking compares two content JSON Schemas at the top level of properties
// (nested schemas are not compared) and returns the changes not covered by ops:
//   - a field required by the new schema that the old one did not require,
//     unless a default or a rename onto it is declared;
//   - a field of the old properties missing from the new, unless a remove or a
//     rename from it is declared;
//   - a field whose type set lost a type (string → integer), unless a remove or
//     a rename from it is declared;
//   - a string enum that lost values, unless a map of every lost value, a
//     remove or a rename from it is declared.
func Breaking(oldSchema, newSchema json.RawMessage, ops []Op) []Break {
	var o, n objSchema
	if json.Unmarshal(oldSchema, &o) != nil || json.Unmarshal(newSchema, &n) != nil {
		return nil
	}
	defaulted, renamedTo, movedAway, mapped := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]map[string]string{}
	for _, op := range ops {
		top := topField(op.Path)
		switch op.Op {
		case "default":
			if isTop(op.Path) {
				defaulted[top] = true
			}
		case "rename":
			if isTop(op.Path) {
				renamedTo[top] = true
			}
			if isTop(op.From) {
				movedAway[topField(op.From)] = true
			}
		case "remove":
			if isTop(op.Path) {
				movedAway[top] = true
			}
		case "map":
			if isTop(op.Path) {
				mapped[top] = op.Values
			}
		}
	}
	oldReq := map[string]bool{}
	for _, r := range o.Required {
		oldReq[r] = true
	}
	var out []Break
	for _, r := range n.Required {
		if oldReq[r] || defaulted[r] || renamedTo[r] {
			continue
		}
		out = append(out, Break{Field: r,
			Message:    fmt.Sprintf("new required field %q: content stored at the previous version may lack it", r),
			Suggestion: fmt.Sprintf(`add to migrations {"op": "default", "path": "/%s", "value": <a valid value>} (or a rename onto it)`, r)})
	}
	names := make([]string, 0, len(o.Properties))
	for k := range o.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if movedAway[k] {
			continue
		}
		np, ok := n.Properties[k]
		if !ok {
			out = append(out, Break{Field: k,
				Message:    fmt.Sprintf("field %q was removed: content stored at the previous version has it", k),
				Suggestion: fmt.Sprintf(`add to migrations {"op": "remove", "path": "/%s"} or {"op": "rename", "from": "/%s", "path": "/<new name>"}`, k, k)})
			continue
		}
		op := o.Properties[k]
		if lost := lostTypes(op.Type, np.Type); len(lost) > 0 {
			out = append(out, Break{Field: k,
				Message:    fmt.Sprintf("field %q narrowed its type: it no longer accepts %s", k, strings.Join(lost, ", ")),
				Suggestion: fmt.Sprintf(`keep the old type, or add to migrations {"op": "remove", "path": "/%s"} (or a rename from it) and a new field for the new type`, k)})
			continue
		}
		if lost := lostEnum(op.Enum, np.Enum); len(lost) > 0 {
			var miss []string
			for _, v := range lost {
				if _, ok := mapped[k][v]; !ok {
					miss = append(miss, v)
				}
			}
			if len(miss) > 0 {
				pairs := make([]string, len(miss))
				for i, v := range miss {
					pairs[i] = fmt.Sprintf("%q: <a remaining value>", v)
				}
				out = append(out, Break{Field: k,
					Message:    fmt.Sprintf("field %q lost enum values %s", k, strings.Join(quote(miss), ", ")),
					Suggestion: fmt.Sprintf(`add to migrations {"op": "map", "path": "/%s", "values": {%s}}`, k, strings.Join(pairs, ", "))})
			}
		}
	}
	return out
}

func isTop(p string) bool { return strings.HasPrefix(p, "/") && !strings.Contains(p[1:], "/") }

func topField(p string) string {
	toks, err := parsePointer(p)
	if err != nil || len(toks) == 0 {
		return ""
	}
	return toks[0]
}

// types reads a JSON Schema "type" (a string or a list); nil means any type.
func types(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}

func lostTypes(oldT, newT json.RawMessage) []string {
	nt := types(newT)
	if nt == nil {
		return nil
	}
	ot := types(oldT)
	if ot == nil {
		return []string{"every type but " + strings.Join(nt, ", ")}
	}
	have := map[string]bool{}
	for _, t := range nt {
		have[t] = true
		if t == "number" {
			have["integer"] = true
		}
	}
	var lost []string
	for _, t := range ot {
		if !have[t] {
			lost = append(lost, t)
		}
	}
	return lost
}

// lostEnum returns the string values of the old enum not in the new one (no
// new enum means any value).
func lostEnum(oldE, newE []json.RawMessage) []string {
	if len(newE) == 0 || len(oldE) == 0 {
		return nil
	}
	have := map[string]bool{}
	for _, v := range newE {
		have[string(v)] = true
	}
	var lost []string
	for _, v := range oldE {
		if !have[string(v)] {
			var s string
			if json.Unmarshal(v, &s) == nil {
				lost = append(lost, s)
			} else {
				lost = append(lost, string(v))
			}
		}
	}
	return lost
}

func quote(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
