package qa

import (
	"fmt"
	"time"
)

// dateLayout is ISO 8601's calendar date, the only form accepted.
const dateLayout = "2006-01-02"

// parseDate reads a YYYY-MM-DD date. time.Parse wants exactly two digits for
// month and day and refuses days that do not exist (2026-02-30), which a
// regular expression would let through.
func parseDate(s string) (time.Time, error) {
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a calendar date YYYY-MM-DD", s)
	}
	return t, nil
}

// day formats a date for a reason.
func day(t time.Time) string { return t.Format(dateLayout) }

// add returns d + n units; months and years are calendar ones, clamped to the
// last day of the target month so 01-31 + 1 mo is 02-28 (or 02-29), not 03-03
// as time.AddDate would normalise it.
func (iv Interval) add(d time.Time) time.Time {
	switch iv.Unit {
	case "d":
		return d.AddDate(0, 0, iv.Value)
	case "wk":
		return d.AddDate(0, 0, 7*iv.Value)
	}
	months := iv.Value
	if iv.Unit == "a" {
		months *= 12
	}
	first := time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, months, 0)
	last := first.AddDate(0, 1, -1).Day()
	dd := d.Day()
	if dd > last {
		dd = last
	}
	return time.Date(first.Year(), first.Month(), dd, 0, 0, 0, 0, time.UTC)
}

// String is the interval as written in the input, for reasons.
func (iv Interval) String() string { return fmt.Sprintf("%d %s", iv.Value, iv.Unit) }

// IntervalUnits are the UCUM codes a calibration interval accepts: days,
// weeks, calendar months, calendar years.
var IntervalUnits = []string{"d", "wk", "mo", "a"}

// intervalUnits is IntervalUnits as a set.
var intervalUnits = func() map[string]bool {
	m := map[string]bool{}
	for _, u := range IntervalUnits {
		m[u] = true
	}
	return m
}()
