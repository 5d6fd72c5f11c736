package filter

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Builder accumulates SQL parameters; placeholders continue from whatever the
// enclosing query already uses.
type Builder struct {
	Args []any
}

// Arg adds a parameter and returns its placeholder.
func (b *Builder) Arg(v any) string {
	b.Args = append(b.Args, v)
	return "$" + strconv.Itoa(len(b.Args))
}

// columns maps envelope fields to the artifacts table's columns.
var columns = map[string]string{
	"id": "id", "title": "title", "createdBy": "created_by", "lifecycleState": "lifecycle_state",
	"contentHash": "content_hash", "createdAt": "created_at", "updatedAt": "updated_at",
	"qualityScore": "quality_score", "isLatest": "is_latest",
}

// SQL compiles e to a boolean SQL expression over the artifacts table aliased as
// alias. A nil filter is "true".
func (b *Builder) SQL(e *Expr, alias string) string {
	if e == nil {
		return "true"
	}
	switch {
	case e.Cmp != nil:
		return b.comparison(e.Cmp, alias)
	case e.Not != nil:
		return "NOT (" + b.SQL(e.Not, alias) + ")"
	case len(e.Or) > 0:
		parts := make([]string, len(e.Or))
		for i, c := range e.Or {
			parts[i] = "(" + b.SQL(c, alias) + ")"
		}
		return strings.Join(parts, " OR ")
	case len(e.And) > 0:
		parts := make([]string, len(e.And))
		for i, c := range e.And {
			parts[i] = "(" + b.SQL(c, alias) + ")"
		}
		return strings.Join(parts, " AND ")
	}
	return "true"
}

var sqlOps = map[Op]string{OpEq: "=", OpNe: "IS DISTINCT FROM", OpGt: ">", OpGte: ">=", OpLt: "<", OpLte: "<="}

func (b *Builder) comparison(c *Comparison, alias string) string {
	if c.Path.Field != "" {
		return b.envelope(c, alias+"."+columns[c.Path.Field], EnvelopeFields[c.Path.Field])
	}
	return b.content(c, alias+".content")
}

func (b *Builder) envelope(c *Comparison, col, kind string) string {
	switch c.Op {
	case OpExists:
		var want bool
		_ = json.Unmarshal(c.Value, &want)
		if want {
			return col + " IS NOT NULL"
		}
		return col + " IS NULL"
	case OpMatch:
		var s string
		_ = json.Unmarshal(c.Value, &s)
		return col + " ILIKE " + b.Arg("%"+likeEscape(s)+"%")
	case OpIn, OpNin:
		var items []json.RawMessage
		_ = json.Unmarshal(c.Value, &items)
		vals := make([]any, len(items))
		for i, it := range items {
			vals[i] = typed(kind, it)
		}
		expr := col + " = ANY(" + b.Arg(vals) + "::" + sqlType(kind) + "[])"
		if c.Op == OpNin {
			return "NOT coalesce(" + expr + ", false)"
		}
		return expr
	}
	return col + " " + sqlOps[c.Op] + " " + b.Arg(typed(kind, c.Value)) + "::" + sqlType(kind)
}

func (b *Builder) content(c *Comparison, col string) string {
	if c.Op == OpEq && !hasIndex(c.Path.Content) {
		// Containment lets the GIN index on content answer equality.
		return col + " @> " + b.Arg(nest(c.Path.Content, c.Value)) + "::jsonb"
	}
	path := b.Arg(c.Path.Content)
	at := col + " #> " + path + "::text[]"
	switch c.Op {
	case OpExists:
		var want bool
		_ = json.Unmarshal(c.Value, &want)
		if want {
			return at + " IS NOT NULL"
		}
		return at + " IS NULL"
	case OpContains:
		return at + " @> " + b.Arg(string(c.Value)) + "::jsonb"
	case OpMatch:
		var s string
		_ = json.Unmarshal(c.Value, &s)
		return col + " #>> " + path + "::text[] ILIKE " + b.Arg("%"+likeEscape(s)+"%")
	case OpIn, OpNin:
		var items []json.RawMessage
		_ = json.Unmarshal(c.Value, &items)
		vals := make([]string, len(items))
		for i, it := range items {
			vals[i] = string(it)
		}
		expr := at + " = ANY(" + b.Arg(vals) + "::jsonb[])"
		if c.Op == OpNin {
			return "NOT coalesce(" + expr + ", false)"
		}
		return expr
	case OpGt, OpGte, OpLt, OpLte:
		// jsonb orders values of different JSON types against each other; compare
		// only values of the same type as the operand.
		typ := "string"
		if len(c.Value) > 0 && c.Value[0] != '"' {
			typ = "number"
		}
		return "(jsonb_typeof(" + at + ") = '" + typ + "' AND " + at + " " + sqlOps[c.Op] + " " + b.Arg(string(c.Value)) + "::jsonb)"
	}
	return at + " " + sqlOps[c.Op] + " " + b.Arg(string(c.Value)) + "::jsonb"
}

func hasIndex(toks []string) bool {
	for _, t := range toks {
		if _, err := strconv.Atoi(t); err == nil {
			return true
		}
	}
	return false
}

// nest builds {"a":{"b":value}} for the path a.b.
func nest(toks []string, value json.RawMessage) string {
	out := string(value)
	for i := len(toks) - 1; i >= 0; i-- {
		k, _ := json.Marshal(toks[i])
		out = "{" + string(k) + ":" + out + "}"
	}
	return out
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func sqlType(kind string) string {
	switch kind {
	case "time":
		return "timestamptz"
	case "number":
		return "float8"
	case "bool":
		return "boolean"
	}
	return "text"
}

// typed decodes a checked JSON value into the Go value pgx sends for kind.
func typed(kind string, raw json.RawMessage) any {
	switch kind {
	case "time":
		var s string
		_ = json.Unmarshal(raw, &s)
		t, _ := ParseTime(s)
		return t
	case "number":
		var f float64
		_ = json.Unmarshal(raw, &f)
		return f
	case "bool":
		var v bool
		_ = json.Unmarshal(raw, &v)
		return v
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// Describe renders e back as text, for logs and for tests.
func Describe(e *Expr) string {
	if e == nil {
		return "true"
	}
	b := &Builder{}
	sql := b.SQL(e, "a")
	return fmt.Sprintf("%s %v", sql, b.Args)
}

// Mentions reports whether the filter compares the envelope field named field
// anywhere, so callers know not to add their default for it.
func Mentions(e *Expr, field string) bool {
	if e == nil {
		return false
	}
	if e.Cmp != nil {
		return e.Cmp.Path.Field == field
	}
	if e.Not != nil && Mentions(e.Not, field) {
		return true
	}
	for _, c := range append(append([]*Expr{}, e.And...), e.Or...) {
		if Mentions(c, field) {
			return true
		}
	}
	return false
}
