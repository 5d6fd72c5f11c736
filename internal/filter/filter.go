// Package filter is the JSON filter language of `artifacts` and `search`: a small,
// documented grammar over envelope fields and content paths, compiled to SQL with
// every value passed as a parameter.
//
// Grammar (a filter is a JSON object; its keys are ANDed):
//
//	{"<path>": <scalar>}                   equality shorthand
//	{"<path>": {"<op>": <value>, ...}}     operators, ANDed
//	{"and": [<filter>, ...]}  {"or": [<filter>, ...]}  {"not": <filter>}
//
// Paths are envelope fields (id, title, createdBy, createdAt, updatedAt,
// lifecycleState, qualityScore, isLatest, contentHash) or content paths
// ("content.target_gene", "content.evidence_for[0].pmid"). Operators: eq, ne, gt,
// gte, lt, lte, in, nin, exists, contains (JSON containment), match
// (case-insensitive substring).
package filter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/scidex/substrate/internal/problem"
)

// Limits keep a hostile filter from costing more to plan than to run.
const (
	MaxDepth = 8
	MaxTerms = 64
	MaxIn    = 500
)

// Op is a comparison operator.
type Op string

// The operators of the language.
const (
	OpEq       Op = "eq"
	OpNe       Op = "ne"
	OpGt       Op = "gt"
	OpGte      Op = "gte"
	OpLt       Op = "lt"
	OpLte      Op = "lte"
	OpIn       Op = "in"
	OpNin      Op = "nin"
	OpExists   Op = "exists"
	OpContains Op = "contains"
	OpMatch    Op = "match"
)

var ops = map[Op]bool{OpEq: true, OpNe: true, OpGt: true, OpGte: true, OpLt: true, OpLte: true,
	OpIn: true, OpNin: true, OpExists: true, OpContains: true, OpMatch: true}

// Expr is a parsed filter: a boolean combination of comparisons.
type Expr struct {
	And  []*Expr
	Or   []*Expr
	Not  *Expr
	Cmp  *Comparison
	path string // where in the filter document this node came from, for errors
}

// Comparison tests one path with one operator.
type Comparison struct {
	Path  Path
	Op    Op
	Value json.RawMessage
	at    string
}

// Path is either an envelope field or a path into content.
type Path struct {
	Field   string   // envelope field name, "" for a content path
	Content []string // content path tokens (keys and array indices)
	Source  string   // as written
}

var (
	segmentRE = regexp.MustCompile(`^([A-Za-z0-9_-]{1,64})((?:\[\d{1,6}\])*)$`)
	indexRE   = regexp.MustCompile(`\[(\d{1,6})\]`)
)

// EnvelopeFields are the filterable envelope fields and their SQL kinds.
var EnvelopeFields = map[string]string{
	"id": "text", "title": "text", "createdBy": "text", "lifecycleState": "text", "contentHash": "text",
	"createdAt": "time", "updatedAt": "time", "qualityScore": "number", "isLatest": "bool",
}

// Parse reads a filter document. Errors are VALIDATION_FAILED problems whose
// paths start at root (e.g. "filter").
func Parse(root string, raw json.RawMessage) (*Expr, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, problem.Invalid(problem.Field(root, "json", "is not valid JSON: "+err.Error(), nil))
	}
	p := &parser{}
	e := p.expr(root, v, 0)
	if len(p.problems) > 0 {
		return nil, problem.Invalid(p.problems...)
	}
	return e, nil
}

type parser struct {
	problems []problem.Detail
	terms    int
}

func (p *parser) fail(path, constraint, msg string, v any) {
	p.problems = append(p.problems, problem.Field(path, constraint, msg, v))
}

