package skills

import (
	"encoding/json"
	"testing"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/skills/tox"
)

// The argument check of tox.fih_dose_projection names the caller's fields
// (human_weight, studies[i].body_weight: quantities), not the procedure's
// canonical ones (human_weight_kg, body_weight_kg).
func TestFIHCheckNamesTheCallersWeightFields(t *testing.T) {
	s := fih()
	cases := []struct {
		name, args, path, code string
	}{
		{"body weight outside the table's range",
			`{"route": "km_ratio", "studies": [{"species": "rat", "noael": {"value": 1, "unit": "mg/kg"}, "body_weight": {"value": 500, "unit": "g"}}]}`,
			"studies[0].body_weight", tox.CodeBodyWeightOutsideTable},
		{"body weight missing for route body_weight",
			`{"route": "body_weight", "studies": [{"species": "rat", "noael": {"value": 1, "unit": "mg/kg"}}]}`,
			"studies[0].body_weight", tox.CodeBodyWeightRequired},
		{"human weight outside the table's range",
			`{"route": "km_ratio", "studies": [{"species": "rat", "noael": {"value": 1, "unit": "mg/kg"}}], "human_weight": {"value": 120, "unit": "kg"}}`,
			"human_weight", tox.CodeHumanWeightOutsideTable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := s.Check(json.RawMessage(c.args))
			if len(ps) != 1 || ps[0].Path != c.path || ps[0].Constraint != c.code {
				t.Fatalf("want one problem at %s (%s), got %s", c.path, c.code, problemsString(ps))
			}
		})
	}
}

func problemsString(ps []runtimes.Problem) string {
	b, _ := json.Marshal(ps)
	return string(b)
}
