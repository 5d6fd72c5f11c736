package qa

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/skills/problem"
)

// Malformed input is refused with the path and code of every problem, and
// no report.
func TestRefusesMalformedInput(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Input)
		path   string
		code   string
	}{
		{"missing as_of", func(in *Input) { in.AsOf = "" }, "as_of", CodeRequired},
		{"bad as_of", func(in *Input) { in.AsOf = "01/12/2026" }, "as_of", CodeInvalidDate},
		{"impossible day", func(in *Input) { in.EffectiveDate = "2026-02-30" }, "effective_date", CodeInvalidDate},
		{"date with time", func(in *Input) { in.ReviewDate = "2028-02-05T00:00:00Z" }, "review_date", CodeInvalidDate},
		{"unpadded date", func(in *Input) { in.ReviewDate = "2028-2-5" }, "review_date", CodeInvalidDate},
		{"missing sop id", func(in *Input) { in.SOPID = " " }, "sop_id", CodeRequired},
		{"missing version", func(in *Input) { in.Version = "" }, "version", CodeRequired},
		{"duplicate section", func(in *Input) { in.Sections = append(in.Sections, "revision-history") }, "sections[9]", CodeDuplicate},
		{"empty section", func(in *Input) { in.Sections[2] = " - " }, "sections[2]", CodeRequired},
		{"role without name", func(in *Input) { in.Roles[1].Name = "" }, "roles[1].name", CodeRequired},
		{"duplicate role", func(in *Input) { in.Roles[1].Name = "Operator" }, "roles[1].name", CodeDuplicate},
		{"empty person", func(in *Input) { in.Roles[0].People[1] = "" }, "roles[0].people[1]", CodeRequired},
		{"equipment without id", func(in *Input) { in.Equipment[1].ID = "" }, "equipment[1].id", CodeRequired},
		{"duplicate equipment", func(in *Input) { in.Equipment[1].ID = "EQ-7" }, "equipment[1].id", CodeDuplicate},
		{"bad calibration date", func(in *Input) { in.Equipment[0].CalibrationDue = "2027-13-01" }, "equipment[0].calibration_due", CodeInvalidDate},
		{"bad last calibration", func(in *Input) { in.Equipment[1].LastCalibrated = "yesterday" }, "equipment[1].last_calibrated", CodeInvalidDate},
		{"unknown interval unit", func(in *Input) { in.Equipment[1].CalibrationInterval.Unit = "month" }, "equipment[1].calibration_interval.unit", CodeUnknownUnit},
		{"interval unit case", func(in *Input) { in.Equipment[1].CalibrationInterval.Unit = "D" }, "equipment[1].calibration_interval.unit", CodeUnknownUnit},
		{"zero interval", func(in *Input) { in.Equipment[1].CalibrationInterval.Value = 0 }, "equipment[1].calibration_interval.value", CodeInvalidValue},
		{"training without person", func(in *Input) { in.TrainingRecords[0].Person = "" }, "training_records[0].person", CodeRequired},
		{"training without sop", func(in *Input) { in.TrainingRecords[0].SOPID = "" }, "training_records[0].sop_id", CodeRequired},
		{"training without version", func(in *Input) { in.TrainingRecords[0].Version = "" }, "training_records[0].version", CodeRequired},
		{"bad training date", func(in *Input) { in.TrainingRecords[2].Date = "2026-3-2" }, "training_records[2].date", CodeInvalidDate},
		{"approval without role", func(in *Input) { in.Approvals[0].Role = "" }, "approvals[0].role", CodeRequired},
		{"approval without person", func(in *Input) { in.Approvals[0].Person = "" }, "approvals[0].person", CodeRequired},
		{"bad approval date", func(in *Input) { in.Approvals[2].Date = "5 Feb 2026" }, "approvals[2].date", CodeInvalidDate},
		{"duplicate required role", func(in *Input) { in.RequiredApprovalRoles = []string{"qa", "QA"} }, "required_approval_roles[1]", CodeDuplicate},
		{"empty required role", func(in *Input) { in.RequiredApprovalRoles = []string{""} }, "required_approval_roles[0]", CodeRequired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := ready()
			tc.mutate(&in)
			r, err := CheckReadiness(in)
			var pe *problem.Error
			if !errors.As(err, &pe) || r != nil {
				t.Fatalf("got %v, %v; want a *problem.Error and no report", r, err)
			}
			if len(pe.Problems) != 1 || pe.Problems[0].Path != tc.path || pe.Problems[0].Code != tc.code {
				t.Fatalf("problems %+v, want one at %s with code %s", pe.Problems, tc.path, tc.code)
			}
			if pe.Problems[0].Message == "" {
				t.Error("a problem needs a message")
			}
			if want := "qa.check_readiness: invalid input: " + tc.path + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q, want it to begin %q", err, want)
			}
		})
	}
}

func TestEveryProblemIsListed(t *testing.T) {
	in := ready()
	in.AsOf, in.SOPID, in.Equipment[0].CalibrationDue = "", "", "x"
	_, err := CheckReadiness(in)
	var pe *problem.Error
	if !errors.As(err, &pe) || len(pe.Problems) != 3 {
		t.Fatalf("want three problems, got %v", err)
	}
}

func TestIntervalArithmetic(t *testing.T) {
	cases := []struct {
		from string
		iv   Interval
		want string
	}{
		{"2026-11-01", Interval{90, "d"}, "2027-01-30"}, // 29 days left in Nov + 31 Dec + 30 Jan
		{"2026-01-01", Interval{2, "wk"}, "2026-01-15"},
		{"2026-01-31", Interval{1, "mo"}, "2026-02-28"}, // clamped, not 03-03
		{"2028-01-31", Interval{1, "mo"}, "2028-02-29"}, // leap year
		{"2026-06-01", Interval{12, "mo"}, "2027-06-01"},
		{"2024-02-29", Interval{1, "a"}, "2025-02-28"},
		{"2026-03-31", Interval{18, "mo"}, "2027-09-30"},
	}
	for _, tc := range cases {
		from, _ := time.Parse(dateLayout, tc.from)
		if got := day(tc.iv.add(from)); got != tc.want {
			t.Errorf("%s + %s = %s, want %s", tc.from, tc.iv, got, tc.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"Revision History":   "revision_history",
		" revision-history ": "revision_history",
		"Quality  Assurance": "quality_assurance",
		"quality__assurance": "quality_assurance",
		"_Scope_":            "scope",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
