package units

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestParseQuantityAccepts(t *testing.T) {
	for _, c := range []struct {
		raw   string
		want  []Dimension
		value float64
		unit  string
		canon float64
	}{
		{`{"value": 320, "unit": "mg"}`, []Dimension{Mass}, 320, "mg", 320},
		{`{"unit": "ug", "value": 250}`, []Dimension{Mass}, 250, "ug", 0.25},
		{` {"value": 70.5, "unit": "kg"} `, []Dimension{Mass}, 70.5, "kg", 70500000},
		{`{"value": 0, "unit": "h"}`, []Dimension{Time}, 0, "h", 0},
		{`{"value": 90, "unit": "min"}`, []Dimension{Time}, 90, "min", 1.5},
		{`{"value": -0, "unit": "h"}`, []Dimension{Time}, 0, "h", 0},
		{`{"value": 10.5, "unit": "ng/mL"}`, AnyConcentration, 10.5, "ng/mL", 0.0105},
		{`{"value": 3, "unit": "nmol/L"}`, AnyConcentration, 3, "nmol/L", 0.003},
		{`{"value": 4.02, "unit": "mg/kg"}`, []Dimension{DosePerBodyMass}, 4.02, "mg/kg", 4.02},
		{`{"value": 1.2e2, "unit": "mg/m2"}`, []Dimension{DosePerArea}, 120, "mg/m2", 120},
		{`{"value": 1.62, "unit": "m2"}`, []Dimension{Area}, 1.62, "m2", 1.62},
		{`{"value": 100, "unit": "mL/min"}`, []Dimension{VolumeRate}, 100, "mL/min", 6},
		{`{"value": 5, "unit": "mg/h"}`, []Dimension{MassRate}, 5, "mg/h", 5},
		{`{"value": 0.5, "unit": "/h"}`, []Dimension{InverseTime}, 0.5, "/h", 0.5},
		{`{"value": 0.5, "unit": "1/min"}`, []Dimension{InverseTime}, 0.5, "1/min", 30},
		{`{"value": 148.9, "unit": "mg.h/L"}`, []Dimension{ConcentrationTime}, 148.9, "mg.h/L", 148.9},
		{`{"value": 1000, "unit": "ng.h/mL"}`, []Dimension{ConcentrationTime}, 1000, "ng.h/mL", 1},
		{`{"value": 2, "unit": "h2.mg/L"}`, []Dimension{ConcentrationTimeSquared}, 2, "h2.mg/L", 2},
		{`{"value": 25, "unit": "%"}`, []Dimension{Fraction}, 25, "%", 0.25},
		{`{"value": 1, "unit": "ml"}`, nil, 1, "ml", 0.001},
		{`{"value": 1e200, "unit": "mg"}`, nil, 1e200, "mg", 1e200},
		{`{"value": -1e-200, "unit": "mg"}`, nil, -1e-200, "mg", -1e-200},
	} {
		q, p := ParseQuantity("inputs.x", json.RawMessage(c.raw), c.want...)
		if p != nil {
			t.Errorf("%s: %v", c.raw, p)
			continue
		}
		if q.Value != c.value || q.Unit.Symbol != c.unit || q.Canonical() != c.canon {
			t.Errorf("%s: %v %s canonical %v, want %v %s canonical %v", c.raw, q.Value, q.Unit.Symbol, q.Canonical(), c.value, c.unit, c.canon)
		}
	}
}

