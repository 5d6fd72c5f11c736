package qa

import (
	"fmt"
	"strings"
)

// checkSections reports one check per required section.
func checkSections(f *facts) []Check {
	declared := map[string]bool{}
	for _, s := range f.in.Sections {
		declared[normalize(s)] = true
	}
	out := make([]Check, 0, len(RequiredSections))
	for _, s := range RequiredSections {
		c := Check{ID: CheckSectionPresent, Subject: s, Status: Passed,
			Reason: fmt.Sprintf("section %s is declared", s)}
		if !declared[s] {
			c.Status, c.Reason = Failed, fmt.Sprintf("required section %s is not declared in %s", s, f.label())
		}
		out = append(out, c)
	}
	return out
}

// checkRoles fails an SOP that names no roles, and each role with nobody
// assigned to it.
func checkRoles(f *facts) []Check {
	if len(f.in.Roles) == 0 {
		return []Check{{ID: CheckRolesDeclared, Subject: f.in.SOPID, Status: Failed,
			Reason: fmt.Sprintf("%s declares no roles: responsibilities are not assigned", f.label())}}
	}
	out := []Check{{ID: CheckRolesDeclared, Subject: f.in.SOPID, Status: Passed,
		Reason: fmt.Sprintf("%s declares %d role(s)", f.label(), len(f.in.Roles))}}
	for _, r := range f.in.Roles {
		people := distinctPeople([]Role{r})
		c := Check{ID: CheckRoleAssigned, Subject: r.Name, Status: Passed,
			Reason: fmt.Sprintf("role %s is assigned to %s", r.Name, strings.Join(people, ", "))}
		if len(people) == 0 {
			c.Status, c.Reason = Failed, fmt.Sprintf("no person is assigned to role %s", r.Name)
		}
		out = append(out, c)
	}
	return out
}

// checkDates checks the effective date against as_of and the approvals, and
// the review date against as_of. approved holds each required role's valid
// approval, or is missing the role.
func checkDates(f *facts, approved map[string]approvalAt) []Check {
	id := f.in.SOPID
	notFuture := Check{ID: CheckEffectiveNotFuture, Subject: id}
	after := Check{ID: CheckEffectiveAfterApprovals, Subject: id}
	switch {
	case !f.effective.set:
		notFuture.Status, notFuture.Reason = Failed, fmt.Sprintf("%s has no effective date", f.label())
		after.Status, after.Reason = Failed, fmt.Sprintf("%s has no effective date to compare with its approvals", f.label())
	default:
		eff := f.effective.t
		if eff.After(f.asOf) {
			notFuture.Status, notFuture.Reason = Failed, fmt.Sprintf("effective date %s is after as_of %s: %s is not yet in effect", day(eff), day(f.asOf), f.label())
		} else {
			notFuture.Status, notFuture.Reason = Passed, fmt.Sprintf("effective since %s, on or before as_of %s", day(eff), day(f.asOf))
		}
		after.Status, after.Reason = Passed, fmt.Sprintf("effective date %s is on or after every required approval", day(eff))
		for _, role := range f.approvalRoles {
			a, ok := approved[role]
			if !ok {
				after.Status, after.Reason = Failed, fmt.Sprintf("cannot confirm effective date %s follows approval: no valid %s approval", day(eff), role)
				break
			}
			if eff.Before(a.on) {
				after.Status, after.Reason = Failed, fmt.Sprintf("effective date %s is before the %s approval by %s on %s", day(eff), role, a.person, day(a.on))
				break
			}
		}
	}

	review := Check{ID: CheckReviewNotOverdue, Subject: id}
	switch {
	case !f.review.set:
		review.Status, review.Reason = Failed, fmt.Sprintf("%s has no review date", f.label())
	case f.review.t.Before(f.asOf):
		review.Status, review.Reason = Failed, fmt.Sprintf("review was due on %s, before as_of %s: the review is overdue", day(f.review.t), day(f.asOf))
	case f.effective.set && f.review.t.Before(f.effective.t):
		review.Status, review.Reason = Failed, fmt.Sprintf("review date %s is before effective date %s", day(f.review.t), day(f.effective.t))
	default:
		review.Status, review.Reason = Passed, fmt.Sprintf("review due on %s, not before as_of %s", day(f.review.t), day(f.asOf))
	}
	return []Check{notFuture, after, review}
}

// label names the document in reasons: "SOP-12 v3".
func (f *facts) label() string { return sopLabel(f.in.SOPID, f.in.Version) }

// sopLabel writes "v" before a version that does not already start with one.
func sopLabel(id, version string) string {
	if strings.HasPrefix(version, "v") || strings.HasPrefix(version, "V") {
		return id + " " + version
	}
	return id + " v" + version
}

// distinctPeople lists the people assigned to roles, trimmed, each once, in
// order of first appearance.
func distinctPeople(roles []Role) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range roles {
		for _, p := range r.People {
			p = strings.TrimSpace(p)
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}
