package skills

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// theoph1 is theophylline subject 1 (times h, concentrations mg/L).
var theoph1Times = []float64{0, 0.25, 0.57, 1.12, 2.02, 3.82, 5.1, 7.03, 9.05, 12.12, 24.37}
var theoph1Conc = []float64{0.74, 2.84, 6.57, 10.5, 9.66, 8.58, 8.36, 7.47, 6.89, 5.94, 3.28}

func q(v float64, unit string) map[string]any { return map[string]any{"value": v, "unit": unit} }
func sr(vs []float64, unit string) map[string]any {
	return map[string]any{"values": vs, "unit": unit}
}

// nrel is |a − b| ≤ tol·|b|.
func nrel(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1e-300, math.Abs(b)) }

// pk.nca/1.1 through the skill, every new option at once: molar
// concentrations (nmol/L, theophylline 180.16 g/mol) converted to the mass
// the calculation uses and the molar exposure reported, a partial AUC, tau,
// a manual λz range with a weighting and an exclusion given in minutes, and
// urine. The result validates against the output schema, states the
// conventions and the λz choice, and its numbers are the mass-unit run's.
func TestNCAEveryOptionThroughTheSkill(t *testing.T) {
	s := nca(Deps{})
	const mw = 180.16
	nmol := make([]float64, len(theoph1Conc))
	for i, c := range theoph1Conc {
		nmol[i] = c * 1e6 / mw
	}
	common := map[string]any{"subject": "1", "route": "oral", "auc_method": "linear", "dose": q(320, "mg"),
		"times": sr(theoph1Times, "h"), "tau": q(24, "h"),
		"partial_aucs": []any{map[string]any{"start": q(0, "h"), "end": q(12, "h")}},
		"lambda_z": map[string]any{"start": q(3.82, "h"), "end": q(24.37, "h"), "weighting": "1/y",
			"exclude": []any{map[string]any{"time": q(7.03*60, "min"), "reason": "sample haemolysed"}}},
		"urine": map[string]any{"starts": sr([]float64{0, 12}, "h"), "ends": sr([]float64{12, 24}, "h"),
			"volumes": sr([]float64{800, 600}, "mL"), "concentrations": sr([]float64{20, 12}, "mg/L")}}
	molar, mass := map[string]any{}, map[string]any{}
	for k, v := range common {
		molar[k], mass[k] = v, v
	}
	molar["concentrations"], molar["molecular_weight"] = sr(nmol, "nmol/L"), q(mw, "g/mol")
	mass["concentrations"] = sr(theoph1Conc, "mg/L")
	outM, outG := run(t, s, molar), run(t, s, mass)
	outputMatches(t, s, outM)
	outputMatches(t, s, outG)
	var rm, rg struct {
		NCA struct {
			Cmax        float64 `json:"cmax"`
			AUClast     float64 `json:"auclast"`
			Tlag        float64 `json:"tlag"`
			PartialAUCs []struct {
				AUC           float64 `json:"auc"`
				Interpolation string  `json:"interpolation"`
				Extrapolation string  `json:"extrapolation"`
			} `json:"partialAUCs"`
			Intervals []struct {
				AUCtau float64 `json:"auctau"`
				Ctau   float64 `json:"ctau"`
			} `json:"intervals"`
			Terminal struct {
				LambdaZ   float64 `json:"lambdaZ"`
				N         int     `json:"n"`
				Weighting string  `json:"weighting"`
				Selection string  `json:"selection"`
				Excluded  []struct {
					Time   float64 `json:"time"`
					Reason string  `json:"reason"`
				} `json:"excluded"`
			} `json:"terminal"`
			Urine struct {
				Ae, Fe float64
				CLr    float64 `json:"clr"`
			} `json:"urine"`
		} `json:"nca"`
		Molar map[string]struct {
			Value float64 `json:"value"`
			Unit  string  `json:"unit"`
		} `json:"molar"`
		CheckLogicVersion string `json:"check_logic_version"`
		CalculationRoute  string `json:"calculation_route"`
		Conventions       []struct {
			Topic, Follows string
		} `json:"conventions"`
	}
	if err := json.Unmarshal(outM, &rm); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(outG, &rg)
	n, g := rm.NCA, rg.NCA
	if !nrel(n.Cmax, 10.5, 1e-12) || !nrel(n.AUClast, g.AUClast, 1e-12) || !nrel(n.PartialAUCs[0].AUC, g.PartialAUCs[0].AUC, 1e-12) ||
		!nrel(n.Intervals[0].AUCtau, g.Intervals[0].AUCtau, 1e-12) || !nrel(n.Terminal.LambdaZ, g.Terminal.LambdaZ, 1e-12) {
		t.Errorf("molar input does not give the mass input's numbers: %+v vs %+v", n, g)
	}
	if m := rm.Molar["cmax"]; m.Unit != "umol/L" || !nrel(m.Value, 10.5*1000/mw, 1e-12) {
		t.Errorf("molar cmax %+v, want %v umol/L", m, 10.5*1000/mw)
	}
	if m := rm.Molar["auclast"]; m.Unit != "h.umol/L" || !nrel(m.Value, g.AUClast*1000/mw, 1e-12) {
		t.Errorf("molar auclast %+v", m)
	}
	if rg.Molar != nil {
		t.Errorf("a mass-unit run without molecular_weight reports molar exposure: %v", rg.Molar)
	}
	// The exclusion given in minutes names the 7.03 h sample.
	if tm := n.Terminal; tm.N != 5 || tm.Weighting != "1/y" || tm.Selection != "manual_range" || len(tm.Excluded) != 1 || tm.Excluded[0].Time != 7.03 || tm.Excluded[0].Reason != "sample haemolysed" {
		t.Errorf("λz choice not recorded: %+v", tm)
	}
	if !strings.Contains(rm.CalculationRoute, "caller's range 3.82–24.37 h") || !strings.Contains(rm.CalculationRoute, "weighting 1/y") || !strings.Contains(rm.CalculationRoute, "1 sample(s) excluded") {
		t.Errorf("calculation_route %q does not state the λz choice", rm.CalculationRoute)
	}
	if pa := n.PartialAUCs[0]; pa.Interpolation != "linear" || pa.Extrapolation != "lambda_z" {
		t.Errorf("partial AUC rules %+v", pa)
	}
	// Urine: Ae = 0.8·20 + 0.6·12 = 23.2 mg, fe = 23.2/320, CLr = Ae/AUC(0–24).
	if u := n.Urine; !nrel(u.Ae, 23.2, 1e-12) || !nrel(u.Fe, 23.2/320, 1e-12) || !nrel(u.CLr, 23.2/g.Intervals[0].AUCtau, 1e-12) {
		t.Errorf("urine %+v", u)
	}
	if rm.CheckLogicVersion != "pk.nca/1.1" || len(rm.Conventions) == 0 || rm.Conventions[0].Topic != "lambda_z_cmax" {
		t.Errorf("version %q conventions %+v", rm.CheckLogicVersion, rm.Conventions)
	}
}

