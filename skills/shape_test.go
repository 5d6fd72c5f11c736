package skills

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scidex/substrate/runtimes"
)

// The argument checks refuse in the caller's terms: the field's full path
// as written (indices included), what was received, what is wanted ("a
// number", "a list of strings", "an object"), and a suggestion where one
// exists; never a Go type, never an empty path.
func TestChecksRefuseInTheCallersTerms(t *testing.T) {
	skills := map[string]Skill{}
	for _, s := range Catalog(Deps{}) {
		skills[s.Name] = s
	}
	cases := []struct {
		skill, why string
		change     func(map[string]any)
		path, code string
		message    []string
		value      string
		suggestion string
	}{
		{"pk.nca", "an option it does not have", setting("bioavailability", 12), "bioavailability", "unknown_field",
			[]string{`unknown field "bioavailability": expected one of auc_method, blq_rule, concentrations, dose, dose_times, duration, figure, lambda_z, lambda_z_points, lloq, molecular_weight, partial_aucs, profiles, route, subject, tau, times, urine`}, `12`, ""},
		{"pk.nca", "tau given as a bare number", setting("tau", 12), "tau", "unit_required",
			[]string{`12 is a bare number; a quantity needs its unit`}, `12`, ""},
		{"pk.nca", "a weighting it does not know", setting("lambda_z", map[string]any{"weighting": "1/x"}), "lambda_z.weighting", "unknown_weighting",
			[]string{`is "1/x": expected one of [uniform 1/y 1/y2]`}, `"1/x"`, ""},
		{"pk.nca", "an exclusion without a reason", setting("lambda_z", map[string]any{"exclude": []any{map[string]any{"time": map[string]any{"value": 5.1, "unit": "h"}, "reason": ""}}}),
			"lambda_z.exclude[0].reason", "exclusion_reason_required", []string{`say why the sample at 5.1 h`}, `""`, ""},
		{"pk.nca", "a partial AUC ending before it starts", setting("partial_aucs", []any{map[string]any{"start": map[string]any{"value": 12, "unit": "h"}, "end": map[string]any{"value": 2, "unit": "h"}}}),
			"partial_aucs[0].end", "bad_interval", []string{`is 2: expected a finite time after start (12 h)`}, `{"unit":"h","value":2}`, ""},
		{"pk.nca", "a partial AUC bound as a string", setting("partial_aucs", []any{map[string]any{"start": "0", "end": map[string]any{"value": 2, "unit": "h"}}}),
			"partial_aucs[0].start", "not_a_quantity", []string{`a string is not a quantity`}, `"0"`, ""},
		{"pk.nca", "a molar concentration without the molecular weight", setting("concentrations.unit", "umol/L"), "concentrations.unit", "molecular_weight_required",
			[]string{`is "umol/L", a molar concentration: give molecular_weight`}, `"umol/L"`, ""},
		{"pk.nca", "an infusion without its duration", setting("route", "iv_infusion"), "duration", "duration_required",
			[]string{`an IV infusion needs its duration`}, ``, ""},
		{"pk.nca", "an option misspelt", setting("lamda_z_points", 4), "lamda_z_points", "unknown_field",
			[]string{`did you mean "lambda_z_points"?`}, `4`, "lambda_z_points"},
		{"pk.nca", "an option in capitals", setting("AUC_METHOD", "linear"), "AUC_METHOD", "unknown_field",
			[]string{`did you mean "auc_method"?`}, `"linear"`, "auc_method"},
		{"pk.nca", "a whole number given as a string", setting("lambda_z_points", "3"), "lambda_z_points", "type",
			[]string{`expected a whole number, got the string "3"`}, `"3"`, "3"},
		{"pk.nca", "true given as a string", setting("figure", "false"), "figure", "type",
			[]string{`expected true or false, got the string "false"`}, `"false"`, "false"},
		{"pk.nca", "an unknown field in profile 1", func(m map[string]any) {
			p := map[string]any{}
			for _, k := range ncaProfileFields {
				if m[k] != nil {
					p[k] = m[k]
					delete(m, k)
				}
			}
			q := map[string]any{"subject": "2", "bioavailability": 24}
			for k, v := range p {
				q[k] = v
			}
			m["profiles"] = []any{p, q}
		}, "profiles[1].bioavailability", "unknown_field", []string{`unknown field "bioavailability"`}, `24`, ""},
		{"pk.nca", "a subject given as a number in profile 0", func(m map[string]any) {
			p := map[string]any{}
			for _, k := range ncaProfileFields {
				if m[k] != nil {
					p[k] = m[k]
					delete(m, k)
				}
			}
			p["subject"] = 1
			m["profiles"] = []any{p}
		}, "profiles[0].subject", "type", []string{`expected a string, got the number 1`}, `1`, `"1"`},
		{"tox.fih_dose_projection", "a number given as a string", setting("safety_factor", "10"), "safety_factor", "type",
			[]string{`expected a number, got the string "10"`}, `"10"`, "10"},
		{"tox.fih_dose_projection", "a list given as a string", setting("studies", "rat"), "studies", "type",
			[]string{`expected a list of objects, got the string "rat"`}, `"rat"`, ""},
		{"tox.fih_dose_projection", "an element's field of the wrong type", func(m map[string]any) {
			set(m, "studies.1.species", 7)
		}, "studies[1].species", "type", []string{`expected a string, got the number 7`}, `7`, `"7"`},
		{"tox.fih_dose_projection", "an unknown field in study 1", setting("studies.1.sex", "f"), "studies[1].sex", "unknown_field",
			[]string{`unknown field "sex": expected one of body_weight, noael, species`}, `"f"`, ""},
		{"tox.fih_dose_projection", "a species in capitals", setting("studies.0.species", "Rat"), "studies[0].species", "unknown_species",
			[]string{`species "Rat" is not a Table 1 name`, `did you mean "rat"?`}, `"Rat"`, "rat"},
		{"tox.fih_dose_projection", "a macaque by its own name", setting("studies.1.species", "rhesus"), "studies[1].species", "unknown_species",
			[]string{`species "rhesus" is not a Table 1 name`, `did you mean "monkey"?`}, `"rhesus"`, "monkey"},
		{"tox.fih_dose_projection", "a typo", setting("studies.0.species", "ratt"), "studies[0].species", "unknown_species",
			[]string{`did you mean "rat"?`}, `"ratt"`, "rat"},
		{"tox.fih_dose_projection", "a NOAEL that is not positive", setting("studies.0.noael", map[string]any{"value": -5, "unit": "mg/kg"}), "studies[0].noael", "not_positive",
			[]string{"NOAEL -5 mg/kg must be positive"}, `{"unit":"mg/kg","value":-5}`, ""},
		{"tox.fih_dose_projection", "a safety factor below 1", setting("safety_factor", 0.5), "safety_factor", "safety_factor_below_one",
			[]string{"safety factor 0.5 is below 1"}, `0.5`, ""},
		{"tox.fih_dose_projection", "a molecular weight in kDa", setting("test_article", map[string]any{"modality": "protein", "molecular_weight": map[string]any{"value": 150, "unit": "kDa"}, "administration": "iv_bolus"}),
			"test_article.molecular_weight.unit", "unknown_unit", nil, `"kDa"`, "kg/mol"},
		{"tox.fih_dose_projection", "km ratio for a 150 kDa protein given intravenously", setting("test_article", map[string]any{"modality": "protein", "molecular_weight": map[string]any{"value": 150, "unit": "kg/mol"}, "administration": "iv_infusion"}),
			"route", "route_not_for_article", []string{"use route mg_per_kg"}, `"km_ratio"`, "mg_per_kg"},
		{"qa.check_readiness", "a list given as a string", setting("required_approval_roles", "author"), "required_approval_roles", "type",
			[]string{`expected a list of strings, got the string "author"`}, `"author"`, `["author"]`},
	}
	for _, c := range cases {
		t.Run(c.skill+"/"+c.why, func(t *testing.T) {
			s := skills[c.skill]
			args := exampleArgs(t, s)
			c.change(args)
			raw, _ := json.Marshal(args)
			ps := s.Check(raw)
			var p *runtimes.Problem
			for i := range ps {
				if ps[i].Path == c.path {
					p = &ps[i]
				}
			}
			if p == nil || p.Constraint != c.code {
				t.Fatalf("want a problem at %s (%s), got %s", c.path, c.code, problemsString(ps))
			}
			for _, m := range c.message {
				if !strings.Contains(p.Message, m) {
					t.Errorf("message %q lacks %q", p.Message, m)
				}
			}
			if strings.Contains(p.Message, "float64") || strings.Contains(p.Message, "[]") || strings.Contains(p.Message, "json:") {
				t.Errorf("message %q speaks Go", p.Message)
			}
			if got := compactJSON(p.Value); got != c.value {
				t.Errorf("value received %s, want %s", got, c.value)
			}
			if p.Suggestion != c.suggestion {
				t.Errorf("suggestion %q, want %q", p.Suggestion, c.suggestion)
			}
		})
	}
}

func compactJSON(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestValueAt(t *testing.T) {
	args := json.RawMessage(`{"studies": [{"species": "rat"}, {"noael": {"value": 5, "unit": "mg/kg"}}], "times": {"values": [0, 1, 2]}}`)
	for path, want := range map[string]string{
		"studies[1].noael": `{"unit":"mg/kg","value":5}`, "studies[0].species": `"rat"`, "times.values[2]": `2`,
		"times.values[3]": ``, "route": ``, "studies[0].species.x": ``,
	} {
		if got := compactJSON(valueAt(args, path)); got != want {
			t.Errorf("valueAt(%s) = %s, want %s", path, got, want)
		}
	}
}
