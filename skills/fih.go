package skills

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/skills/tox"
	"github.com/scidex/substrate/skills/units"
)

// fihArgs are tox.fih_dose_projection's arguments as a caller gives them:
// doses and weights as {value, unit} quantities.
type fihArgs struct {
	Studies []struct {
		Species    string          `json:"species"`
		NOAEL      json.RawMessage `json:"noael"`
		BodyWeight json.RawMessage `json:"body_weight,omitempty"`
	} `json:"studies"`
	Route              string          `json:"route"`
	SafetyFactor       *float64        `json:"safety_factor,omitempty"`
	SafetyFactorReason string          `json:"safety_factor_reason,omitempty"`
	HumanWeight        json.RawMessage `json:"human_weight,omitempty"`
	Species            string          `json:"species,omitempty"`
}

// fihInput reads the arguments through the units layer into the
// procedure's canonical units (mg/kg, kg), gathering every problem.
func fihInput(args json.RawMessage) (tox.Input, []runtimes.Problem) {
	var a fihArgs
	if ps := decodeStrict(args, &a); ps != nil {
		return tox.Input{}, ps
	}
	var ps units.Problems
	in := tox.Input{Route: a.Route, SafetyFactor: a.SafetyFactor, SafetyFactorReason: a.SafetyFactorReason, Species: a.Species}
	for i, s := range a.Studies {
		path := "studies[" + strconv.Itoa(i) + "]"
		st := tox.Study{Species: s.Species}
		if q, p := units.ParseQuantity(path+".noael", s.NOAEL, units.DosePerBodyMass); p != nil {
			ps.Add(p)
		} else {
			v, _ := q.In("mg/kg")
			st.NOAEL = &v
		}
		if len(s.BodyWeight) > 0 {
			if q, p := units.ParseQuantity(path+".body_weight", s.BodyWeight, units.Mass); p != nil {
				ps.Add(p)
			} else {
				v, _ := q.In("kg")
				st.BodyWeightKg = &v
			}
		}
		in.Studies = append(in.Studies, st)
	}
	if len(a.HumanWeight) > 0 {
		if q, p := units.ParseQuantity("human_weight", a.HumanWeight, units.Mass); p != nil {
			ps.Add(p)
		} else {
			in.HumanWeightKg, _ = q.In("kg")
		}
	}
	return in, unitProblems(ps)
}

func unitProblems(ps units.Problems) []runtimes.Problem {
	out := make([]runtimes.Problem, 0, len(ps))
	for _, p := range ps {
		out = append(out, runtimes.Problem{Path: trimInputs(p.Path), Constraint: p.Code, Message: p.Message, Value: p.Value, Suggestion: p.Suggestion})
	}
	return out
}

// fihPath maps a procedure's problem path to the caller's field: the
// procedure names the weights in its canonical unit (human_weight_kg,
// studies[i].body_weight_kg), the caller gives quantities (human_weight,
// studies[i].body_weight).
func fihPath(p string) string {
	p = trimInputs(p)
	if p == "human_weight_kg" {
		return "human_weight"
	}
	if strings.HasPrefix(p, "studies[") && strings.HasSuffix(p, "].body_weight_kg") {
		return strings.TrimSuffix(p, "_kg")
	}
	return p
}

// fih is tox.fih_dose_projection: the maximum recommended starting dose
// from animal NOAELs per FDA 2005.
func fih() Skill {
	const name = "tox.fih_dose_projection"
	check := func(args json.RawMessage) []runtimes.Problem {
		in, ps := fihInput(args)
		if len(ps) > 0 {
			return ps
		}
		_, err := tox.Project(in)
		return refusalProblems(err, fihPath, args)
	}
	run := func(_ context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		in, ps := fihInput(args)
		if len(ps) > 0 {
			return nil, refused(errors.New(ps[0].Message))
		}
		r, err := tox.Project(in)
		if err != nil {
			return nil, refused(err)
		}
		warnings := make([]string, len(r.Warnings))
		for i, w := range r.Warnings {
			warnings[i] = w.Message
		}
		refs := make([]map[string]any, len(r.References))
		for i, x := range r.References {
			refs[i] = map[string]any{"id": x.ID, "document": x.Document, "version": x.Version, "status": x.Status}
		}
		return json.Marshal(map[string]any{"projection": r,
			"hed": units.MustNew(r.HEDMgPerKg, "mg/kg"), "mrsd": units.MustNew(r.MRSDMgPerKg, "mg/kg"), "mrsd_dose": units.MustNew(r.MRSDMg, "mg"),
			"calculation_route": r.Route + ": " + r.RouteFormula, "check_logic_version": tox.LogicVersion,
			"units":    map[string]string{"hed": "mg/kg", "mrsd": "mg/kg", "mrsd_dose": "mg", "human_weight": "kg"},
			"warnings": warnings, "references_used": refs,
			"disclaimers": []string{r.Decision, r.NotComputed, r.CheckedAgainst}})
	}
	example := map[string]any{"studies": []any{
		map[string]any{"species": "rat", "noael": map[string]any{"value": 50, "unit": "mg/kg"}},
		map[string]any{"species": "dog", "noael": map[string]any{"value": 10, "unit": "mg/kg"}}},
		"route": "km_ratio"}
	return Skill{
		Name: name, Version: "1.0.0", CheckLogicVersion: tox.LogicVersion, Intended: Designed,
		References: []string{"fda_2005_mrsd", "fda_2005_table1"},
		Run:        run, Check: check,
		Tool: mustManifest(map[string]any{
			"name": name, "version": "1.1.0", "runtime": "in_process", "runtime_config": map[string]any{"function": name},
			"summary":       "Maximum recommended starting dose from animal NOAELs per FDA 2005: human equivalent dose per species by a named route (divide-by factor, km ratio, body-weight exponent), the most sensitive species, a safety factor (10 by default), the MRSD in mg/kg and in mg for a 60 kg adult.",
			"input_schema":  fihInputSchema(example),
			"output_schema": fihOutputSchema(),
			"resource_caps": map[string]any{"wall_time_min": 0.1}, "deterministic": true, "idempotent": true,
			"render_hints": map[string]any{"primary_view": "table", "columns": []any{"species", "noael_mg_per_kg", "factor", "hed_mg_per_kg"}},
			"examples":     []any{map[string]any{"description": "Rat and dog NOAELs by km ratio: the rat is the most sensitive.", "args": example}},
		}),
		Doc: mustManifest(map[string]any{
			"title":       "First-in-human dose projection (FDA 2005)",
			"summary":     "Projects the maximum recommended starting dose of a first-in-human trial from animal NOAELs, by the route you name, with the most sensitive species and a safety factor.",
			"domain":      "toxicology",
			"inputs":      "studies [{species (FDA 2005 Table 1, or other with body_weight), noael {value, unit: a dose per body mass, e.g. mg/kg}, body_weight {value, unit}}], route divide_by | km_ratio | body_weight, safety_factor (default 10; below 10 needs safety_factor_reason), human_weight {value, unit} (default 60 kg), species (to force one).",
			"outputs":     "hed and mrsd {value, unit}, mrsd_dose in mg, the projection with each study's HED and the route used, warnings, and the fixed disclaimers.",
			"limitations": "Not for biologics whose first dose should come from a minimal anticipated biological effect level (MABEL); PAD/MABEL are not computed. The guidance document is still to_verify, so the skill is served as designed.",
			"disclaimers": []any{"Projection for your decision, not a starting dose", "PAD/MABEL not computed"},
			"example":     map[string]any{"description": "Runs as written with runSkill.", "inputs": example},
		}),
	}
}
