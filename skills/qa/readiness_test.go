package qa

import (
	"strings"
	"testing"
)

// ready is an SOP on which every check passes as of 2026-12-01.
func ready() Input {
	yes := true
	return Input{
		SOPID:   "SOP-12",
		Version: "3",
		Sections: []string{"Purpose", "Scope", "Responsibilities", "Definitions",
			"Procedure", "Records", "References", "Revision History", "Appendix A"},
		Roles: []Role{
			{Name: "operator", People: []string{"A. Lee", "C. Diaz"}},
			{Name: "supervisor", People: []string{"C. Diaz"}},
		},
		Equipment: []Equipment{
			{ID: "EQ-7", Name: "balance", LastCalibrated: "2026-06-01", CalibrationDue: "2027-06-01",
				CalibrationInterval: &Interval{Value: 12, Unit: "mo"}, CalibrationRequired: &yes},
			{ID: "EQ-9", LastCalibrated: "2026-11-01", CalibrationInterval: &Interval{Value: 90, Unit: "d"}},
		},
		TrainingRecords: []TrainingRecord{
			{Person: "A. Lee", SOPID: "SOP-12", Version: "2", Date: "2025-01-10"},
			{Person: "A. Lee", SOPID: "SOP-12", Version: "3", Date: "2026-03-01"},
			{Person: "C. Diaz", SOPID: "SOP-12", Version: "3", Date: "2026-03-02"},
		},
		Approvals: []Approval{
			{Role: "Author", Person: "R. Roe", Date: "2026-02-01", SignaturePresent: true},
			{Role: "Reviewer", Person: "S. Sun", Date: "2026-02-03", SignaturePresent: true},
			{Role: "Quality Assurance", Person: "B. Khan", Date: "2026-02-05", SignaturePresent: true},
		},
		EffectiveDate: "2026-02-05",
		ReviewDate:    "2028-02-05",
		AsOf:          "2026-12-01",
	}
}

func mustCheck(t *testing.T, in Input) *Report {
	t.Helper()
	r, err := CheckReadiness(in)
	if err != nil {
		t.Fatalf("CheckReadiness: %v", err)
	}
	return r
}

func find(r *Report, id, subject string) *Check {
	for i := range r.Checks {
		if r.Checks[i].ID == id && r.Checks[i].Subject == subject {
			return &r.Checks[i]
		}
	}
	return nil
}

func TestReadyWhenEveryCheckPasses(t *testing.T) {
	r := mustCheck(t, ready())
	if r.Status != Ready || r.Failed != 0 {
		for _, c := range r.Checks {
			t.Logf("%s %s %s: %s", c.ID, c.Subject, c.Status, c.Reason)
		}
		t.Fatalf("status %s with %d failed, want ready", r.Status, r.Failed)
	}
	// 8 sections, roles_declared + 2 roles, 2 equipment, 2 people, 3
	// approvals + independence, 3 date checks.
	if want := 8 + 3 + 2 + 2 + 4 + 3; len(r.Checks) != want || r.Passed != want {
		t.Errorf("%d checks, %d passed; want %d passed", len(r.Checks), r.Passed, want)
	}
	if c := find(r, CheckEquipmentCalibrated, "EQ-9"); c == nil || !strings.Contains(c.Reason, "due 2027-01-30") {
		t.Errorf("EQ-9 due date from 2026-11-01 + 90 d should be 2027-01-30: %+v", c)
	}
	if r.LogicVersion != LogicVersion || r.SOPID != "SOP-12" || r.AsOf != "2026-12-01" {
		t.Errorf("report header %+v", r)
	}
}

