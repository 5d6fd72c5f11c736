package qa

import (
	"fmt"
	"strings"
	"time"

	"github.com/scidex/substrate/skills/problem"
)

// date is an optional parsed date: set is false when the input left it empty.
type date struct {
	t   time.Time
	set bool
}

// facts is the input after validation, with every date parsed once.
type facts struct {
	in                Input
	asOf              time.Time
	effective, review date
	lastCal, calDue   []date // by equipment index
	trainedOn         []date // by training record index
	approvedOn        []date // by approval index
	approvalRoles     []string
}

// checker collects problems while validating.
type checker struct{ problem.List }

// required refuses an empty identifying field.
func (c *checker) required(path, v, what string) {
	if strings.TrimSpace(v) == "" {
		c.Add(path, CodeRequired, nil, "%s is required", what)
	}
}

// date parses an optional date; a non-empty malformed one is a problem.
func (c *checker) date(path, v string) date {
	if v == "" {
		return date{}
	}
	t, err := parseDate(v)
	if err != nil {
		c.Add(path, CodeInvalidDate, nil, "%v", err)
		return date{}
	}
	return date{t: t, set: true}
}

// validate checks the whole input and returns its facts, or every problem.
func validate(in Input) (*facts, error) {
	c := &checker{}
	f := &facts{in: in}
	if in.AsOf == "" {
		c.Add("as_of", CodeRequired, nil, "as_of, the date readiness is judged on (YYYY-MM-DD), is required: the wall clock is never used")
	} else {
		f.asOf = c.date("as_of", in.AsOf).t
	}
	c.required("sop_id", in.SOPID, "the SOP's id")
	c.required("version", in.Version, "the SOP's version")
	f.effective = c.date("effective_date", in.EffectiveDate)
	f.review = c.date("review_date", in.ReviewDate)

	seen := map[string]int{}
	for i, s := range in.Sections {
		p := fmt.Sprintf("sections[%d]", i)
		n := normalize(s)
		if n == "" {
			c.Add(p, CodeRequired, nil, "a section heading is empty")
			continue
		}
		if j, ok := seen[n]; ok {
			c.Add(p, CodeDuplicate, nil, "section %q is declared twice (also sections[%d])", s, j)
			continue
		}
		seen[n] = i
	}

	roles := map[string]int{}
	for i, r := range in.Roles {
		p := fmt.Sprintf("roles[%d]", i)
		c.required(p+".name", r.Name, "a role's name")
		if n := normalize(r.Name); n != "" {
			if j, ok := roles[n]; ok {
				c.Add(p+".name", CodeDuplicate, nil, "role %q is declared twice (also roles[%d])", r.Name, j)
			}
			roles[n] = i
		}
		for k, person := range r.People {
			c.required(fmt.Sprintf("%s.people[%d]", p, k), person, "an assigned person's name")
		}
	}

	ids := map[string]int{}
	for i, e := range in.Equipment {
		p := fmt.Sprintf("equipment[%d]", i)
		c.required(p+".id", e.ID, "an equipment id")
		if id := strings.TrimSpace(e.ID); id != "" {
			if j, ok := ids[id]; ok {
				c.Add(p+".id", CodeDuplicate, nil, "equipment id %q is listed twice (also equipment[%d])", e.ID, j)
			}
			ids[id] = i
		}
		f.lastCal = append(f.lastCal, c.date(p+".last_calibrated", e.LastCalibrated))
		f.calDue = append(f.calDue, c.date(p+".calibration_due", e.CalibrationDue))
		if iv := e.CalibrationInterval; iv != nil {
			if !intervalUnits[iv.Unit] {
				c.Add(p+".calibration_interval.unit", CodeUnknownUnit, nil, "unit %q is not one of d, wk, mo, a (UCUM codes, case-sensitive)", iv.Unit)
			}
			if iv.Value <= 0 {
				c.Add(p+".calibration_interval.value", CodeInvalidValue, nil, "interval %d must be a positive whole number", iv.Value)
			}
		}
	}

	for i, t := range in.TrainingRecords {
		p := fmt.Sprintf("training_records[%d]", i)
		c.required(p+".person", t.Person, "a training record's person")
		c.required(p+".sop_id", t.SOPID, "a training record's SOP id")
		c.required(p+".version", t.Version, "a training record's SOP version")
		f.trainedOn = append(f.trainedOn, c.date(p+".date", t.Date))
	}

	for i, a := range in.Approvals {
		p := fmt.Sprintf("approvals[%d]", i)
		c.required(p+".role", a.Role, "an approval's role")
		c.required(p+".person", a.Person, "an approval's person")
		f.approvedOn = append(f.approvedOn, c.date(p+".date", a.Date))
	}

	f.approvalRoles = DefaultApprovalRoles
	if len(in.RequiredApprovalRoles) > 0 {
		f.approvalRoles = nil
		seenRole := map[string]bool{}
		for i, r := range in.RequiredApprovalRoles {
			p := fmt.Sprintf("required_approval_roles[%d]", i)
			n := normalize(r)
			switch {
			case n == "":
				c.Add(p, CodeRequired, nil, "a required approval role is empty")
			case seenRole[n]:
				c.Add(p, CodeDuplicate, nil, "approval role %q is required twice", r)
			default:
				seenRole[n] = true
				f.approvalRoles = append(f.approvalRoles, n)
			}
		}
	}

	if err := c.Err(procedure); err != nil {
		return nil, err
	}
	return f, nil
}
