package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/skills/pk"
	"github.com/scidex/substrate/skills/units"
)

// ncaArgs are pk.nca's arguments as a caller gives them: series and
// quantities with their units, for one profile, or several in profiles.
type ncaArgs struct {
	ncaProfile
	Profiles      []json.RawMessage `json:"profiles,omitempty"`
	AUCMethod     string            `json:"auc_method"`
	LambdaZPoints *int              `json:"lambda_z_points,omitempty"`
	// PartialAUCs are the partial AUCs every profile reports.
	PartialAUCs []ncaPartial `json:"partial_aucs,omitempty"`
	// MolecularWeight lets concentrations be molar (umol/L, nmol/L…) and
	// adds each result's molar exposure.
	MolecularWeight json.RawMessage `json:"molecular_weight,omitempty"`
	// Figure asks for each profile's figure artifact (default true).
	Figure *bool `json:"figure,omitempty"`
}

// ncaPartial is one partial AUC request.
type ncaPartial struct {
	Start         json.RawMessage `json:"start"`
	End           json.RawMessage `json:"end"`
	Interpolation string          `json:"interpolation,omitempty"`
	Extrapolation string          `json:"extrapolation,omitempty"`
}

// ncaProfile is one concentration-time profile.
type ncaProfile struct {
	Subject        string          `json:"subject,omitempty"`
	Times          json.RawMessage `json:"times,omitempty"`
	Concentrations json.RawMessage `json:"concentrations,omitempty"`
	Dose           json.RawMessage `json:"dose,omitempty"`
	Route          string          `json:"route,omitempty"`
	LLOQ           json.RawMessage `json:"lloq,omitempty"`
	BLQRule        string          `json:"blq_rule,omitempty"`
	Duration       json.RawMessage `json:"duration,omitempty"`
	Tau            json.RawMessage `json:"tau,omitempty"`
	DoseTimes      json.RawMessage `json:"dose_times,omitempty"`
	LambdaZ        *ncaLambdaZ     `json:"lambda_z,omitempty"`
	Urine          *ncaUrine       `json:"urine,omitempty"`
}

// ncaLambdaZ is the caller's control of the terminal fit.
type ncaLambdaZ struct {
	Start     json.RawMessage `json:"start,omitempty"`
	End       json.RawMessage `json:"end,omitempty"`
	Exclude   []ncaExclusion  `json:"exclude,omitempty"`
	Weighting string          `json:"weighting,omitempty"`
}

type ncaExclusion struct {
	Time   json.RawMessage `json:"time"`
	Reason string          `json:"reason"`
}

// ncaUrine are urine collections, one per element of each series.
type ncaUrine struct {
	Starts         json.RawMessage `json:"starts"`
	Ends           json.RawMessage `json:"ends"`
	Volumes        json.RawMessage `json:"volumes"`
	Concentrations json.RawMessage `json:"concentrations"`
}

