package dispatch_test

import (
	"encoding/json"
	"testing"
)

func TestRefusalProbe(t *testing.T) {
	e := env(t, nil)
	q := `mutation($n: String!, $in: JSON!) { runSkill(input: {name: $n, inputs: $in}) { __typename
	  ... on ValidationFailed { message problems { path constraint message valueReceived suggestion } } } }`
	qi := `mutation($n: String!, $a: JSON!) { invokeTool(input: {name: $n, args: $a}) { __typename
	  ... on ValidationFailed { message problems { path constraint message valueReceived suggestion } } } }`
	nca := func(mut func(m map[string]any)) map[string]any {
		m := map[string]any{"route": "oral", "auc_method": "linear",
			"times":          map[string]any{"values": []any{0, 1, 2, 4, 6, 8}, "unit": "h"},
			"concentrations": map[string]any{"values": []any{0, 5, 4, 3, 2, 1}, "unit": "mg/L"},
			"dose":           map[string]any{"value": 100, "unit": "mg"}}
		mut(m)
		return m
	}
	fih := func(species string, noael any) map[string]any {
		return map[string]any{"route": "km_ratio", "studies": []any{map[string]any{"species": species, "noael": noael}}}
	}
	mgkg := map[string]any{"value": 5, "unit": "mg/kg"}
	cases := []struct {
		name, skill string
		in          map[string]any
	}{
		{"unknown option", "pk.nca", nca(func(m map[string]any) { m["tau"] = 12 })},
		{"number as string", "pk.nca", nca(func(m map[string]any) { m["lambda_z_points"] = "3" })},
		{"element as string", "pk.nca", nca(func(m map[string]any) { m["times"] = map[string]any{"values": []any{0, 1, "2", 4, 6, 8}, "unit": "h"} })},
		{"safety factor as string", "tox.fih_dose_projection", map[string]any{"route": "km_ratio", "safety_factor": "10", "studies": []any{map[string]any{"species": "rat", "noael": mgkg}}}},
		{"studies as string", "tox.fih_dose_projection", map[string]any{"route": "km_ratio", "studies": "rat"}},
		{"unknown field in study", "tox.fih_dose_projection", map[string]any{"route": "km_ratio", "studies": []any{map[string]any{"species": "rat", "noael": mgkg, "sex": "m"}}}},
		{"species in study as number", "tox.fih_dose_projection", fih("rat", mgkg)},
		{"species Rat", "tox.fih_dose_projection", fih("Rat", mgkg)},
		{"species rats", "tox.fih_dose_projection", fih("rats", mgkg)},
		{"species rhesus", "tox.fih_dose_projection", fih("rhesus", mgkg)},
		{"species ratt", "tox.fih_dose_projection", fih("ratt", mgkg)},
		{"noael negative", "tox.fih_dose_projection", fih("rat", map[string]any{"value": -5, "unit": "mg/kg"})},
		{"safety factor low", "tox.fih_dose_projection", map[string]any{"route": "km_ratio", "safety_factor": 0.5, "studies": []any{map[string]any{"species": "rat", "noael": mgkg}}}},
		{"flat terminal", "pk.nca", nca(func(m map[string]any) {
			m["concentrations"] = map[string]any{"values": []any{0, 5, 4, 4, 4, 4}, "unit": "mg/L"}
		})},
		{"rising terminal", "pk.nca", nca(func(m map[string]any) {
			m["concentrations"] = map[string]any{"values": []any{0, 1, 2, 3, 4, 5}, "unit": "mg/L"}
		})},
		{"lambda_z_points", "pk.nca", nca(func(m map[string]any) { m["lambda_z_points"] = 9 })},
		{"profiles unknown", "pk.nca", map[string]any{"auc_method": "linear", "profiles": []any{map[string]any{"subject": "a", "tau": 1}}}},
		{"profiles number as string", "pk.nca", map[string]any{"auc_method": "linear", "profiles": []any{map[string]any{"subject": 1}}}},
		{"qa list as string", "qa.check_readiness", map[string]any{"sop_id": "SOP-1", "version": "1", "as_of": "2026-01-01", "sections": "purpose"}},
	}
	for _, c := range cases {
		for _, qq := range []string{q, qi} {
			var out map[string]any
			v := map[string]any{"n": c.skill, "in": c.in, "a": c.in}
			e.OK(t, alice(t), qq, v, &out)
			b, _ := json.MarshalIndent(out, "", " ")
			t.Logf("== %s\n%s", c.name, b)
		}
	}
}