// Each case breaks one piece of evidence of a ready SOP: exactly that check
// must fail, with a reason naming what is wrong, and the SOP is not ready.
func TestEachMissingOrBadEvidenceFails(t *testing.T) {
	cases := []struct {
		name        string
		mutate      func(*Input)
		id, subject string
		reason      string
		also        string // another check allowed to fail with it, "id subject"
	}{
		{"section missing", func(in *Input) { in.Sections = in.Sections[1:] },
			CheckSectionPresent, "purpose", "required section purpose is not declared in SOP-12 v3", ""},
		{"no roles", func(in *Input) { in.Roles = nil },
			CheckRolesDeclared, "SOP-12", "SOP-12 v3 declares no roles", CheckPersonTrained + " SOP-12"},
		{"role unassigned", func(in *Input) { in.Roles[1].People = nil },
			CheckRoleAssigned, "supervisor", "no person is assigned to role supervisor", ""},
		{"calibration expired", func(in *Input) {
			in.Equipment[0].LastCalibrated, in.Equipment[0].CalibrationDue = "2025-10-01", "2026-10-01"
		}, CheckEquipmentCalibrated, "EQ-7", "calibration of EQ-7 (balance) expired on 2026-10-01, before as_of 2026-12-01", ""},
		{"calibration expired by interval", func(in *Input) { in.Equipment[1].LastCalibrated = "2026-08-01" },
			CheckEquipmentCalibrated, "EQ-9", "calibration of EQ-9 expired on 2026-10-30, before as_of 2026-12-01", ""},
		{"no calibration date", func(in *Input) {
			in.Equipment[0].LastCalibrated, in.Equipment[0].CalibrationDue = "", ""
		}, CheckEquipmentCalibrated, "EQ-7", "no last calibration date recorded for EQ-7 (balance)", ""},
		{"due date only, no last calibration", func(in *Input) { in.Equipment[0].LastCalibrated = "" },
			CheckEquipmentCalibrated, "EQ-7", "no last calibration date recorded", ""},
		{"last calibration without due or interval", func(in *Input) { in.Equipment[1].CalibrationInterval = nil },
			CheckEquipmentCalibrated, "EQ-9", "neither a calibration_due date nor an interval", ""},
		{"calibration dated after as_of", func(in *Input) { in.Equipment[1].LastCalibrated = "2026-12-02" },
			CheckEquipmentCalibrated, "EQ-9", "dated 2026-12-02, after as_of 2026-12-01", ""},
		{"due later than interval allows", func(in *Input) { in.Equipment[0].CalibrationDue = "2027-06-02" },
			CheckEquipmentCalibrated, "EQ-7", "calibration_due 2027-06-02 of EQ-7 (balance) is later than last calibration 2026-06-01 + 12 mo = 2027-06-01", ""},
		{"due before last calibration", func(in *Input) { in.Equipment[0].CalibrationDue = "2026-05-01" },
			CheckEquipmentCalibrated, "EQ-7", "is before its last calibration on 2026-06-01", ""},
		{"no training record", func(in *Input) { in.TrainingRecords = in.TrainingRecords[:2] },
			CheckPersonTrained, "C. Diaz", "no training record for C. Diaz on SOP-12 v3", ""},
		{"trained on an older version only", func(in *Input) { in.TrainingRecords = append(in.TrainingRecords[:1:1], in.TrainingRecords[2]) },
			CheckPersonTrained, "A. Lee", "no training record for A. Lee on SOP-12 v3 (trained on SOP-12 v2 only)", ""},
		{"training on another SOP does not count", func(in *Input) { in.TrainingRecords[2].SOPID = "SOP-13" },
			CheckPersonTrained, "C. Diaz", "no training record for C. Diaz on SOP-12 v3", ""},
		{"undated training", func(in *Input) { in.TrainingRecords[2].Date = "" },
			CheckPersonTrained, "C. Diaz", "training record for C. Diaz on SOP-12 v3 has no date", ""},
		{"training after as_of", func(in *Input) { in.TrainingRecords[2].Date = "2027-01-01" },
			CheckPersonTrained, "C. Diaz", "dated 2027-01-01, after as_of 2026-12-01", ""},
		{"approval missing", func(in *Input) { in.Approvals = in.Approvals[:2] },
			CheckApproval, "quality_assurance", "no approval of SOP-12 v3 by role quality_assurance", CheckEffectiveAfterApprovals + " SOP-12"},
		{"approval unsigned", func(in *Input) { in.Approvals[1].SignaturePresent = false },
			CheckApproval, "reviewer", "the reviewer approval by S. Sun has no signature on file", CheckEffectiveAfterApprovals + " SOP-12"},
		{"approval undated", func(in *Input) { in.Approvals[1].Date = "" },
			CheckApproval, "reviewer", "the reviewer approval by S. Sun has no date", CheckEffectiveAfterApprovals + " SOP-12"},
		{"approval after as_of", func(in *Input) { in.Approvals[1].Date = "2026-12-05" },
			CheckApproval, "reviewer", "is dated 2026-12-05, after as_of 2026-12-01", CheckEffectiveAfterApprovals + " SOP-12"},
		{"author approves as QA too", func(in *Input) { in.Approvals[2].Person = "R. Roe" },
			CheckApprovalsIndependent, "SOP-12", "R. Roe approved as both author and quality_assurance", ""},
		{"no effective date", func(in *Input) { in.EffectiveDate = "" },
			CheckEffectiveNotFuture, "SOP-12", "SOP-12 v3 has no effective date", CheckEffectiveAfterApprovals + " SOP-12"},
		{"effective in the future", func(in *Input) { in.EffectiveDate = "2026-12-02" },
			CheckEffectiveNotFuture, "SOP-12", "effective date 2026-12-02 is after as_of 2026-12-01", ""},
		{"effective before an approval", func(in *Input) { in.EffectiveDate = "2026-02-04" },
			CheckEffectiveAfterApprovals, "SOP-12", "effective date 2026-02-04 is before the quality_assurance approval by B. Khan on 2026-02-05", ""},
		{"effective after approvals unprovable", func(in *Input) { in.Approvals[0].SignaturePresent = false },
			CheckEffectiveAfterApprovals, "SOP-12", "no valid author approval", CheckApproval + " author"},
		{"no review date", func(in *Input) { in.ReviewDate = "" },
			CheckReviewNotOverdue, "SOP-12", "SOP-12 v3 has no review date", ""},
		{"review before effective date", func(in *Input) { in.EffectiveDate, in.ReviewDate = "2026-12-10", "2026-12-05" },
			CheckReviewNotOverdue, "SOP-12", "review date 2026-12-05 is before effective date 2026-12-10", CheckEffectiveNotFuture + " SOP-12"},
		{"review overdue", func(in *Input) { in.ReviewDate = "2026-11-30" },
			CheckReviewNotOverdue, "SOP-12", "review was due on 2026-11-30, before as_of 2026-12-01", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := ready()
			tc.mutate(&in)
			r := mustCheck(t, in)
			c := find(r, tc.id, tc.subject)
			if c == nil {
				t.Fatalf("no %s check on %s", tc.id, tc.subject)
			}
			if c.Status != Failed || !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("got %s %q, want failed with %q", c.Status, c.Reason, tc.reason)
			}
			if r.Status != NotReady {
				t.Errorf("overall %s, want not_ready", r.Status)
			}
			for _, o := range r.Checks {
				if o.Status == Failed && o != *c && o.ID+" "+o.Subject != tc.also {
					t.Errorf("unexpected other failure %s %s: %s", o.ID, o.Subject, o.Reason)
				}
			}
		})
	}
}