// ncaInput reads the arguments through the units layer into the
// procedure's canonical units (h, mg/L, mg).
func ncaInput(args json.RawMessage) ([]pk.Profile, pk.Options, ncaArgs, []runtimes.Problem) {
	var a ncaArgs
	if ps := decodeStrict(args, &a); ps != nil {
		return nil, pk.Options{}, a, ps
	}
	o := pk.Options{AUCMethod: a.AUCMethod, LambdaZPoints: a.LambdaZPoints}
	var all units.Problems
	var mw *float64
	if len(a.MolecularWeight) > 0 {
		if q, pr := units.ParseQuantity("molecular_weight", a.MolecularWeight, units.MolarMass); pr != nil {
			all.Add(pr)
		} else if v, _ := q.In("g/mol"); !(v > 0) {
			all.Add(&units.Problem{Path: "molecular_weight.value", Code: "not_positive", Value: json.RawMessage(strconv.FormatFloat(v, 'g', -1, 64)),
				Message: fmt.Sprintf("is %v g/mol: expected a molecular weight > 0", v)})
		} else {
			mw = &v
		}
	}
	for i, q := range a.PartialAUCs {
		at := fmt.Sprintf("partial_aucs[%d].", i)
		r := pk.PartialAUCRequest{Interpolation: q.Interpolation, Extrapolation: q.Extrapolation}
		r.Start = hours(&all, at+"start", q.Start)
		r.End = hours(&all, at+"end", q.End)
		o.PartialAUCs = append(o.PartialAUCs, r)
	}
	if len(a.Profiles) == 0 {
		p, ps := parseProfile("", a.ncaProfile, mw)
		return []pk.Profile{p}, o, a, unitProblems(append(all, ps...))
	}
	if a.Times != nil || a.Concentrations != nil || a.Dose != nil || a.Route != "" {
		all.Add(&units.Problem{Path: "profiles", Code: "source_conflict", Message: "give one profile's fields or profiles, not both"})
	}
	out := make([]pk.Profile, 0, len(a.Profiles))
	var shape []runtimes.Problem
	for i, raw := range a.Profiles {
		prefix := "profiles[" + strconv.Itoa(i) + "]"
		var np ncaProfile
		if ps := decodeStrictAt(prefix, raw, &np); ps != nil {
			shape = append(shape, ps...)
			continue
		}
		p, ps := parseProfile(prefix+".", np, mw)
		all = append(all, ps...)
		out = append(out, p)
	}
	return out, o, a, append(unitProblems(all), shape...)
}

// hours reads a required time quantity at path, in h (0 when it is refused).
func hours(ps *units.Problems, path string, raw json.RawMessage) float64 {
	q, pr := units.ParseQuantity(path, raw, units.Time)
	if pr != nil {
		ps.Add(pr)
		return 0
	}
	v, _ := q.In("h")
	return v
}

// optHours reads an optional time quantity, nil when absent or refused.
func optHours(ps *units.Problems, path string, raw json.RawMessage) *float64 {
	if len(raw) == 0 {
		return nil
	}
	n := len(*ps)
	v := hours(ps, path, raw)
	if len(*ps) > n {
		return nil
	}
	return &v
}

// concSeries reads concentrations, mass or molar; a molar series needs the
// molecular weight and is converted, c(mg/L) = c(umol/L)·MW(g/mol)/1000.
func concSeries(ps *units.Problems, path string, raw json.RawMessage, mw *float64) []float64 {
	s, sps := units.ParseSeries(path, raw, units.AnyConcentration...)
	if len(sps) > 0 {
		*ps = append(*ps, sps...)
		return nil
	}
	if s.Unit.Dimension != units.MolarConcentration {
		v, _ := s.In("mg/L")
		return v
	}
	if mw == nil {
		ps.Add(molarWithoutMW(path, s.Unit.Symbol))
		return nil
	}
	v, _ := s.In("umol/L")
	for i := range v {
		v[i] *= *mw / 1000
	}
	return v
}

// molarWithoutMW refuses a molar unit given without the molecular weight.
func molarWithoutMW(path, symbol string) *units.Problem {
	return &units.Problem{Path: path + ".unit", Code: "molecular_weight_required", Value: json.RawMessage(strconv.Quote(symbol)),
		Message: fmt.Sprintf("is %q, a molar concentration: give molecular_weight {value, unit: \"g/mol\"} to convert it, or a mass concentration (mg/L, ng/mL)", symbol)}
}

