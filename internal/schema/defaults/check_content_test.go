package defaults_test

// Checks of the content schema as the GraphQL generator and the merge read it:
// property names and descriptions, merge pointers, GraphQL enums.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// checkProperties: property names are snake_case, unique once camelCased
// (they become GraphQL fields), and every property has a description.
func checkProperties(d document) error {
	var errs []error
	camel := map[string]string{}
	props, _ := d.ContentSchema["properties"].(map[string]any)
	for name := range props {
		c := camelCase(name)
		if other, ok := camel[c]; ok {
			errs = append(errs, fmt.Errorf("properties %q and %q are both %q in GraphQL", name, other, c))
		}
		camel[c] = name
	}
	walkProperties(d.ContentSchema, "", func(path string, prop map[string]any) {
		name := path[strings.LastIndex(path, "/")+1:]
		if !snakeRE.MatchString(name) {
			errs = append(errs, fmt.Errorf("%s: property name is not snake_case", path))
		}
		if desc, _ := prop["description"].(string); desc == "" {
			errs = append(errs, fmt.Errorf("%s: no description", path))
		}
	})
	return errors.Join(errs...)
}

// walkProperties calls fn for every property declared in schema or in the
// schemas nested under it (items, additionalProperties, $defs, prefixItems).
func walkProperties(schema map[string]any, path string, fn func(path string, prop map[string]any)) {
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		if prop, ok := p.(map[string]any); ok {
			fn(path+"/"+name, prop)
			walkProperties(prop, path+"/"+name, fn)
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if sub, ok := schema[key].(map[string]any); ok {
			walkProperties(sub, path+"/"+key, fn)
		}
	}
	for _, group := range []string{"$defs", "prefixItems"} {
		switch subs := schema[group].(type) {
		case map[string]any:
			for name, sub := range subs {
				if sub, ok := sub.(map[string]any); ok {
					walkProperties(sub, path+"/"+group+"/"+name, fn)
				}
			}
		case []any:
			for i, sub := range subs {
				if sub, ok := sub.(map[string]any); ok {
					walkProperties(sub, fmt.Sprintf("%s/%s/%d", path, group, i), fn)
				}
			}
		}
	}
}

// camelCase turns target_gene into targetGene, as the GraphQL generator does.
func camelCase(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// checkMerge: every pointer names a declared property of the right type:
// strings for text_fields, arrays for append_only_arrays.
func checkMerge(d document) error {
	var errs []error
	for _, group := range []struct {
		key, want string
		ptrs      []string
	}{{"text_fields", "string", d.Merge.TextFields}, {"append_only_arrays", "array", d.Merge.AppendOnlyArrays}} {
		for i, ptr := range group.ptrs {
			if slices.Contains(group.ptrs[:i], ptr) {
				errs = append(errs, fmt.Errorf("merge.%s: %s listed twice", group.key, ptr))
			}
			prop, err := resolveProperty(d.ContentSchema, ptr)
			if err != nil {
				errs = append(errs, fmt.Errorf("merge.%s: %w", group.key, err))
			} else if prop["type"] != group.want {
				errs = append(errs, fmt.Errorf("merge.%s: %s is %v, want %s", group.key, ptr, prop["type"], group.want))
			}
		}
	}
	return errors.Join(errs...)
}

// resolveProperty follows a JSON pointer into content through the schema's
// nested "properties".
func resolveProperty(schema map[string]any, ptr string) (map[string]any, error) {
	if !strings.HasPrefix(ptr, "/") || ptr == "/" {
		return nil, fmt.Errorf("%q is not a JSON pointer to a property", ptr)
	}
	cur := schema
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		props, _ := cur["properties"].(map[string]any)
		next, ok := props[tok].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: no property %q in content_schema", ptr, tok)
		}
		cur = next
	}
	return cur, nil
}

// checkGraphQL: each enum annotation names a top-level string enum whose
// values stay distinct, valid GraphQL names once upper-cased.
func checkGraphQL(d document) error {
	if d.GraphQL == nil {
		return nil
	}
	var errs []error
	props, _ := d.ContentSchema["properties"].(map[string]any)
	for field, hint := range d.GraphQL.Fields {
		if !enumTypeRE.MatchString(hint.Enum) {
			errs = append(errs, fmt.Errorf("graphql.fields.%s: %q is not a GraphQL type name", field, hint.Enum))
		}
		values, err := enumValues(props, field)
		if err != nil {
			errs = append(errs, fmt.Errorf("graphql.fields.%s: %w", field, err))
			continue
		}
		seen := map[string]bool{}
		for _, v := range values {
			up := strings.ToUpper(v)
			if !graphqlNameRE.MatchString(up) || seen[up] {
				errs = append(errs, fmt.Errorf("graphql.fields.%s: value %q is not a distinct GraphQL enum value when upper-cased", field, v))
			}
			seen[up] = true
		}
	}
	return errors.Join(errs...)
}

// enumValues returns the values of a top-level string enum property.
func enumValues(props map[string]any, field string) ([]string, error) {
	prop, ok := props[field].(map[string]any)
	if !ok {
		return nil, errors.New("no such property in content_schema")
	}
	list, _ := prop["enum"].([]any)
	if prop["type"] != "string" || len(list) == 0 {
		return nil, errors.New(`not a "type": "string" property with an "enum"`)
	}
	values := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("enum value %v is not a string", v)
		}
		values = append(values, s)
	}
	return values, nil
}

// checkEnumsAgree: a GraphQL enum used by several types has the same values in each.
func checkEnumsAgree(docs []document) error {
	var errs []error
	first := map[string][]string{}
	for _, d := range docs {
		if d.GraphQL == nil {
			continue
		}
		props, _ := d.ContentSchema["properties"].(map[string]any)
		for field, hint := range d.GraphQL.Fields {
			values, err := enumValues(props, field)
			if err != nil {
				continue // checkGraphQL reports it
			}
			if prev, ok := first[hint.Enum]; ok && !slices.Equal(prev, values) {
				errs = append(errs, fmt.Errorf("enum %s: %s.%s has values %v, elsewhere %v", hint.Enum, d.Type, field, values, prev))
			}
			first[hint.Enum] = values
		}
	}
	return errors.Join(errs...)
}