func TestBoundaryDaysPass(t *testing.T) {
	in := ready()
	in.Equipment[0].CalibrationDue = "2026-12-01" // valid through its due day
	in.ReviewDate = "2026-12-01"                  // due today is not overdue
	in.EffectiveDate = "2026-12-01"               // in effect today
	in.TrainingRecords[1].Date = "2026-12-01"     // trained today
	if r := mustCheck(t, in); r.Status != Ready {
		t.Fatalf("boundary days should pass: %+v", r.Checks)
	}
}

func TestNotApplicable(t *testing.T) {
	in := ready()
	no := false
	in.Equipment = []Equipment{{ID: "TIMER-1", CalibrationRequired: &no}}
	r := mustCheck(t, in)
	if c := find(r, CheckEquipmentCalibrated, "TIMER-1"); c == nil || c.Status != NotApplicable {
		t.Errorf("TIMER-1 declared as not requiring calibration: %+v", c)
	}
	in.Equipment = nil
	r = mustCheck(t, in)
	if c := find(r, CheckEquipmentCalibrated, "SOP-12"); c == nil || c.Status != NotApplicable || r.Status != Ready {
		t.Errorf("no equipment: %+v, overall %s", c, r.Status)
	}
	if r.NotApplicable != 1 {
		t.Errorf("not_applicable count %d", r.NotApplicable)
	}
}

func TestCustomApprovalRoles(t *testing.T) {
	in := ready()
	in.RequiredApprovalRoles = []string{"Quality-Assurance", "head of department"}
	r := mustCheck(t, in)
	if c := find(r, CheckApproval, "head_of_department"); c == nil || c.Status != Failed {
		t.Errorf("head_of_department approval absent: %+v", c)
	}
	if c := find(r, CheckApproval, "author"); c != nil {
		t.Errorf("custom roles replace the defaults, got %+v", c)
	}
	if got := strings.Join(r.RequiredApprovalRoles, ","); got != "quality_assurance,head_of_department" {
		t.Errorf("required roles %s", got)
	}
}

func TestVersionLabel(t *testing.T) {
	in := ready()
	in.Version = "v3"
	for i := range in.TrainingRecords {
		in.TrainingRecords[i].Version = "v" + in.TrainingRecords[i].Version
	}
	in.TrainingRecords = in.TrainingRecords[:1]
	r := mustCheck(t, in)
	if c := find(r, CheckPersonTrained, "A. Lee"); c == nil || c.Reason != "no training record for A. Lee on SOP-12 v3 (trained on SOP-12 v2 only)" {
		t.Errorf("%+v", c)
	}
}