func parseProfile(prefix string, a ncaProfile, mw *float64) (pk.Profile, units.Problems) {
	var ps units.Problems
	p := pk.Profile{Subject: a.Subject, BLQRule: a.BLQRule}
	times, tps := units.ParseSeries(prefix+"times", a.Times, units.Time)
	ps = append(ps, tps...)
	if len(tps) == 0 {
		p.Times, _ = times.In("h")
	}
	p.Conc = concSeries(&ps, prefix+"concentrations", a.Concentrations, mw)
	if q, pr := units.ParseQuantity(prefix+"dose", a.Dose, units.Mass); pr != nil {
		ps.Add(pr)
	} else {
		p.Dose, _ = q.In("mg")
	}
	if len(a.LLOQ) > 0 {
		if q, pr := units.ParseQuantity(prefix+"lloq", a.LLOQ, units.AnyConcentration...); pr != nil {
			ps.Add(pr)
		} else if q.Unit.Dimension != units.MolarConcentration {
			v, _ := q.In("mg/L")
			p.LLOQ = &v
		} else if mw == nil {
			ps.Add(molarWithoutMW(prefix+"lloq", q.Unit.Symbol))
		} else {
			v, _ := q.In("umol/L")
			v *= *mw / 1000
			p.LLOQ = &v
		}
	}
	if r, pr := units.ParseRoute(prefix+"route", a.Route); pr != nil {
		ps.Add(pr)
	} else {
		p.Route = ncaRouteOf(r)
		if p.Route == "" {
			ps.Add(&units.Problem{Path: prefix + "route", Code: "unsupported_route", Message: fmt.Sprintf("pk.nca analyses an extravascular dose, an IV bolus or an IV infusion, not %s", r.Name)})
		}
	}
	p.Duration = optHours(&ps, prefix+"duration", a.Duration)
	p.Tau = optHours(&ps, prefix+"tau", a.Tau)
	if len(a.DoseTimes) > 0 {
		s, sps := units.ParseSeries(prefix+"dose_times", a.DoseTimes, units.Time)
		ps = append(ps, sps...)
		if len(sps) == 0 {
			p.DoseTimes, _ = s.In("h")
		}
	}
	if lz := a.LambdaZ; lz != nil {
		c := &pk.LambdaZControl{Weighting: lz.Weighting}
		c.Start = optHours(&ps, prefix+"lambda_z.start", lz.Start)
		c.End = optHours(&ps, prefix+"lambda_z.end", lz.End)
		for i, x := range lz.Exclude {
			t := hours(&ps, fmt.Sprintf("%slambda_z.exclude[%d].time", prefix, i), x.Time)
			// A time given in another unit than the samples' may round
			// apart from the sample it names: snap to it.
			for _, st := range p.Times {
				if math.Abs(st-t) <= 1e-9*math.Max(1, math.Abs(st)) {
					t = st
				}
			}
			c.Exclude = append(c.Exclude, pk.Exclusion{Time: t, Reason: x.Reason})
		}
		p.LambdaZ = c
	}
	if u := a.Urine; u != nil {
		p.Urine = parseUrine(&ps, prefix+"urine.", *u, mw)
	}
	return p, ps
}

// parseUrine reads the urine collections' four series, one element per
// collection.
func parseUrine(ps *units.Problems, prefix string, u ncaUrine, mw *float64) []pk.UrineCollection {
	n0 := len(*ps)
	read := func(name string, raw json.RawMessage, dim units.Dimension, unit string) []float64 {
		s, sps := units.ParseSeries(prefix+name, raw, dim)
		*ps = append(*ps, sps...)
		v, _ := s.In(unit)
		return v
	}
	starts := read("starts", u.Starts, units.Time, "h")
	ends := read("ends", u.Ends, units.Time, "h")
	vols := read("volumes", u.Volumes, units.Volume, "L")
	conc := concSeries(ps, prefix+"concentrations", u.Concentrations, mw)
	if len(*ps) > n0 {
		return nil
	}
	for _, c := range []struct {
		name string
		v    []float64
	}{{"ends", ends}, {"volumes", vols}, {"concentrations", conc}} {
		name, v := c.name, c.v
		if len(v) != len(starts) {
			b, _ := json.Marshal(v)
			ps.Add(&units.Problem{Path: prefix + name + ".values", Code: "length_mismatch", Value: b,
				Message: fmt.Sprintf("has %d values but urine.starts has %d: expected one per collection", len(v), len(starts))})
		}
	}
	if len(*ps) > n0 {
		return nil
	}
	out := make([]pk.UrineCollection, len(starts))
	for i := range starts {
		out[i] = pk.UrineCollection{Start: starts[i], End: ends[i], Volume: vols[i], Conc: conc[i]}
	}
	return out
}

