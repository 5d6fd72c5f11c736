package qa

// Status is a check's outcome.
type Status string

// Check outcomes.
const (
	Passed        Status = "passed"
	Failed        Status = "failed"
	NotApplicable Status = "not_applicable"
)

// Overall statuses of a Report.
const (
	Ready    = "ready"
	NotReady = "not_ready"
)

// Check ids, one per kind of check; Subject says which item a check is about.
const (
	CheckSectionPresent          = "section_present"           // subject: the required section
	CheckRolesDeclared           = "roles_declared"            // subject: the SOP id
	CheckRoleAssigned            = "role_assigned"             // subject: the role
	CheckEquipmentCalibrated     = "equipment_calibrated"      // subject: the equipment id
	CheckPersonTrained           = "person_trained"            // subject: the person
	CheckApproval                = "approval"                  // subject: the required role
	CheckApprovalsIndependent    = "approvals_independent"     // subject: the SOP id
	CheckEffectiveNotFuture      = "effective_not_future"      // subject: the SOP id
	CheckEffectiveAfterApprovals = "effective_after_approvals" // subject: the SOP id
	CheckReviewNotOverdue        = "review_not_overdue"        // subject: the SOP id
)

// CheckIDs lists every check id.
var CheckIDs = []string{
	CheckSectionPresent, CheckRolesDeclared, CheckRoleAssigned, CheckEquipmentCalibrated, CheckPersonTrained,
	CheckApproval, CheckApprovalsIndependent, CheckEffectiveNotFuture, CheckEffectiveAfterApprovals, CheckReviewNotOverdue,
}

// Statuses lists a check's outcomes.
var Statuses = []Status{Passed, Failed, NotApplicable}

// Check is one line of the checklist.
type Check struct {
	ID      string `json:"id"`
	Subject string `json:"subject"`
	Status  Status `json:"status"`
	// Reason says why, with the dates and names involved, in a sentence a
	// reviewer can act on.
	Reason string `json:"reason"`
}

// Report is the checklist for one SOP version as of one date.
type Report struct {
	LogicVersion string `json:"logic_version"`
	SOPID        string `json:"sop_id"`
	Version      string `json:"version"`
	AsOf         string `json:"as_of"`
	// Status is Ready when no check failed, NotReady otherwise.
	Status        string `json:"status"`
	Passed        int    `json:"passed"`
	Failed        int    `json:"failed"`
	NotApplicable int    `json:"not_applicable"`
	// Checks in a fixed order: sections, roles, equipment, training,
	// approvals, then the document's dates.
	Checks []Check `json:"checks"`
	// RequiredSections and RequiredApprovalRoles are the policy applied.
	RequiredSections      []string `json:"required_sections"`
	RequiredApprovalRoles []string `json:"required_approval_roles"`
}

// CheckReadiness validates in and runs every check on it. Input it refuses
// returns a *[problem.Error] and no report; otherwise the report lists every
// check, and its Status is Ready only if none failed.
func CheckReadiness(in Input) (*Report, error) {
	f, err := validate(in)
	if err != nil {
		return nil, err
	}
	r := &Report{
		LogicVersion:          LogicVersion,
		SOPID:                 in.SOPID,
		Version:               in.Version,
		AsOf:                  in.AsOf,
		RequiredSections:      append([]string(nil), RequiredSections...),
		RequiredApprovalRoles: append([]string(nil), f.approvalRoles...),
	}
	r.Checks = append(r.Checks, checkSections(f)...)
	r.Checks = append(r.Checks, checkRoles(f)...)
	r.Checks = append(r.Checks, checkEquipment(f)...)
	r.Checks = append(r.Checks, checkTraining(f)...)
	approvals, approved := checkApprovals(f)
	r.Checks = append(r.Checks, approvals...)
	r.Checks = append(r.Checks, checkDates(f, approved)...)
	for _, c := range r.Checks {
		switch c.Status {
		case Passed:
			r.Passed++
		case Failed:
			r.Failed++
		case NotApplicable:
			r.NotApplicable++
		}
	}
	r.Status = Ready
	if r.Failed > 0 {
		r.Status = NotReady
	}
	return r, nil
}