func (p *parser) expr(at string, v any, depth int) *Expr {
	if depth > MaxDepth {
		p.fail(at, "maxDepth", fmt.Sprintf("filters nest at most %d deep", MaxDepth), nil)
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		p.fail(at, "type", "a filter must be a JSON object", v)
		return nil
	}
	if len(obj) == 0 {
		p.fail(at, "minProperties", "a filter needs at least one condition", v)
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a stable order makes the SQL, and its plan cache, stable
	e := &Expr{path: at}
	for _, k := range keys {
		sub := at + "." + k
		switch k {
		case "and", "or":
			list, ok := obj[k].([]any)
			if !ok || len(list) == 0 {
				p.fail(sub, "type", fmt.Sprintf("%q takes a non-empty array of filters", k), obj[k])
				continue
			}
			node := &Expr{path: sub}
			for i, item := range list {
				if c := p.expr(fmt.Sprintf("%s[%d]", sub, i), item, depth+1); c != nil {
					if k == "and" {
						node.And = append(node.And, c)
					} else {
						node.Or = append(node.Or, c)
					}
				}
			}
			e.And = append(e.And, node)
		case "not":
			if c := p.expr(sub, obj[k], depth+1); c != nil {
				e.And = append(e.And, &Expr{Not: c, path: sub})
			}
		default:
			e.And = append(e.And, p.comparisons(sub, k, obj[k])...)
		}
	}
	return e
}

func (p *parser) comparisons(at, key string, v any) []*Expr {
	return p.comparisonsIn(at, key, v, key == "content")
}

func (p *parser) comparisonsIn(at, key string, v any, nested bool) []*Expr {
	// Nested form: {"content": {"target_gene": "TREM2"}} is "content.target_gene",
	// which also lets GraphQL literals (whose keys cannot contain dots) say it.
	// Under the plain "content" key, nesting continues until a scalar or an object
	// holding an operator; a dotted key always takes operators.
	if obj, ok := v.(map[string]any); ok && nested && !hasOperator(obj) && len(obj) > 0 {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []*Expr
		for _, k := range keys {
			out = append(out, p.comparisonsIn(at+"."+k, key+"."+k, obj[k], true)...)
		}
		return out
	}
	if key == "content" {
		p.fail(at, "path", `name a content field: {"content": {"target_gene": "TREM2"}} or "content.target_gene"`, v)
		return nil
	}
	path, err := ParsePath(key)
	if err != nil {
		p.fail(at, "path", err.Error(), key)
		return nil
	}
	opsObj, isObj := v.(map[string]any)
	if !isObj {
		if _, isArr := v.([]any); isArr {
			p.fail(at, "type", `compare arrays with an operator: {"eq": [...]}, {"in": [...]} or {"contains": [...]}`, v)
			return nil
		}
		return p.comparison(at, path, OpEq, v)
	}
	names := make([]string, 0, len(opsObj))
	for k := range opsObj {
		if !ops[Op(k)] {
			p.fail(at+"."+k, "operator", fmt.Sprintf("unknown operator %q (want one of eq, ne, gt, gte, lt, lte, in, nin, exists, contains, match; compare objects with {\"eq\": {...}})", k), nil)
			continue
		}
		names = append(names, k)
	}
	sort.Strings(names)
	var out []*Expr
	for _, name := range names {
		out = append(out, p.comparison(at+"."+name, path, Op(name), opsObj[name])...)
	}
	return out
}

func (p *parser) comparison(at string, path Path, op Op, v any) []*Expr {
	p.terms++
	if p.terms > MaxTerms {
		if p.terms == MaxTerms+1 {
			p.fail(at, "maxTerms", fmt.Sprintf("a filter has at most %d comparisons", MaxTerms), nil)
		}
		return nil
	}
	kind := "json"
	if path.Field != "" {
		kind = EnvelopeFields[path.Field]
	}
	if msg := checkValue(kind, op, v); msg != "" {
		p.fail(at, string(op), msg, v)
		return nil
	}
	raw, _ := json.Marshal(v)
	return []*Expr{{Cmp: &Comparison{Path: path, Op: op, Value: raw, at: at}, path: at}}
}

func hasOperator(obj map[string]any) bool {
	for k := range obj {
		if ops[Op(k)] {
			return true
		}
	}
	return false
}

// ParsePath reads an envelope field name or a "content.a.b[0]" path.
func ParsePath(s string) (Path, error) {
	if _, ok := EnvelopeFields[s]; ok {
		return Path{Field: s, Source: s}, nil
	}
	rest, ok := strings.CutPrefix(s, "content.")
	if !ok {
		return Path{}, fmt.Errorf("unknown field %q: use an envelope field (%s) or a content path like \"content.target_gene\"", s, envelopeList())
	}
	var toks []string
	for _, seg := range strings.Split(rest, ".") {
		m := segmentRE.FindStringSubmatch(seg)
		if m == nil {
			return Path{}, fmt.Errorf("content path %q: segment %q must be a name of letters, digits, '_' or '-', optionally followed by [index]", s, seg)
		}
		toks = append(toks, m[1])
		for _, ix := range indexRE.FindAllStringSubmatch(m[2], -1) {
			toks = append(toks, ix[1])
		}
	}
	if len(toks) > 16 {
		return Path{}, fmt.Errorf("content path %q is deeper than 16", s)
	}
	return Path{Content: toks, Source: s}, nil
}

func envelopeList() string {
	names := make([]string, 0, len(EnvelopeFields))
	for k := range EnvelopeFields {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// checkValue returns why v cannot be compared with op on a field of kind, or "".
func checkValue(kind string, op Op, v any) string {
	switch op {
	case OpExists:
		if _, ok := v.(bool); !ok {
			return "exists takes true or false"
		}
		return ""
	case OpIn, OpNin:
		list, ok := v.([]any)
		if !ok {
			return string(op) + " takes an array"
		}
		if len(list) > MaxIn {
			return fmt.Sprintf("%s takes at most %d values", op, MaxIn)
		}
		for _, item := range list {
			if msg := checkScalar(kind, item); msg != "" {
				return msg
			}
		}
		return ""
	case OpContains:
		if kind != "json" {
			return "contains applies to content paths only"
		}
		return ""
	case OpMatch:
		s, ok := v.(string)
		if !ok || s == "" {
			return "match takes a non-empty string"
		}
		if kind != "json" && kind != "text" {
			return "match applies to text fields and content paths"
		}
		return ""
	case OpGt, OpGte, OpLt, OpLte:
		switch v.(type) {
		case json.Number, string:
		default:
			return string(op) + " takes a number or a string"
		}
	}
	return checkScalar(kind, v)
}

func checkScalar(kind string, v any) string {
	switch kind {
	case "text":
		if _, ok := v.(string); !ok {
			return "this field holds text: compare it with a string"
		}
	case "time":
		s, ok := v.(string)
		if _, err := ParseTime(s); !ok || err != nil {
			return "this field holds a time: compare it with an RFC 3339 string such as \"2026-01-02T15:04:05Z\""
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			return "this field holds a number: compare it with a number"
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			return "this field holds true or false"
		}
	}
	return ""
}

// ParseTime reads an RFC 3339 time or a bare date (midnight UTC).
func ParseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02", s)
}
