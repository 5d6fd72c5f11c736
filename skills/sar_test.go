package skills_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
)

// chem.sar_table's refusals, through runSkill, before anything runs: each
// bad row named by its index, with the value received and a suggestion
// where there is one; a series over the caps named by its limit.
func TestSARTableRefusesBadRowsBeforeAnythingRuns(t *testing.T) {
	e := apitest.New(t)
	alice := apitest.Contributor(t, "alice")
	const q = `mutation($in: JSON!) { runSkill(input: {name: "chem.sar_table", inputs: $in}) { __typename ... on ValidationFailed { message problems { path constraint message valueReceived suggestion } } } }`
	type refusal struct {
		Typename string `json:"__typename"`
		Message  string
		Problems []struct {
			Path, Constraint, Message string
			ValueReceived             json.RawMessage
			Suggestion                *string
		}
	}
	row := func(id, smiles string, act any) map[string]any {
		m := map[string]any{"id": id, "smiles": smiles}
		if act != nil {
			m["activity"] = act
		}
		return m
	}
	nM := func(v float64) map[string]any { return map[string]any{"value": v, "unit": "nM"} }
	many := make([]any, 201)
	for i := range many {
		many[i] = row(fmt.Sprint("c", i), "CCO", nM(5))
	}
	cases := []struct {
		why              string
		in               map[string]any
		path, constraint string
		message          string
		value            string
		suggestion       string
	}{
		{"an unclosed ring, third row", map[string]any{"compounds": []any{row("a", "CCO", nM(1)), row("b", "CCN", nM(2)), row("c", "c1ccccc", nM(3))}},
			"compounds[2].smiles", "smiles_syntax", `ring closure 1 is opened and never closed`, `"c1ccccc"`, ""},
		{"a script for a SMILES", map[string]any{"compounds": []any{row("a", "<script>alert(1)</script>", nM(1))}},
			"compounds[0].smiles", "smiles_syntax", `is not a valid SMILES: at character 1`, `"<script>alert(1)</script>"`, ""},
		{"nanometres for nanomolar", map[string]any{"compounds": []any{row("a", "CCO", map[string]any{"value": 5, "unit": "nm"})}},
			"compounds[0].activity.unit", "", `want a molar concentration`, `"nm"`, "nM"},
		{"a series over the cap", map[string]any{"compounds": many},
			"compounds", "", `200`, ``, ""},
	}
	for _, c := range cases {
		t.Run(c.why, func(t *testing.T) {
			var out map[string]refusal
			e.OK(t, alice, q, map[string]any{"in": c.in}, &out)
			r := out["runSkill"]
			if r.Typename != "ValidationFailed" || len(r.Problems) == 0 {
				t.Fatalf("not refused: %+v", r)
			}
			p := r.Problems[0]
			if p.Path != "input.inputs."+c.path || c.constraint != "" && p.Constraint != c.constraint || !strings.Contains(p.Message, c.message) {
				t.Fatalf("problem %+v, want input.inputs.%s (%s) saying %q", p, c.path, c.constraint, c.message)
			}
			var got any
			_ = json.Unmarshal(p.ValueReceived, &got)
			if c.value != "" && fmt.Sprintf("%q", got) != c.value {
				t.Errorf("valueReceived %s, want %s", p.ValueReceived, c.value)
			}
			if c.suggestion != "" && (p.Suggestion == nil || *p.Suggestion != c.suggestion) {
				t.Errorf("suggestion %v, want %q", p.Suggestion, c.suggestion)
			}
			t.Logf("%s: %s", p.Path, p.Message)
		})
	}
}
