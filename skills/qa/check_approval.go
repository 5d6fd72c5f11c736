package qa

import (
	"fmt"
	"strings"
	"time"
)

// approvalAt is a required role's valid approval.
type approvalAt struct {
	person string
	on     time.Time
}

// checkApprovals reports one check per required role and whether the
// approvers are independent, and returns each role's valid approval (the
// earliest signed, dated one on or before as_of) for the effective-date check.
func checkApprovals(f *facts) ([]Check, map[string]approvalAt) {
	approved := map[string]approvalAt{}
	var out []Check
	for _, role := range f.approvalRoles {
		c := Check{ID: CheckApproval, Subject: role}
		var why string
		for i, a := range f.in.Approvals {
			if normalize(a.Role) != role {
				continue
			}
			person, d := strings.TrimSpace(a.Person), f.approvedOn[i]
			switch {
			case !a.SignaturePresent:
				why = orFirst(why, fmt.Sprintf("the %s approval by %s has no signature on file", role, person))
			case !d.set:
				why = orFirst(why, fmt.Sprintf("the %s approval by %s has no date", role, person))
			case d.t.After(f.asOf):
				why = orFirst(why, fmt.Sprintf("the %s approval by %s is dated %s, after as_of %s", role, person, day(d.t), day(f.asOf)))
			default:
				if prev, ok := approved[role]; !ok || d.t.Before(prev.on) {
					approved[role] = approvalAt{person: person, on: d.t}
				}
			}
		}
		if a, ok := approved[role]; ok {
			c.Status, c.Reason = Passed, fmt.Sprintf("approved as %s by %s on %s, signed", role, a.person, day(a.on))
		} else {
			c.Status, c.Reason = Failed, orFirst(why, fmt.Sprintf("no approval of %s by role %s", f.label(), role))
		}
		out = append(out, c)
	}
	return append(out, independence(f, approved)), approved
}

// independence fails when one person's signature is the valid approval of
// two required roles: an author approving their own SOP as reviewer or QA
// defeats the point of a second signature.
func independence(f *facts, approved map[string]approvalAt) Check {
	c := Check{ID: CheckApprovalsIndependent, Subject: f.in.SOPID}
	if len(approved) < 2 {
		c.Status, c.Reason = NotApplicable, "fewer than two required roles have a valid approval, so there is nothing to compare"
		return c
	}
	byPerson := map[string]string{}
	for _, role := range f.approvalRoles {
		a, ok := approved[role]
		if !ok {
			continue
		}
		if other, dup := byPerson[a.person]; dup {
			c.Status, c.Reason = Failed, fmt.Sprintf("%s approved as both %s and %s: required approvals must come from different people", a.person, other, role)
			return c
		}
		byPerson[a.person] = role
	}
	c.Status, c.Reason = Passed, "every valid required approval is by a different person"
	return c
}

// orFirst keeps the first reason found.
func orFirst(have, next string) string {
	if have != "" {
		return have
	}
	return next
}
