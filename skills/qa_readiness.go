package skills

import (
	"context"
	"encoding/json"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/skills/qa"
)

// readiness is qa.check_readiness: the SOP readiness checklist.
func readiness() Skill {
	const name = "qa.check_readiness"
	check := func(args json.RawMessage) []runtimes.Problem {
		var in qa.Input
		if ps := decodeStrict(args, &in); ps != nil {
			return ps
		}
		_, err := qa.CheckReadiness(in)
		return refusalProblems(err, nil, args)
	}
	run := func(_ context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		var in qa.Input
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, refused(err)
		}
		r, err := qa.CheckReadiness(in)
		if err != nil {
			return nil, refused(err)
		}
		return json.Marshal(map[string]any{"report": r, "status": r.Status,
			"calculation_route":   "the readiness checklist, logic " + qa.LogicVersion + ": required sections, role assignment, calibration, training on this version, approvals, effective and review dates",
			"check_logic_version": qa.LogicVersion, "units": map[string]string{}, "warnings": []string{},
			"disclaimers":     []string{"A checklist of the evidence given, not an audit: missing evidence fails, it is never assumed"},
			"references_used": []map[string]any{{"id": "epa_qa_g6", "status": ToVerify}}})
	}
	return Skill{
		Name: name, Version: "1.0.0", CheckLogicVersion: qa.LogicVersion, Intended: Designed, References: []string{"epa_qa_g6"},
		Run: run, Check: check,
		Tool: mustManifest(map[string]any{
			"name": name, "version": "1.1.0", "runtime": "in_process", "runtime_config": map[string]any{"function": name},
			"summary":       "SOP readiness checklist: each check passed, failed or not applicable with the reason, and an overall status (ready only when nothing failed; missing evidence fails).",
			"input_schema":  readinessInputSchema(readinessExample),
			"output_schema": readinessOutputSchema(),
			"resource_caps": map[string]any{"wall_time_min": 0.5}, "deterministic": true, "idempotent": true,
			"render_hints": map[string]any{"primary_view": "table", "columns": []any{"id", "subject", "status", "reason"}},
			"examples":     []any{map[string]any{"description": "An SOP with an expired calibration and an operator trained on the previous version.", "args": readinessExample}},
		}),
		Doc: mustManifest(map[string]any{
			"title":       "SOP readiness check",
			"summary":     "Checks that an SOP version is ready for use: required sections present, every role assigned, equipment calibrated, every assigned person trained on this version, approvals by the required roles, effective and review dates in order.",
			"domain":      "quality_assurance",
			"inputs":      "sop_id, version, sections, roles [{name, people}], equipment [{id, last_calibrated, calibration_due | calibration_interval}], training_records [{person, sop_id, version, date}], approvals [{role, person, date, signature_present}], effective_date, review_date, as_of (dates YYYY-MM-DD).",
			"outputs":     "report: every check with passed | failed | not_applicable and the reason; status ready | not_ready.",
			"limitations": "Checks the evidence given; it does not read the SOP's text.",
			"disclaimers": []any{"A checklist of the evidence given, not an audit: missing evidence fails, it is never assumed"},
			"example":     map[string]any{"description": "Runs as written with runSkill.", "inputs": readinessExample},
		}),
	}
}

var readinessExample = map[string]any{
	"sop_id": "SOP-12", "version": "3",
	"sections":         []any{"Purpose", "Scope", "Responsibilities", "Definitions", "Procedure", "Records", "References", "Revision History"},
	"roles":            []any{map[string]any{"name": "operator", "people": []any{"A. Lee"}}},
	"equipment":        []any{map[string]any{"id": "EQ-7", "last_calibrated": "2025-10-01", "calibration_due": "2026-10-01"}},
	"training_records": []any{map[string]any{"person": "A. Lee", "sop_id": "SOP-12", "version": "2", "date": "2025-05-01"}},
	"approvals": []any{
		map[string]any{"role": "author", "person": "R. Roe", "date": "2026-02-01", "signature_present": true},
		map[string]any{"role": "reviewer", "person": "S. Sun", "date": "2026-02-03", "signature_present": true},
		map[string]any{"role": "quality_assurance", "person": "B. Khan", "date": "2026-02-05", "signature_present": true}},
	"effective_date": "2026-02-05", "review_date": "2028-02-05", "as_of": "2026-12-01",
}