// compute runs the procedure on one profile or several.
func ncaCompute(ps []pk.Profile, o pk.Options, many bool) ([]*pk.Result, error) {
	if !many {
		r, err := pk.NCA(ps[0], o)
		if err != nil {
			return nil, err
		}
		return []*pk.Result{r}, nil
	}
	return pk.NCAMany(ps, o)
}

// ncaPath maps a procedure's problem path to the caller's field.
func ncaPath(p string) string {
	if strings.HasPrefix(p, "profiles[") {
		if i := strings.Index(p, "]."); i > 0 {
			return p[:i+2] + ncaPath(p[i+2:])
		}
	}
	// urine[i].field → urine.<series>.values[i]
	if strings.HasPrefix(p, "urine[") {
		if i := strings.Index(p, "]."); i > 0 {
			series := map[string]string{"start": "starts", "end": "ends", "volume": "volumes", "conc": "concentrations"}[p[i+2:]]
			if series != "" {
				return "urine." + series + ".values" + p[len("urine"):i+1]
			}
		}
	}
	for _, m := range [][2]string{{"conc", "concentrations.values"}, {"times", "times.values"}, {"aucMethod", "auc_method"},
		{"blqRule", "blq_rule"}, {"lambdaZPoints", "lambda_z_points"}, {"doseTimes", "dose_times.values"},
		{"lambdaZ", "lambda_z"}, {"partialAUCs", "partial_aucs"}} {
		if p == m[0] || strings.HasPrefix(p, m[0]+"[") || strings.HasPrefix(p, m[0]+".") {
			return m[1] + p[len(m[0]):]
		}
	}
	return p
}