func TestParseQuantityRefusals(t *testing.T) {
	mass := []Dimension{Mass}
	for _, c := range []struct {
		raw        string
		want       []Dimension
		path, code string
		suggestion string
		msg        string // a part of the message
	}{
		{``, mass, "d", CodeRequired, "", "required"},
		{`null`, mass, "d", CodeRequired, "", "required"},
		{`5`, mass, "d", CodeUnitRequired, "", "bare number"},
		{`-2.5e3`, mass, "d", CodeUnitRequired, "", "bare number"},
		{`[1, 2]`, mass, "d", CodeNotAQuantity, "", "expected a quantity"},
		{`"5 mg"`, mass, "d", CodeNotAQuantity, `{"unit":"mg","value":5}`, "a string"},
		{`"five"`, mass, "d", CodeNotAQuantity, "", "a string"},
		{`true`, mass, "d", CodeNotAQuantity, "", "expected a quantity"},
		{`{"value": 5}`, mass, "d.unit", CodeUnitRequired, "", "missing"},
		{`{"value": 5, "unit": null}`, mass, "d.unit", CodeUnitRequired, "", "missing"},
		{`{"value": 5, "unit": ""}`, mass, "d.unit", CodeUnitRequired, "", "empty"},
		{`{"value": 5, "unit": 3}`, mass, "d.unit", CodeNotAQuantity, "", "must be a string"},
		{`{"unit": "mg"}`, mass, "d.value", CodeRequired, "", "missing"},
		{`{"value": null, "unit": "mg"}`, mass, "d.value", CodeRequired, "", "missing"},
		{`{"value": "5", "unit": "mg"}`, mass, "d.value", CodeNotAQuantity, "", "not a string"},
		{`{"value": [5], "unit": "mg"}`, mass, "d.value", CodeNotAQuantity, "", "not an array"},
		{`{"value": 5, "unit": "mg", "note": "x"}`, mass, "d.note", CodeNotAQuantity, "", "unexpected field"},
		{`{"value": 5, "unit": "mg", "unit": "g"}`, mass, "d.unit", CodeNotAQuantity, "", "twice"},
		{`{"value": 5, "unit": "mg"} x`, mass, "d", CodeNotAQuantity, "", "not valid JSON"},
		{`{"value": 5, "unit": "mg"`, mass, "d", CodeNotAQuantity, "", "not valid JSON"},
		{`{"value": 1e999, "unit": "mg"}`, mass, "d.value", CodeNotFinite, "", "overflows"},
		{`{"value": -1e999, "unit": "mg"}`, mass, "d.value", CodeNotFinite, "", "overflows"},
		{`{"value": 1e201, "unit": "mg"}`, mass, "d.value", CodeOutOfRange, "", "1e-200 to 1e200"},
		{`{"value": 1e-201, "unit": "mg"}`, mass, "d.value", CodeOutOfRange, "", "1e-200 to 1e200"},
		{`{"value": 1e-400, "unit": "mg"}`, mass, "d.value", CodeOutOfRange, "", "1e-200 to 1e200"},
		{`{"value": 1` + strings.Repeat("0", 100) + `, "unit": "mg"}`, mass, "d.value", CodeOutOfRange, "", "characters"},
		{`{"value": 5, "unit": "MG"}`, mass, "d.unit", CodeUnknownUnit, "mg", `did you mean "mg"`},
		{`{"value": 5, "unit": "Mg"}`, mass, "d.unit", CodeUnknownUnit, "mg", "case-sensitive"},
		{`{"value": 5, "unit": "µg"}`, mass, "d.unit", CodeUnknownUnit, "ug", ""},
		{`{"value": 5, "unit": "μg"}`, mass, "d.unit", CodeUnknownUnit, "ug", ""},
		{`{"value": 5, "unit": "mcg"}`, mass, "d.unit", CodeUnknownUnit, "ug", ""},
		{`{"value": 5, "unit": "milligrams"}`, mass, "d.unit", CodeUnknownUnit, "mg", ""},
		{`{"value": 5, "unit": "mgg"}`, mass, "d.unit", CodeUnknownUnit, "mg", ""},
		{`{"value": 5, "unit": "hg"}`, mass, "d.unit", CodeUnknownUnit, "", "mass (mg, ug"},
		{`{"value": 5, "unit": "lb"}`, mass, "d.unit", CodeUnknownUnit, "", ""},
		{`{"value": 5, "unit": "hr"}`, []Dimension{Time}, "d.unit", CodeUnknownUnit, "h", ""},
		{`{"value": 5, "unit": "hours"}`, []Dimension{Time}, "d.unit", CodeUnknownUnit, "h", ""},
		{`{"value": 5, "unit": "H"}`, []Dimension{Time}, "d.unit", CodeUnknownUnit, "h", ""},
		{`{"value": 5, "unit": "ms"}`, []Dimension{Time}, "d.unit", CodeUnknownUnit, "", ""},
		{`{"value": 5, "unit": "hr"}`, mass, "d.unit", CodeUnknownUnit, "", ""}, // no suggestion of another dimension
		{`{"value": 5, "unit": "mo"}`, []Dimension{Time}, "d.unit", CodeUnknownUnit, "", ""},
		{`{"value": 5, "unit": "NG/ML"}`, AnyConcentration, "d.unit", CodeUnknownUnit, "ng/mL", ""},
		{`{"value": 5, "unit": "uM"}`, AnyConcentration, "d.unit", CodeUnknownUnit, "umol/L", ""},
		{`{"value": 5, "unit": "µmol/L"}`, AnyConcentration, "d.unit", CodeUnknownUnit, "umol/L", ""},
		{`{"value": 5, "unit": "mg/hr"}`, []Dimension{MassRate}, "d.unit", CodeUnknownUnit, "mg/h", ""},
		{`{"value": 5, "unit": "ng*hr/mL"}`, []Dimension{ConcentrationTime}, "d.unit", CodeUnknownUnit, "ng.h/mL", ""},
		{`{"value": 5, "unit": "h*ng/mL"}`, []Dimension{ConcentrationTime}, "d.unit", CodeUnknownUnit, "h.ng/mL", ""},
		{`{"value": 5, "unit": "hr·µg/mL"}`, []Dimension{ConcentrationTime}, "d.unit", CodeUnknownUnit, "h.ug/mL", ""},
		{`{"value": 5, "unit": "hr^2*mg/L"}`, []Dimension{ConcentrationTimeSquared}, "d.unit", CodeUnknownUnit, "h2.mg/L", ""},
		{`{"value": 5, "unit": "h-1"}`, []Dimension{InverseTime}, "d.unit", CodeUnknownUnit, "1/h", ""},
		{`{"value": 5, "unit": "1/hr"}`, []Dimension{InverseTime}, "d.unit", CodeUnknownUnit, "1/h", ""},
		{`{"value": 5, "unit": "m^2"}`, []Dimension{Area}, "d.unit", CodeUnknownUnit, "m2", ""},
		{`{"value": 5, "unit": "cc"}`, []Dimension{Volume}, "d.unit", CodeUnknownUnit, "mL", ""},
		{`{"value": 5, "unit": "MG/KG"}`, []Dimension{DosePerBodyMass}, "d.unit", CodeUnknownUnit, "mg/kg", ""},
		{`{"value": 5, "unit": "h"}`, mass, "d.unit", CodeIncompatibleUnit, "", `"h" is a unit of time; expected a unit of mass`},
		{`{"value": 5, "unit": "mg/kg"}`, mass, "d.unit", CodeIncompatibleUnit, "", "dose per body mass"},
		{`{"value": 5, "unit": "mg"}`, []Dimension{DosePerBodyMass}, "d.unit", CodeIncompatibleUnit, "", "mg/kg"},
		{`{"value": 5, "unit": "ug/mL"}`, []Dimension{MolarConcentration}, "d.unit", CodeIncompatibleUnit, "", "molar concentration"},
		{`{"value": 5, "unit": "nmol/L"}`, []Dimension{Concentration}, "d.unit", CodeIncompatibleUnit, "", ""},
		{`{"value": 5, "unit": "mg/L"}`, []Dimension{ConcentrationTime}, "d.unit", CodeIncompatibleUnit, "", "h.mg/L"},
		// A unit problem is reported before a value problem.
		{`{"value": "x", "unit": "hr"}`, []Dimension{Time}, "d.unit", CodeUnknownUnit, "h", ""},
	} {
		_, p := ParseQuantity("d", json.RawMessage(c.raw), c.want...)
		if p == nil {
			t.Errorf("%s: accepted", c.raw)
			continue
		}
		if p.Path != c.path || p.Code != c.code || p.Suggestion != c.suggestion || !strings.Contains(p.Message, c.msg) {
			t.Errorf("%s:\n got  %s %s suggestion %q: %s\n want %s %s suggestion %q, message with %q", c.raw, p.Path, p.Code, p.Suggestion, p.Message, c.path, c.code, c.suggestion, c.msg)
		}
		if p.Suggestion != "" && p.Code == CodeUnknownUnit {
			if u, ok := Lookup(p.Suggestion); !ok || (len(c.want) > 0 && !slices.Contains(c.want, u.Dimension)) {
				t.Errorf("%s: suggestion %q is not a wanted unit", c.raw, p.Suggestion)
			}
		}
	}
}