// An IV infusion through the skill: its duration in minutes, infusion-aware
// MRT and Vss in the result, validated against the output schema.
func TestNCAInfusionThroughTheSkill(t *testing.T) {
	s := nca(Deps{})
	out := run(t, s, map[string]any{"route": "iv_infusion", "duration": q(120, "min"), "auc_method": "linear_up_log_down",
		"times": sr([]float64{0, 0.5, 1, 2, 3, 4, 6, 8, 12, 24}, "h"), "concentrations": sr([]float64{0, 2.2, 4.1, 7.2, 5.9, 4.8, 3.2, 2.2, 0.97, 0.09}, "mg/L"),
		"dose": q(100, "mg")})
	outputMatches(t, s, out)
	var r struct {
		NCA struct {
			Duration float64 `json:"duration"`
			AUMCinf  float64 `json:"aumcinfObs"`
			AUCinf   float64 `json:"aucinfObs"`
			MRT      float64 `json:"mrtinfObs"`
			Vss      float64 `json:"vssObs"`
			CL       float64 `json:"clObs"`
			CLName   string  `json:"clName"`
			Route    string  `json:"route"`
		} `json:"nca"`
	}
	_ = json.Unmarshal(out, &r)
	n := r.NCA
	if n.Route != "iv_infusion" || n.Duration != 2 || n.CLName != "CL" || !nrel(n.MRT, n.AUMCinf/n.AUCinf-1, 1e-12) || !nrel(n.Vss, n.MRT*n.CL, 1e-12) {
		t.Errorf("infusion result %+v", n)
	}
}

