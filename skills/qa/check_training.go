package qa

import (
	"fmt"
	"sort"
	"strings"
)

// checkTraining reports one check per person assigned to any role: each must
// have a dated training record on this SOP id and this exact version, dated on
// or before as_of. Training on another version does not count.
func checkTraining(f *facts) []Check {
	people := distinctPeople(f.in.Roles)
	if len(people) == 0 {
		return []Check{{ID: CheckPersonTrained, Subject: f.in.SOPID, Status: NotApplicable,
			Reason: fmt.Sprintf("no person is assigned to a role of %s, so nobody's training can be checked", f.label())}}
	}
	out := make([]Check, 0, len(people))
	for _, p := range people {
		status, reason := trained(f, p)
		out = append(out, Check{ID: CheckPersonTrained, Subject: p, Status: status, Reason: reason})
	}
	return out
}

// trained decides one person, giving the most useful reason when they fail:
// a record dated after as_of, an undated record, training on other versions
// only, or no record at all.
func trained(f *facts, person string) (Status, string) {
	want := f.label()
	var undated, future bool
	var futureDay string
	otherVersions := map[string]bool{}
	for i, t := range f.in.TrainingRecords {
		if strings.TrimSpace(t.Person) != person || strings.TrimSpace(t.SOPID) != strings.TrimSpace(f.in.SOPID) {
			continue
		}
		if strings.TrimSpace(t.Version) != strings.TrimSpace(f.in.Version) {
			otherVersions[strings.TrimSpace(t.Version)] = true
			continue
		}
		d := f.trainedOn[i]
		switch {
		case !d.set:
			undated = true
		case d.t.After(f.asOf):
			future, futureDay = true, day(d.t)
		default:
			return Passed, fmt.Sprintf("%s trained on %s on %s", person, want, day(d.t))
		}
	}
	switch {
	case future:
		return Failed, fmt.Sprintf("training of %s on %s is dated %s, after as_of %s", person, want, futureDay, day(f.asOf))
	case undated:
		return Failed, fmt.Sprintf("training record for %s on %s has no date", person, want)
	case len(otherVersions) > 0:
		vs := make([]string, 0, len(otherVersions))
		for v := range otherVersions {
			vs = append(vs, sopLabel(f.in.SOPID, v))
		}
		sort.Strings(vs)
		return Failed, fmt.Sprintf("no training record for %s on %s (trained on %s only)", person, want, strings.Join(vs, ", "))
	}
	return Failed, fmt.Sprintf("no training record for %s on %s", person, want)
}