// TestProblemValue: the problem echoes what was received, when short.
func TestProblemValue(t *testing.T) {
	_, p := ParseQuantity("inputs.dose", json.RawMessage(`{"value": 5, "unit": "MG"}`), Mass)
	if string(p.Value) != `"MG"` || p.Error() != `inputs.dose.unit: unknown_unit: `+p.Message {
		t.Errorf("%+v", p)
	}
	_, p = ParseQuantity("inputs.dose", json.RawMessage(`5`), Mass)
	if string(p.Value) != `5` {
		t.Errorf("value %s", p.Value)
	}
	long := `"` + strings.Repeat("x", 300) + `"`
	_, p = ParseQuantity("inputs.dose", json.RawMessage(long), Mass)
	if p.Value != nil {
		t.Errorf("echoed %d bytes", len(p.Value))
	}
}

func TestCheckUnit(t *testing.T) {
	if u, p := CheckUnit("inputs.output_unit", "h.ng/mL", ConcentrationTime); p != nil || u.Symbol != "h.ng/mL" {
		t.Errorf("%v %v", u, p)
	}
	if _, p := CheckUnit("inputs.output_unit", "", ConcentrationTime); p == nil || p.Code != CodeUnitRequired {
		t.Errorf("%v", p)
	}
	if _, p := CheckUnit("inputs.output_unit", "h", ConcentrationTime); p == nil || p.Code != CodeIncompatibleUnit || p.Path != "inputs.output_unit" {
		t.Errorf("%v", p)
	}
}