// The refusals of the new options name the caller's field, the value
// received and what is wanted.
func TestNCANewOptionRefusals(t *testing.T) {
	s := nca(Deps{})
	base := func() map[string]any {
		return map[string]any{"route": "oral", "auc_method": "linear", "dose": q(320, "mg"), "times": sr(theoph1Times, "h"), "concentrations": sr(theoph1Conc, "mg/L")}
	}
	cases := []struct {
		why   string
		edit  func(map[string]any)
		path  string
		code  string
		value string
		msg   string
	}{
		{"duration on an oral dose", func(m map[string]any) { m["duration"] = q(1, "h") }, "duration", "duration_not_infusion", `{"unit":"h","value":1}`, `is 1 h but the route is "extravascular"`},
		{"dose times without tau", func(m map[string]any) { m["dose_times"] = sr([]float64{0, 12}, "h") }, "tau", "tau_required", ``, "doseTimes are given"},
		{"dose times out of order", func(m map[string]any) { m["tau"], m["dose_times"] = q(12, "h"), sr([]float64{0, 12, 6}, "h") }, "dose_times.values[2]", "bad_dose_times", `6`, "not after doseTimes[1] = 12"},
		{"exclusion not a sample", func(m map[string]any) {
			m["lambda_z"] = map[string]any{"exclude": []any{map[string]any{"time": q(13, "h"), "reason": "x"}}}
		}, "lambda_z.exclude[0].time", "excluded_time_not_sampled", `{"unit":"h","value":13}`, "not a sampling time"},
		{"range with too few samples", func(m map[string]any) { m["lambda_z"] = map[string]any{"start": q(20, "h"), "end": q(30, "h")} }, "lambda_z.start", "too_few_points_in_range", `{"unit":"h","value":20}`, "1 usable sample(s)"},
		{"urine overlapping", func(m map[string]any) {
			m["urine"] = map[string]any{"starts": sr([]float64{0, 10}, "h"), "ends": sr([]float64{12, 24}, "h"), "volumes": sr([]float64{1, 1}, "L"), "concentrations": sr([]float64{1, 1}, "mg/L")}
		}, "urine.starts.values[1]", "bad_interval", `10`, "before urine[0] ends (12 h)"},
		{"urine series of different lengths", func(m map[string]any) {
			m["urine"] = map[string]any{"starts": sr([]float64{0, 12}, "h"), "ends": sr([]float64{12, 24}, "h"), "volumes": sr([]float64{1}, "L"), "concentrations": sr([]float64{1, 1}, "mg/L")}
		}, "urine.volumes.values", "length_mismatch", `[1]`, "has 1 values but urine.starts has 2"},
		{"molecular weight zero", func(m map[string]any) { m["molecular_weight"] = q(0, "g/mol") }, "molecular_weight.value", "not_positive", `0`, "expected a molecular weight > 0"},
	}
	for _, c := range cases {
		t.Run(c.why, func(t *testing.T) {
			m := base()
			c.edit(m)
			raw, _ := json.Marshal(m)
			ps := s.Check(raw)
			for _, p := range ps {
				if p.Path == c.path && p.Constraint == c.code && strings.Contains(p.Message, c.msg) && string(p.Value) == c.value {
					return
				}
			}
			t.Errorf("want %s %s (value %s) containing %q, got %s", c.path, c.code, c.value, c.msg, problemsString(ps))
		})
	}
}
