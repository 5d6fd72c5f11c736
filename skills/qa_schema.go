package skills

import (
	"strings"

	"github.com/scidex/substrate/skills/qa"
)

// Dates are YYYY-MM-DD; the pattern is the form, the check refuses a day
// that does not exist (2026-02-30). An optional date may be empty: missing
// evidence, which fails the check that needs it.
const (
	datePattern         = `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	optionalDatePattern = `^([0-9]{4}-[0-9]{2}-[0-9]{2})?$`
)

func dateField(desc string) js { return with(str(desc+" (YYYY-MM-DD)."), "pattern", datePattern) }

func optionalDate(desc string) js {
	return with(str(desc+" (YYYY-MM-DD, or empty)."), "pattern", optionalDatePattern)
}

// nonBlank is a required, non-blank text (the check trims it).
func nonBlank(desc string) js { return with(str(desc), "minLength", 1) }

// readinessInputSchema is qa.check_readiness's input schema (qa.Input).
func readinessInputSchema(example any) js {
	interval := closed("The calibration schedule: a positive whole number of days (d), weeks (wk), calendar months (mo) or years (a).", js{
		"value": with(integer("How many units."), "minimum", 1),
		"unit":  oneOfStrings("The UCUM code of the unit.", qa.IntervalUnits),
	}, "value", "unit")
	return args("An SOP version and the evidence that it can be used, judged as of a date.", js{
		"sop_id":   nonBlank("The SOP's id (e.g. SOP-12); training records must name it to count."),
		"version":  nonBlank("The SOP version checked (e.g. 3); training records must name it to count."),
		"sections": array("The section headings the SOP declares, compared after normalising case, spaces and hyphens; required: "+strings.Join(qa.RequiredSections, ", ")+".", nonBlank("A heading.")),
		"roles": array("The responsibilities the SOP names, each with the people assigned to it.", closed("A role.", js{
			"name":   nonBlank("The role's name (e.g. operator), unique."),
			"people": array("The people assigned, as their training records spell them; each must be trained on this version.", nonBlank("A person.")),
		}, "name")),
		"equipment": array("Every instrument the procedure uses.", closed("An instrument.", js{
			"id":                   nonBlank("The instrument's id (e.g. EQ-7), unique."),
			"name":                 str("A label shown in reasons."),
			"calibration_required": boolean("False when the instrument needs no calibration (its check is then not_applicable); default true."),
			"last_calibrated":      optionalDate("The date of the last calibration"),
			"calibration_due":      optionalDate("The date the next calibration is due; the calibration is valid through it"),
			"calibration_interval": interval,
		}, "id")),
		"training_records": array("The training records of the people involved; only those on this sop_id and version count.", closed("A training record.", js{
			"person":  nonBlank("Who was trained."),
			"sop_id":  nonBlank("The SOP trained on."),
			"version": nonBlank("The SOP version trained on."),
			"date":    optionalDate("The training's date; without one the record is not evidence"),
		}, "person", "sop_id", "version")),
		"approvals": array("The signatures on this version.", closed("An approval.", js{
			"role":              nonBlank("The role the person signs in (e.g. quality_assurance)."),
			"person":            nonBlank("Who signed."),
			"date":              optionalDate("The signature's date; without one the approval is not evidence"),
			"signature_present": boolean("Whether the signature itself is on file; false or absent: not evidence."),
		}, "role", "person")),
		"required_approval_roles": array("The roles that must approve this version (default: "+strings.Join(qa.DefaultApprovalRoles, ", ")+").", nonBlank("A role.")),
		"effective_date":          optionalDate("The date the SOP takes effect"),
		"review_date":             optionalDate("The date the SOP is due for periodic review"),
		"as_of":                   dateField("The date readiness is judged on; the wall clock is never read"),
	}, []string{"sop_id", "version", "as_of"}, example)
}

// readinessOutputSchema is qa.check_readiness's result.
func readinessOutputSchema() js {
	statuses := make([]string, len(qa.Statuses))
	for i, s := range qa.Statuses {
		statuses[i] = string(s)
	}
	overall := []string{qa.Ready, qa.NotReady}
	report := open("The checklist of one SOP version as of one date.", js{
		"logic_version":  with(str("The version of the checks."), "const", qa.LogicVersion),
		"sop_id":         str("The SOP's id."),
		"version":        str("The SOP version checked."),
		"as_of":          str("The date judged on."),
		"status":         oneOfStrings("ready when no check failed.", overall),
		"passed":         integer("How many checks passed."),
		"failed":         integer("How many failed."),
		"not_applicable": integer("How many did not apply."),
		"checks": array("Every check: sections, roles, equipment, training, approvals, then the document's dates.", open("One line of the checklist.", js{
			"id":      oneOfStrings("The kind of check.", qa.CheckIDs),
			"subject": str("The item checked (a section, role, instrument, person, or the SOP id)."),
			"status":  oneOfStrings("The outcome.", statuses),
			"reason":  str("Why, with the dates and names involved."),
		}, "id", "subject", "status", "reason")),
		"required_sections":       texts("The section headings required."),
		"required_approval_roles": texts("The approval roles required."),
	}, "logic_version", "sop_id", "version", "as_of", "status", "passed", "failed", "not_applicable", "checks", "required_sections", "required_approval_roles")
	return result("qa.check_readiness's result: the checklist and its overall status.", merge(common(qa.LogicVersion), js{
		"report": report,
		"status": oneOfStrings("ready only when no check failed; missing evidence fails.", overall),
	}), resultRequired("report", "status")...)
}
