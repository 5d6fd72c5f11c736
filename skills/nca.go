package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	// Figure asks for each profile's figure artifact (default true).
	Figure *bool `json:"figure,omitempty"`
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
}

// ncaInput reads the arguments through the units layer into the
// procedure's canonical units (h, mg/L, mg).
func ncaInput(args json.RawMessage) ([]pk.Profile, pk.Options, ncaArgs, []runtimes.Problem) {
	var a ncaArgs
	if ps := decodeStrict(args, &a); ps != nil {
		return nil, pk.Options{}, a, ps
	}
	o := pk.Options{AUCMethod: a.AUCMethod, LambdaZPoints: a.LambdaZPoints}
	if len(a.Profiles) == 0 {
		p, ps := parseProfile("", a.ncaProfile)
		return []pk.Profile{p}, o, a, unitProblems(ps)
	}
	var all units.Problems
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
		p, ps := parseProfile(prefix+".", np)
		all = append(all, ps...)
		out = append(out, p)
	}
	return out, o, a, append(unitProblems(all), shape...)
}

func parseProfile(prefix string, a ncaProfile) (pk.Profile, units.Problems) {
	var ps units.Problems
	p := pk.Profile{Subject: a.Subject, BLQRule: a.BLQRule}
	times, tps := units.ParseSeries(prefix+"times", a.Times, units.Time)
	ps = append(ps, tps...)
	conc, cps := units.ParseSeries(prefix+"concentrations", a.Concentrations, units.Concentration)
	ps = append(ps, cps...)
	if len(tps) == 0 {
		p.Times, _ = times.In("h")
	}
	if len(cps) == 0 {
		p.Conc, _ = conc.In("mg/L")
	}
	if q, pr := units.ParseQuantity(prefix+"dose", a.Dose, units.Mass); pr != nil {
		ps.Add(pr)
	} else {
		p.Dose, _ = q.In("mg")
	}
	if len(a.LLOQ) > 0 {
		if q, pr := units.ParseQuantity(prefix+"lloq", a.LLOQ, units.Concentration); pr != nil {
			ps.Add(pr)
		} else {
			v, _ := q.In("mg/L")
			p.LLOQ = &v
		}
	}
	if r, pr := units.ParseRoute(prefix+"route", a.Route); pr != nil {
		ps.Add(pr)
	} else {
		p.Route = ncaRouteOf(r)
		if p.Route == "" {
			ps.Add(&units.Problem{Path: prefix + "route", Code: "unsupported_route", Message: fmt.Sprintf("pk.nca analyses a single extravascular dose or an IV bolus, not %s", r.Name)})
		}
	}
	return p, ps
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
	for _, m := range [][2]string{{"conc", "concentrations.values"}, {"times", "times.values"}, {"aucMethod", "auc_method"},
		{"blqRule", "blq_rule"}, {"lambdaZPoints", "lambda_z_points"}} {
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
			Subject   string     `json:"subject,omitempty"`
			NCA       *pk.Result `json:"nca"`
			Figure    string     `json:"figure,omitempty"`
			FigureURL string     `json:"figure_url,omitempty"`
		}
		results := make([]one, len(rs))
		var figures []string
		for i, r := range rs {
			for _, w := range r.Warnings {
				warnings = append(warnings, r.Subject+": "+w.Message)
			}
			results[i] = one{Subject: r.Subject, NCA: r}
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
			"figures":         nonNilStrings(figures)}
		if len(a.Profiles) == 0 {
			out["nca"], out["figure"], out["figure_url"] = results[0].NCA, results[0].Figure, results[0].FigureURL
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
		Name: name, Version: "1.0.0", CheckLogicVersion: NCALogicVersion, Intended: Preview, References: []string{"theoph_dataset"},
		Run: run, Check: check,
		Tool: mustManifest(map[string]any{
			"name": name, "version": "1.1.0", "runtime": "in_process", "runtime_config": map[string]any{"function": name},
			"summary":       "Non-compartmental analysis of a concentration-time profile after a single extravascular dose or IV bolus: Cmax, Tmax, AUClast, AUCinf, lambda_z with its points, half-life, AUMC, MRT, CL(/F), Vz(/F); with a figure of the profile on linear and log scales.",
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
			"inputs":      "times {values, unit: a time unit}, concentrations {values, unit: a mass concentration}, dose {value, unit: a mass}, route (oral, sc, im… = extravascular, or iv_bolus), lloq {value, unit} and blq_rule; or several profiles [{subject, times, concentrations, dose, route, …}]; auc_method linear | linear_up_log_down, lambda_z_points, figure (default true).",
			"outputs":     "nca (or profiles [{subject, nca, figure, figure_url}]): every parameter in the units listed in units (h, mg/L, h.mg/L, 1/h, L/h, L); each figure's ref and URL.",
			"limitations": "One profile after a single dose; no steady state, no infusion, no sparse sampling.",
			"disclaimers": []any{"Non-compartmental estimates of one profile; check the terminal phase the fit used"},
			"example":     map[string]any{"description": "Runs as written with runSkill.", "inputs": example},
		}),
	}
}

// NCALogicVersion is the version of pk.nca's calculation logic.
const NCALogicVersion = "pk.nca/1"

func lambdaRule(r *pk.Result) string {
	if r.Terminal == nil {
		return "no estimate (see warnings)"
	}
	if r.Terminal.Selection == pk.SelectionFixedPoints {
		return fmt.Sprintf("a log-linear fit of the last %d points", r.Terminal.N)
	}
	return fmt.Sprintf("the best adjusted R² over the last ≥ 3 points after Cmax (%d used)", r.Terminal.N)
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
