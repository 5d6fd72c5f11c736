package units

import (
	"encoding/json"
	"testing"
)

func TestParseSeries(t *testing.T) {
	s, ps := ParseSeries("inputs.times", json.RawMessage(`{"values": [0, 0.25, 0.5, 1, 24], "unit": "h"}`), Time)
	if ps != nil || s.Len() != 5 || s.Unit.Symbol != "h" {
		t.Fatalf("%v %v", s, ps)
	}
	min, err := s.In("min")
	if err != nil || min[1] != 15 || min[4] != 1440 {
		t.Errorf("%v %v", min, err)
	}
	if c := s.Canonical(); c[2] != 0.5 {
		t.Errorf("canonical %v", c)
	}
	if q := s.At(1); q.Value != 0.25 || q.Unit.Symbol != "h" {
		t.Errorf("At(1) = %v", q)
	}
	c, ps := ParseSeries("inputs.conc", json.RawMessage(`{"unit": "ng/mL", "values": [0.1, 0.2, 0.3]}`), AnyConcentration...)
	if ps != nil {
		t.Fatal(ps)
	}
	// 0.1 ng/mL is exactly 0.0001 mg/L (no drift from 0.1's binary form).
	if v := c.Canonical(); v[0] != 0.0001 || v[2] != 0.0003 {
		t.Errorf("%v", v)
	}
	e, ps := ParseSeries("inputs.times", json.RawMessage(`{"values": [], "unit": "h"}`), Time)
	if ps != nil || e.Len() != 0 {
		t.Errorf("empty series: %v", ps)
	}
	if _, err := e.In("mg"); err == nil {
		t.Error("an empty time series converted to mg")
	}
}

func TestParseSeriesRefusals(t *testing.T) {
	type want struct{ path, code string }
	for _, c := range []struct {
		raw  string
		want []want
	}{
		{`[0, 1, 2]`, []want{{"inputs.times", CodeUnitRequired}}},
		{`null`, []want{{"inputs.times", CodeRequired}}},
		{`{"values": [0, 1]}`, []want{{"inputs.times.unit", CodeUnitRequired}}},
		{`{"unit": "h"}`, []want{{"inputs.times.values", CodeRequired}}},
		{`{"values": 3, "unit": "h"}`, []want{{"inputs.times.values", CodeNotAQuantity}}},
		{`{"values": [0, "1", 2, null, 1e999], "unit": "h"}`, []want{
			{"inputs.times.values[1]", CodeNotAQuantity},
			{"inputs.times.values[3]", CodeRequired},
			{"inputs.times.values[4]", CodeNotFinite},
		}},
		{`{"values": [0, {"value": 1, "unit": "h"}], "unit": "hr"}`, []want{
			{"inputs.times.unit", CodeUnknownUnit},
			{"inputs.times.values[1]", CodeNotAQuantity},
		}},
		{`{"values": [0], "unit": "mg"}`, []want{{"inputs.times.unit", CodeIncompatibleUnit}}},
		{`{"values": [0], "unit": "h", "value": 3}`, []want{{"inputs.times.value", CodeNotAQuantity}}},
		{`"0, 1, 2 h"`, []want{{"inputs.times", CodeNotAQuantity}}},
	} {
		_, ps := ParseSeries("inputs.times", json.RawMessage(c.raw), Time)
		if len(ps) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.raw, ps, c.want)
			continue
		}
		for i, w := range c.want {
			if ps[i].Path != w.path || ps[i].Code != w.code {
				t.Errorf("%s: problem %d is %s %s, want %s %s", c.raw, i, ps[i].Path, ps[i].Code, w.path, w.code)
			}
		}
	}
}
