package skills

import (
	"encoding/json"
	"testing"

	"github.com/scidex/substrate/skills/data"
)

// data.check_conformance's argument check refuses a max_violations data's
// own validation refuses (a negative one), so the call is not recorded only
// to fail at run time; zero keeps data's default.
func TestConformanceCheckRefusesNegativeMaxViolations(t *testing.T) {
	s := conformance(Deps{})
	spec := `"spec": {"columns": [{"name": "x", "type": "number", "unit": "h"}]}`
	for _, n := range []string{"-1", "-1000"} {
		ps := s.Check(json.RawMessage(`{"csv": "x\n1\n", ` + spec + `, "max_violations": ` + n + `}`))
		if len(ps) != 1 || ps[0].Path != "max_violations" || ps[0].Constraint != data.CodeOutOfRange {
			t.Fatalf("max_violations %s: want one out_of_range problem at max_violations, got %s", n, problemsString(ps))
		}
	}
	for _, args := range []string{
		`{"csv": "x\n1\n", ` + spec + `}`,
		`{"csv": "x\n1\n", ` + spec + `, "max_violations": 1000, "declared_units": {"x": "min"}}`,
	} {
		if ps := s.Check(json.RawMessage(args)); len(ps) != 0 {
			t.Fatalf("%s: want no problems, got %s", args, problemsString(ps))
		}
	}
	if ps := s.Check(json.RawMessage(`{"csv": "x\n1\n", ` + spec + `, "max_violations": 1001}`)); len(ps) != 1 || ps[0].Path != "max_violations" {
		t.Fatalf("max_violations above the skill's cap: got %s", problemsString(ps))
	}
}
