package dispatch_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// A skill's refusal, through runSkill and invokeTool, is one a scientist can
// act on: every problem names the field as the caller wrote it (indices
// included, rooted at the argument the caller used: input.inputs for
// runSkill, input.args for invokeTool, in the top-level message too), what
// was received, what is wanted in the caller's terms, and a suggestion
// where one exists.
func TestSkillRefusalsCanBeActedOn(t *testing.T) {
	e := env(t, nil)
	const fields = `message problems { path constraint message valueReceived suggestion }`
	runQ := `mutation($n: String!, $in: JSON!) { runSkill(input: {name: $n, inputs: $in}) { __typename ... on ValidationFailed { ` + fields + ` } } }`
	invokeQ := `mutation($n: String!, $in: JSON!) { invokeTool(input: {name: $n, args: $in}) { __typename ... on ValidationFailed { ` + fields + ` } } }`
	type refusal struct {
		Typename string `json:"__typename"`
		Message  string
		Problems []struct {
			Path, Constraint, Message string
			ValueReceived             json.RawMessage
			Suggestion                *string
		}
	}
	nca := func(change func(map[string]any)) map[string]any {
		m := map[string]any{"route": "oral", "auc_method": "linear",
			"times":          map[string]any{"values": []any{0, 1, 2, 4, 6, 8}, "unit": "h"},
			"concentrations": map[string]any{"values": []any{0, 5, 4, 3, 2, 1}, "unit": "mg/L"},
			"dose":           map[string]any{"value": 100, "unit": "mg"}}
		change(m)
		return m
	}
	mgkg := map[string]any{"value": 5, "unit": "mg/kg"}
	fih := func(change func(map[string]any)) map[string]any {
		m := map[string]any{"route": "km_ratio", "studies": []any{
			map[string]any{"species": "dog", "noael": mgkg}, map[string]any{"species": "rat", "noael": mgkg}}}
		change(m)
		return m
	}
	cases := []struct {
		why, skill        string
		in                map[string]any
		path, constraint  string
		message           string
		value, suggestion string
	}{
		{"an option pk.nca does not have", "pk.nca", nca(func(m map[string]any) { m["interval"] = 12 }),
			"interval", "unknown_field", `unknown field "interval": expected one of auc_method, blq_rule,`, `12`, ""},
		{"a number given as a string", "tox.fih_dose_projection", fih(func(m map[string]any) { m["safety_factor"] = "10" }),
			"safety_factor", "type", `expected a number, got the string "10"`, `"10"`, "10"},
		{"a list given as a string", "qa.check_readiness", map[string]any{"sop_id": "SOP-1", "version": "1", "as_of": "2026-01-01", "required_approval_roles": "author"},
			"required_approval_roles", "type", `expected a list of strings, got the string "author"`, `"author"`, `["author"]`},
		{"an element's field, with its index", "tox.fih_dose_projection", fih(func(m map[string]any) { m["studies"].([]any)[1].(map[string]any)["species"] = 7 }),
			"studies[1].species", "type", `expected a string, got the number 7`, `7`, `"7"`},
		{"a problem raised by the calculation carries the value", "tox.fih_dose_projection",
			fih(func(m map[string]any) {
				m["studies"].([]any)[1].(map[string]any)["noael"] = map[string]any{"value": -5, "unit": "mg/kg"}
			}),
			"studies[1].noael", "not_positive", "NOAEL -5 mg/kg must be positive", `{"unit":"mg/kg","value":-5}`, ""},
		{"a macaque by its own name", "tox.fih_dose_projection", fih(func(m map[string]any) { m["studies"].([]any)[1].(map[string]any)["species"] = "rhesus" }),
			"studies[1].species", "unknown_species", `species "rhesus" is not a Table 1 name`, `"rhesus"`, "monkey"},
		{"a species in capitals", "tox.fih_dose_projection", fih(func(m map[string]any) { m["studies"].([]any)[0].(map[string]any)["species"] = "Rat" }),
			"studies[0].species", "unknown_species", `did you mean "rat"?`, `"Rat"`, "rat"},
		{"lambda_z_points beyond the samples", "pk.nca", nca(func(m map[string]any) { m["lambda_z_points"] = 9 }),
			"lambda_z_points", "lambda_z_points_out_of_range", "is 9 but only 4 positive samples follow Tmax (1 h): expected 3..4", `9`, ""},
	}
	for _, c := range cases {
		for _, via := range []struct{ q, root, field string }{{runQ, "input.inputs.", "runSkill"}, {invokeQ, "input.args.", "invokeTool"}} {
			t.Run(c.why+"/"+via.field, func(t *testing.T) {
				var out map[string]refusal
				e.OK(t, alice(t), via.q, map[string]any{"n": c.skill, "in": c.in}, &out)
				r := out[via.field]
				if r.Typename != "ValidationFailed" || len(r.Problems) == 0 {
					t.Fatalf("not refused: %+v", r)
				}
				p := r.Problems[0]
				if p.Path != via.root+c.path || p.Constraint != c.constraint || !strings.Contains(p.Message, c.message) {
					t.Fatalf("problem %+v, want %s%s (%s) saying %q", p, via.root, c.path, c.constraint, c.message)
				}
				if got := compact(p.ValueReceived); got != c.value {
					t.Errorf("valueReceived %s, want %s", got, c.value)
				}
				if s := deref(p.Suggestion); s != c.suggestion {
					t.Errorf("suggestion %q, want %q", s, c.suggestion)
				}
				for _, q := range r.Problems {
					if !strings.HasPrefix(q.Path, via.root) || q.Path == via.root {
						t.Errorf("a problem at %q, not under %s", q.Path, via.root)
					}
				}
				if len(r.Problems) == 1 && r.Message != via.root+c.path+": "+p.Message {
					t.Errorf("message %q does not name the problem's path %s%s", r.Message, via.root, c.path)
				}
			})
		}
	}
}

// A terminal phase that is not falling is said as such, with the fitted
// slope and the points, and what to do.
func TestNCAFlatTerminalPhaseSaysTheSlopeIsNotFalling(t *testing.T) {
	e := env(t, nil)
	r := runSkill(t, alice(t), "pk.nca", map[string]any{"route": "oral", "auc_method": "linear", "figure": false,
		"times":          map[string]any{"values": []any{0, 1, 2, 4, 6, 8}, "unit": "h"},
		"concentrations": map[string]any{"values": []any{0, 5, 4, 4, 4, 4}, "unit": "mg/L"},
		"dose":           map[string]any{"value": 100, "unit": "mg"}}, e)
	if r.RunSkill.Typename != "SkillRun" || r.RunSkill.ToolCall.Status != "SUCCEEDED" {
		t.Fatalf("run: %+v", r.RunSkill)
	}
	var out struct{ Warnings []string }
	_ = json.Unmarshal(r.RunSkill.ToolCall.Result, &out)
	if len(out.Warnings) != 1 {
		t.Fatalf("warnings %q", out.Warnings)
	}
	for _, w := range []string{"the terminal phase is not falling", "slope 0 1/h", "λz = 0 1/h ≤ 0", "C = 4, 4, 4 mg/L", "add samples later in the terminal phase", "lambda_z_points"} {
		if !strings.Contains(out.Warnings[0], w) {
			t.Errorf("%q lacks %q", out.Warnings[0], w)
		}
	}
}

func compact(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
