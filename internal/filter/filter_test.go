package filter

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/problem"
)

func TestParseErrorsNameThePath(t *testing.T) {
	cases := map[string]string{
		`[1]`:                                 "filter type",
		`{}`:                                  "filter minProperties",
		`{"colour": 1}`:                       "filter.colour path",
		`{"content.a": {"between": 1}}`:       "filter.content.a.between operator",
		`{"content.a b": 1}`:                  "filter.content.a b path",
		`{"createdAt": {"gt": "yesterday"}}`:  "filter.createdAt.gt gt",
		`{"title": 5}`:                        "filter.title eq",
		`{"content.a": {"in": 5}}`:            "filter.content.a.in in",
		`{"content.a": {"exists": "yes"}}`:    "filter.content.a.exists exists",
		`{"and": []}`:                         "filter.and type",
		`{"or": [{"title": "x"}, 5]}`:         "filter.or[1] type",
		`{"not": {"isLatest": "yes"}}`:        "filter.not.isLatest eq",
		`{"content.tags": ["a"]}`:             "filter.content.tags type",
		`{"qualityScore": {"contains": [1]}}`: "filter.qualityScore.contains contains",
		`{"content.x[1a]": 1}`:                "filter.content.x[1a] path",
		`{"content": 5}`:                      "filter.content path",
		`{"title": {"match": ""}}`:            "filter.title.match match",
		`{"a": `:                              "filter json",
	}
	for in, want := range cases {
		_, err := Parse("filter", json.RawMessage(in))
		p, ok := problem.As(err)
		if !ok || p.Code != problem.ValidationFailed {
			t.Errorf("%s: got %v, want a validation problem", in, err)
			continue
		}
		found := false
		for _, d := range p.Details {
			if d.Path+" "+d.Constraint == want {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want %q among %+v", in, want, p.Details)
		}
	}
}

func TestParseLimits(t *testing.T) {
	deep := strings.Repeat(`{"not":`, MaxDepth+2) + `{"title":"x"}` + strings.Repeat("}", MaxDepth+2)
	if _, err := Parse("filter", json.RawMessage(deep)); err == nil || !strings.Contains(err.Error(), "deep") {
		t.Errorf("deep filter: %v", err)
	}
	var terms []string
	for i := 0; i < MaxTerms+5; i++ {
		terms = append(terms, `{"title":"x"}`)
	}
	if _, err := Parse("filter", json.RawMessage(`{"and":[`+strings.Join(terms, ",")+`]}`)); err == nil || !strings.Contains(err.Error(), "comparisons") {
		t.Errorf("wide filter: %v", err)
	}
}

// Values only ever reach SQL as parameters: no part of a filter appears in the text.
func TestSQLHasNoValues(t *testing.T) {
	in := `{"or":[{"title":{"match":"'; DROP TABLE artifacts; --"}},{"content.x":{"in":["'; --"]}},{"content":{"a":{"b":"x'y"}}}]}`
	e, err := Parse("filter", json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	b := &Builder{}
	sql := b.SQL(e, "a")
	if strings.ContainsAny(sql, "';") || strings.Contains(sql, "DROP") {
		t.Errorf("SQL carries a value: %s", sql)
	}
	if len(b.Args) == 0 {
		t.Error("no parameters")
	}
}

var placeholderRE = regexp.MustCompile(`\$[0-9]+`)

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"title":"x"}`, `{"content.a[0].b":{"gte":1,"lt":"z"}}`, `{"or":[{"not":{"id":"a"}}]}`,
		`{"content":{"a":{"in":[1,"2",null]}}}`, `{"createdAt":{"gt":"2026-01-01"}}`, `{"content.t":{"contains":{"a":[1]}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse("filter", json.RawMessage(s))
		if err != nil {
			if _, ok := problem.As(err); !ok {
				t.Fatalf("Parse(%q) returned a non-problem error %v", s, err)
			}
			return
		}
		b := &Builder{}
		sql := b.SQL(e, "a")
		used := map[string]bool{}
		for _, m := range placeholderRE.FindAllString(sql, -1) {
			used[m] = true
		}
		if len(used) != len(b.Args) {
			t.Fatalf("Parse(%q): %d placeholders for %d args in %s", s, len(used), len(b.Args), sql)
		}
	})
}
