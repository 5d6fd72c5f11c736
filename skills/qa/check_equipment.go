package qa

import (
	"fmt"
	"strings"
	"time"
)

// checkEquipment reports one check per instrument. An SOP that lists no
// equipment has nothing to calibrate: one not_applicable check says so.
func checkEquipment(f *facts) []Check {
	if len(f.in.Equipment) == 0 {
		return []Check{{ID: CheckEquipmentCalibrated, Subject: f.in.SOPID, Status: NotApplicable,
			Reason: fmt.Sprintf("%s lists no equipment", f.label())}}
	}
	out := make([]Check, 0, len(f.in.Equipment))
	for i, e := range f.in.Equipment {
		status, reason := calibration(e, f.lastCal[i], f.calDue[i], f.asOf)
		out = append(out, Check{ID: CheckEquipmentCalibrated, Subject: strings.TrimSpace(e.ID), Status: status, Reason: reason})
	}
	return out
}

// calibration decides one instrument. Evidence needed: the date it was last
// calibrated (on or before as_of) and a due date, either declared or
// last_calibrated + interval; when both are given, the declared due date may
// not be later than the interval allows. The calibration is valid through its
// due date, so it has expired when the due date is before as_of.
func calibration(e Equipment, last, due date, asOf time.Time) (Status, string) {
	name := strings.TrimSpace(e.ID)
	if e.Name != "" {
		name = fmt.Sprintf("%s (%s)", name, e.Name)
	}
	if e.CalibrationRequired != nil && !*e.CalibrationRequired {
		return NotApplicable, fmt.Sprintf("%s is declared as not requiring calibration", name)
	}
	if !last.set {
		return Failed, fmt.Sprintf("no last calibration date recorded for %s", name)
	}
	if last.t.After(asOf) {
		return Failed, fmt.Sprintf("last calibration of %s is dated %s, after as_of %s: not evidence as of that date", name, day(last.t), day(asOf))
	}
	var byInterval date
	if iv := e.CalibrationInterval; iv != nil {
		byInterval = date{t: iv.add(last.t), set: true}
	}
	until := due
	switch {
	case !due.set && !byInterval.set:
		return Failed, fmt.Sprintf("%s was calibrated on %s but has neither a calibration_due date nor an interval: its due date is unknown", name, day(last.t))
	case !due.set:
		until = byInterval
	case due.t.Before(last.t):
		return Failed, fmt.Sprintf("calibration_due %s of %s is before its last calibration on %s", day(due.t), name, day(last.t))
	case byInterval.set && due.t.After(byInterval.t):
		return Failed, fmt.Sprintf("calibration_due %s of %s is later than last calibration %s + %s = %s", day(due.t), name, day(last.t), e.CalibrationInterval, day(byInterval.t))
	}
	if until.t.Before(asOf) {
		return Failed, fmt.Sprintf("calibration of %s expired on %s, before as_of %s", name, day(until.t), day(asOf))
	}
	return Passed, fmt.Sprintf("%s calibrated on %s, due %s, not before as_of %s", name, day(last.t), day(until.t), day(asOf))
}
