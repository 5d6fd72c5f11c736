package data

import (
	"fmt"
	"unicode/utf8"
)

// Violation codes.
const (
	// The table as a whole (Row 0).
	ViolationHeaderMissing     = "header_missing"      // the text has no header row
	ViolationColumnMissing     = "column_missing"      // a spec column is not in the header
	ViolationColumnUnexpected  = "column_unexpected"   // a header column the spec does not declare
	ViolationColumnDuplicate   = "column_duplicate"    // a header column name repeated (the first is checked)
	ViolationUnitMissing       = "unit_missing"        // the spec gives a unit, the dataset declares none
	ViolationUnitMismatch      = "unit_mismatch"       // the dataset declares a different unit
	ViolationUnitUnexpected    = "unit_unexpected"     // the dataset declares a unit for a column the spec gives none
	ViolationUnitUnknownColumn = "unit_unknown_column" // the dataset declares a unit for a column not in the spec
	// One row.
	ViolationCSVSyntax    = "csv_syntax"        // a stray or unterminated quote
	ViolationRaggedRow    = "ragged_row"        // a row with more or fewer fields than the header (its cells are not checked)
	ViolationRequired     = "required_missing"  // an empty cell in a required column
	ViolationType         = "type_mismatch"     // a cell that is not a value of the column's type
	ViolationBelowMin     = "below_min"         // a value less than min
	ViolationAboveMax     = "above_max"         // a value greater than max
	ViolationNotAllowed   = "value_not_allowed" // a value not in the allowed list
	ViolationDuplicateKey = "duplicate_key"     // a unique key's values seen on an earlier row
)

// ViolationCodes lists every violation code.
var ViolationCodes = []string{
	ViolationHeaderMissing, ViolationColumnMissing, ViolationColumnUnexpected, ViolationColumnDuplicate,
	ViolationUnitMissing, ViolationUnitMismatch, ViolationUnitUnexpected, ViolationUnitUnknownColumn,
	ViolationCSVSyntax, ViolationRaggedRow, ViolationRequired, ViolationType, ViolationBelowMin, ViolationAboveMax,
	ViolationNotAllowed, ViolationDuplicateKey,
}

// Violation is one way the table does not conform.
type Violation struct {
	// Row is the 1-based data row (the first row after the header is 1);
	// 0 for the table as a whole (header, columns, units).
	Row int `json:"row"`
	// Line is the CSV line the row starts on (the header is line 1; a quoted
	// field can span lines); 0 for a declared unit, which is not in the CSV.
	Line int `json:"line"`
	// Column is the column concerned, empty for a whole row.
	Column string `json:"column,omitempty"`
	// Key lists a unique key's columns, for duplicate_key.
	Key   []string `json:"key,omitempty"`
	Code  string   `json:"code"`
	Value string   `json:"value,omitempty"`
	// Message says what is wrong and what was expected.
	Message string `json:"message"`
}

// Report is the outcome of one check.
type Report struct {
	LogicVersion string `json:"logic_version"`
	// Conforms is true when there is no violation at all.
	Conforms bool `json:"conforms"`
	// Rows is the number of data rows read (records after the header).
	Rows int `json:"rows"`
	// Header is the header row as read.
	Header []string `json:"header"`
	// TotalViolations counts every violation; Violations lists the first
	// MaxViolations of them in table order; Truncated says some were left out.
	TotalViolations int         `json:"total_violations"`
	Violations      []Violation `json:"violations"`
	Truncated       bool        `json:"truncated"`
	// ViolationCounts counts violations by code.
	ViolationCounts map[string]int `json:"violation_counts"`
}

// collector counts every violation and keeps the first max.
type collector struct {
	r   *Report
	max int
}

func (c *collector) add(v Violation) {
	c.r.TotalViolations++
	c.r.ViolationCounts[v.Code]++
	if len(c.r.Violations) < c.max {
		v.Value = shorten(v.Value, maxValueLen)
		v.Message = shorten(v.Message, maxMessageLen)
		c.r.Violations = append(c.r.Violations, v)
	} else {
		c.r.Truncated = true
	}
}

// addf adds a violation with a formatted message.
func (c *collector) addf(row, line int, col, code, val, format string, args ...any) {
	c.add(Violation{Row: row, Line: line, Column: col, Code: code, Value: val, Message: fmt.Sprintf(format, args...)})
}

// maxValueLen and maxMessageLen bound the text a violation repeats, so one
// huge cell cannot fill the report.
const (
	maxValueLen   = 200
	maxMessageLen = 600
)

// shorten cuts s to at most n bytes on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