// nca is pk.nca: non-compartmental analysis of one concentration-time
// profile, with its figure.
func nca(deps Deps) Skill {
	const name = "pk.nca"
	check := func(args json.RawMessage) []runtimes.Problem {
		ps, o, a, problems := ncaInput(args)
		if len(problems) > 0 {
			return problems
		}
		_, err := ncaCompute(ps, o, len(a.Profiles) > 0)
		return refusalProblems(err, ncaPath, args)
	}
	run := func(ctx context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		ps, o, a, problems := ncaInput(args)
		if len(problems) > 0 {
			return nil, refused(errors.New(problems[0].Message))
		}
		rs, err := ncaCompute(ps, o, len(a.Profiles) > 0)
		if err != nil {
			return nil, refused(err)
		}
		warnings := []string{}
		type one struct {
			Subject   string         `json:"subject,omitempty"`
			NCA       *pk.Result     `json:"nca"`
			Molar     map[string]any `json:"molar,omitempty"`
			Figure    string         `json:"figure,omitempty"`
			FigureURL string         `json:"figure_url,omitempty"`
		}
		results := make([]one, len(rs))
		var figures []string
		for i, r := range rs {
			for _, w := range r.Warnings {
				warnings = append(warnings, r.Subject+": "+w.Message)
			}
			results[i] = one{Subject: r.Subject, NCA: r, Molar: ncaMolar(r, mw(a))}
			if (a.Figure == nil || *a.Figure) && deps.Store != nil {
				fig, err := ncaFigure(ctx, deps.Store, ps[i], r)
				if err != nil {
					return nil, err
				}
				results[i].Figure, results[i].FigureURL = fig, "/artifacts/"+fig+"/figure.svg"
				figures = append(figures, fig)
			}
		}
		out := map[string]any{"units": pk.Units, "check_logic_version": NCALogicVersion,
			"calculation_route": fmt.Sprintf("non-compartmental analysis, %s route, AUC by the %s trapezoidal rule, lambda_z by %s",
				rs[0].Route, rs[0].Method, lambdaRule(rs[0])),
			"warnings": warnings, "disclaimers": []string{"Non-compartmental estimates of each profile; check the terminal phase the fit used"},
			"references_used": []map[string]any{{"id": "theoph_dataset", "status": Verified, "note": "the golden dataset the calculation is tested against"}},
			"figures":         nonNilStrings(figures),
			"conventions":     pk.Conventions}
		if len(a.Profiles) == 0 {
			out["nca"], out["figure"], out["figure_url"] = results[0].NCA, results[0].Figure, results[0].FigureURL
			if results[0].Molar != nil {
				out["molar"] = results[0].Molar
			}
		} else {
			out["profiles"] = results
		}
		return json.Marshal(out)
	}
	example := map[string]any{"subject": "1", "route": "oral", "auc_method": "linear_up_log_down",
		"times":          map[string]any{"values": []any{0, 0.25, 0.57, 1.12, 2.02, 3.82, 5.1, 7.03, 9.05, 12.12, 24.37}, "unit": "h"},
		"concentrations": map[string]any{"values": []any{0.74, 2.84, 6.57, 10.5, 9.66, 8.58, 8.36, 7.47, 6.89, 5.94, 3.28}, "unit": "mg/L"},
		"dose":           map[string]any{"value": 320, "unit": "mg"}}
	return Skill{
		Name: name, Version: "1.1.0", CheckLogicVersion: NCALogicVersion, Intended: Preview, References: []string{"theoph_dataset"},
		Run: run, Check: check,
		Tool: mustManifest(map[string]any{
			"name": name, "version": "1.2.0", "runtime": "in_process", "runtime_config": map[string]any{"function": name},
			"summary":       "Non-compartmental analysis after an extravascular dose, IV bolus or infusion: Cmax, Tmax, Tlag, AUC (last, inf, partial), lambda_z (best fit, or your range, exclusions, weighting), half-life, AUMC, MRT, CL, Vz, Vss; dosing intervals; urine Ae, fe, CLr; molar units; with a figure.",
			"input_schema":  ncaInputSchema(example),
			"output_schema": ncaOutputSchema(),
			"resource_caps": map[string]any{"wall_time_min": 0.2}, "deterministic": false, "idempotent": true,
			"render_hints": map[string]any{"primary_view": "table", "columns": []any{"cmax", "tmax", "auclast", "aucinfObs", "terminal"}},
			"examples":     []any{map[string]any{"description": "Theophylline, subject 1 (Boeckmann, Sheiner and Beal), 320 mg orally.", "args": example}},
		}),
		Doc: mustManifest(map[string]any{
			"title":       "Non-compartmental analysis (NCA)",
			"summary":     "Non-compartmental pharmacokinetic analysis of one concentration-time profile, with the terminal phase it used and a figure to look at.",
			"domain":      "pharmacokinetics",
			"inputs":      "times {values, unit: a time unit}, concentrations {values, unit: a mass concentration, or molar with molecular_weight}, dose {value, unit: a mass}, route (oral, sc, im… = extravascular, iv_bolus, or iv_infusion with duration {value, unit}), lloq {value, unit} and blq_rule, tau {value, unit} and dose_times {values, unit}, lambda_z {start, end, exclude [{time, reason}], weighting uniform | 1/y | 1/y2}, urine {starts, ends, volumes, concentrations}; or several profiles [{subject, times, concentrations, dose, route, …}]; auc_method linear | linear_up_log_down, lambda_z_points, partial_aucs [{start, end, interpolation, extrapolation lambda_z | none}], molecular_weight {value, unit: g/mol}, figure (default true).",
			"outputs":     "nca (or profiles [{subject, nca, molar, figure, figure_url}]): every parameter in the units listed in units (h, mg/L, h.mg/L, 1/h, L/h, L), partialAUCs with their rules, intervals, urine; molar exposure with molecular_weight; conventions (where Phoenix and PKNCA differ and which this follows); each figure's ref and URL.",
			"limitations": "Rich sampling only (no sparse or population NCA); repeated doses are analysed per interval from one profile (no infusion repeats); urine fe is relative to one dose.",
			"disclaimers": []any{"Non-compartmental estimates of one profile; check the terminal phase the fit used"},
			"example":     map[string]any{"description": "Runs as written with runSkill.", "inputs": example},
		}),
	}
}