func TestProblems(t *testing.T) {
	var ps Problems
	if ps.Err() != nil {
		t.Error("empty Problems is an error")
	}
	_, p1 := ParseQuantity("inputs.dose", json.RawMessage(`5`), Mass)
	_, p2 := ParseQuantity("inputs.weight", json.RawMessage(`{"value": 70, "unit": "kg"}`), Mass)
	_, p3 := ParseQuantity("inputs.tau", json.RawMessage(`{"value": 12, "unit": "hr"}`), Time)
	ps.Add(p1)
	ps.Add(p2)
	ps.Add(p3)
	err := ps.Err()
	if len(ps) != 2 || err == nil || !strings.HasPrefix(err.Error(), "inputs.dose: unit_required: ") || !strings.Contains(err.Error(), "; inputs.tau.unit: unknown_unit: ") {
		t.Errorf("%d problems: %v", len(ps), err)
	}
}

// TestHugeExponentOfZero: a zero with a huge exponent is a zero (the
// magnitude check lets it through, so the exact rational must cope).
func TestHugeExponentOfZero(t *testing.T) {
	for _, lit := range []string{"0e999999999", "-0.0E-999999999", "0e+0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000009"} {
		q, p := ParseQuantity("d", json.RawMessage(`{"value": `+lit+`, "unit": "mg"}`), Mass)
		if p != nil || q.Value != 0 || q.Exact().Sign() != 0 {
			t.Errorf("%s: %v %v", lit, q, p)
		}
	}
}
