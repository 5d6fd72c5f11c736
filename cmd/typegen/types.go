package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/scidex/substrate/internal/schema"
)

// typeInfo is one default type as the generator sees it.
type typeInfo struct {
	Name        string // artifact type, e.g. tool_call
	GraphQL     string // GraphQL and Go type name, e.g. ToolCall
	Description string
	Fields      []*fieldInfo
	Skipped     []string // content properties reachable through `content` only
}

// fieldInfo is one content property exposed as a typed field.
type fieldInfo struct {
	Key         string // content key, snake_case
	GraphQL     string // camelCase field name
	Description string
	SDLType     string // GraphQL type
	Accessor    string // model.Base helper that reads it
	GoType      string // the accessor's result type
	Enum        string // GraphQL enum name, for enum fields
	EnumValues  []string
}

// contentSchema is the part of a type's content schema the generator reads.
type contentSchema struct {
	Properties map[string]property `json:"properties"`
}

type property struct {
	Type        any       `json:"type"`
	Format      string    `json:"format"`
	Enum        []any     `json:"enum"`
	Items       *property `json:"items"`
	Description string    `json:"description"`
}

var (
	keyRE  = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	enumRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
)

func loadTypes(dir string) ([]*typeInfo, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*typeInfo
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		// The server's own parser: a document it would refuse fails
		// generation too, and both read the same fields the same way.
		d, err := schema.ParseDocument(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		var cs contentSchema
		if len(d.ContentSchema) > 0 {
			if err := json.Unmarshal(d.ContentSchema, &cs); err != nil {
				return nil, fmt.Errorf("%s: content_schema: %w", f, err)
			}
		}
		t := &typeInfo{Name: d.Type, GraphQL: pascal(d.Type), Description: d.Description}
		keys := make([]string, 0, len(cs.Properties))
		for k := range cs.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !keyRE.MatchString(k) {
				t.Skipped = append(t.Skipped, k)
				continue
			}
			var enum string
			if d.GraphQL != nil {
				enum = d.GraphQL.Fields[k].Enum
			}
			fi, err := mapField(k, cs.Properties[k], enum)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", f, k, err)
			}
			t.Fields = append(t.Fields, fi)
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func mapField(key string, p property, enum string) (*fieldInfo, error) {
	f := &fieldInfo{Key: key, GraphQL: camel(key), Description: p.Description}
	typ := jsonType(p.Type)
	switch {
	case enum != "":
		if typ != "string" || len(p.Enum) == 0 {
			return nil, fmt.Errorf("graphql enum %s needs a string enum", enum)
		}
		for _, v := range p.Enum {
			s, ok := v.(string)
			if !ok || !enumRE.MatchString(strings.ToUpper(s)) {
				return nil, fmt.Errorf("enum value %v is not a GraphQL name when upper-cased", v)
			}
			f.EnumValues = append(f.EnumValues, s)
		}
		f.Enum, f.SDLType, f.Accessor, f.GoType = enum, enum, "enum", "*"+enum
	case typ == "string" && p.Format == "ref":
		f.SDLType, f.Accessor, f.GoType = "Ref", "str", "*string"
	case typ == "string" && p.Format == "date-time":
		f.SDLType, f.Accessor, f.GoType = "DateTime", "dateTime", "*time.Time"
	case typ == "string":
		f.SDLType, f.Accessor, f.GoType = "String", "str", "*string"
	case typ == "integer":
		f.SDLType, f.Accessor, f.GoType = "Int", "integer", "*int"
	case typ == "number":
		f.SDLType, f.Accessor, f.GoType = "Float", "number", "*float64"
	case typ == "boolean":
		f.SDLType, f.Accessor, f.GoType = "Boolean", "boolean", "*bool"
	case typ == "array" && p.Items != nil && jsonType(p.Items.Type) == "string":
		f.SDLType, f.Accessor, f.GoType = "[String!]", "strings", "[]string"
		if p.Items.Format == "ref" {
			f.SDLType = "[Ref!]"
		}
	default:
		f.SDLType, f.Accessor, f.GoType = "JSON", "json", "JSON"
	}
	return f, nil
}

// jsonType returns the one non-null JSON type a property declares, or "".
func jsonType(t any) string {
	switch v := t.(type) {
	case string:
		return v
	case []any:
		var one string
		for _, x := range v {
			if s, _ := x.(string); s != "null" {
				if one != "" {
					return ""
				}
				one = s
			}
		}
		return one
	}
	return ""
}

// dropReserved removes content fields whose names the Artifact interface uses;
// they stay reachable through `content`.
func (t *typeInfo) dropReserved(reserved map[string]bool) {
	kept := t.Fields[:0]
	for _, f := range t.Fields {
		if reserved[f.GraphQL] || strings.EqualFold(f.GraphQL, "base") {
			t.Skipped = append(t.Skipped, f.Key)
			continue
		}
		kept = append(kept, f)
	}
	t.Fields = kept
}

func pascal(s string) string {
	parts := strings.Split(s, "_")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

func camel(s string) string {
	p := pascal(s)
	return strings.ToLower(p[:1]) + p[1:]
}
