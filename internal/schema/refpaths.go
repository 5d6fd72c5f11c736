package schema

import (
	"encoding/json"
)

// RefPaths lists where the content schema declares artifact references
// ("format": "ref"), as paths of property names with "*" for array items. It
// follows properties, items and local $defs references, which is how the
// default documents declare them.
func (t *Type) RefPaths() [][]string {
	t.refOnce.Do(func() {
		var root map[string]any
		if err := json.Unmarshal(t.Doc.ContentSchema, &root); err != nil {
			return
		}
		defs, _ := root["$defs"].(map[string]any)
		var walk func(s map[string]any, path []string, depth int)
		walk = func(s map[string]any, path []string, depth int) {
			if depth > 12 || s == nil {
				return
			}
			if r, ok := s["$ref"].(string); ok && len(r) > len("#/$defs/") && r[:len("#/$defs/")] == "#/$defs/" {
				if d, ok := defs[r[len("#/$defs/"):]].(map[string]any); ok {
					walk(d, path, depth+1)
				}
			}
			if f, _ := s["format"].(string); f == "ref" && len(path) > 0 {
				t.refPaths = append(t.refPaths, append([]string{}, path...))
			}
			if props, ok := s["properties"].(map[string]any); ok {
				for name, p := range props {
					ps, _ := p.(map[string]any)
					walk(ps, append(path, name), depth+1)
				}
			}
			if items, ok := s["items"].(map[string]any); ok {
				walk(items, append(path, "*"), depth+1)
			}
		}
		walk(root, nil, 0)
	})
	return t.refPaths
}

// ValuesAt returns the values found at a RefPaths-style path in decoded content,
// each with its concrete path tokens (array indices filled in).
func ValuesAt(content any, path []string) (values []any, paths [][]string) {
	var walk func(v any, i int, at []string)
	walk = func(v any, i int, at []string) {
		if i == len(path) {
			values = append(values, v)
			paths = append(paths, append([]string{}, at...))
			return
		}
		if path[i] == "*" {
			arr, _ := v.([]any)
			for j, x := range arr {
				walk(x, i+1, append(at, itoa(j)))
			}
			return
		}
		obj, _ := v.(map[string]any)
		if x, ok := obj[path[i]]; ok {
			walk(x, i+1, append(at, path[i]))
		}
	}
	walk(content, 0, nil)
	return values, paths
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