// NCALogicVersion is the version of pk.nca's calculation logic: 1.1 adds
// partial AUCs, dosing intervals, the infusion route, Vss, λz control, molar
// units and urine.
const NCALogicVersion = "pk.nca/1.1"

// mw is the molecular weight the arguments give (g/mol), nil without one;
// the arguments were already checked.
func mw(a ncaArgs) *float64 {
	if len(a.MolecularWeight) == 0 {
		return nil
	}
	q, pr := units.ParseQuantity("molecular_weight", a.MolecularWeight, units.MolarMass)
	if pr != nil {
		return nil
	}
	v, _ := q.In("g/mol")
	return &v
}

// ncaMolar is the result's exposure in molar units, given the molecular
// weight: c(umol/L) = c(mg/L)·1000/MW(g/mol).
func ncaMolar(r *pk.Result, mw *float64) map[string]any {
	if mw == nil {
		return nil
	}
	f := 1000 / *mw
	m := map[string]any{"molecular_weight": map[string]any{"value": *mw, "unit": "g/mol"},
		"cmax": map[string]any{"value": r.Cmax * f, "unit": "umol/L"}, "clast": map[string]any{"value": r.Clast * f, "unit": "umol/L"},
		"auclast": map[string]any{"value": r.AUClast * f, "unit": "h.umol/L"}, "aumclast": map[string]any{"value": r.AUMClast * f, "unit": "h2.umol/L"}}
	if r.AUCinfObs != nil {
		m["aucinfObs"] = map[string]any{"value": *r.AUCinfObs * f, "unit": "h.umol/L"}
	}
	if r.AUMCinfObs != nil {
		m["aumcinfObs"] = map[string]any{"value": *r.AUMCinfObs * f, "unit": "h2.umol/L"}
	}
	return m
}

func lambdaRule(r *pk.Result) string {
	tm := r.Terminal
	if tm == nil {
		return "no estimate (see warnings)"
	}
	var rule string
	switch tm.Selection {
	case pk.SelectionFixedPoints:
		rule = fmt.Sprintf("a log-linear fit of the last %d points", tm.N)
	case pk.SelectionManualRange:
		rule = fmt.Sprintf("a log-linear fit of the %d points in the caller's range %v–%v h", tm.N, *tm.RangeStart, *tm.RangeEnd)
	default:
		rule = fmt.Sprintf("the best adjusted R² over the last ≥ 3 points after Cmax (%d used)", tm.N)
	}
	rule += ", weighting " + tm.Weighting
	if len(tm.Excluded) > 0 {
		rule += fmt.Sprintf(", %d sample(s) excluded by the caller", len(tm.Excluded))
	}
	return rule
}

// ncaFigure draws the profile and records it as a figure artifact of the
// caller's.
func ncaFigure(ctx context.Context, st *store.Store, p pk.Profile, r *pk.Result) (string, error) {
	svg, err := pk.FigureSVG(p, r, pk.CanonicalAxisUnits)
	if err != nil {
		return "", fmt.Errorf("draw the figure: %w", err)
	}
	subject := p.Subject
	if subject == "" {
		subject = "the profile"
	}
	content, _ := json.Marshal(map[string]any{
		"caption":     fmt.Sprintf("Concentration-time profile of %s, linear and log scales, with the lambda_z points and the fitted terminal line.", subject),
		"alt_text":    fmt.Sprintf("Two panels plotting concentration (mg/L) against time (h) for %s; the log panel marks the terminal-phase points and the fitted line.", subject),
		"figure_type": "concentration_time_profile",
		"media_type":  "image/svg+xml",
		"svg":         string(svg),
		"spec_format": "svg",
		"spec":        map[string]any{"times_h": p.Times, "concentrations_mg_per_L": p.Conc},
		"produced_by": map[string]any{"skill": "pk.nca", "tool": "pk.nca"},
	})
	res, err := st.CreateArtifact(ctx, store.CreateParams{Type: "figure", Title: "pk.nca profile: " + subject, Content: content})
	if err != nil {
		return "", fmt.Errorf("record the figure: %w", err)
	}
	return res.Ref, nil
}
