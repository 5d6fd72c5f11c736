package qa

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with the input: the JSON path of the field (for
// example "equipment[2].calibration_due"), a snake_case code a client can
// switch on, and a message naming the value and what was expected.
type Problem struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Problem codes.
const (
	CodeRequired     = "required"      // an identifying field or as_of is empty
	CodeInvalidDate  = "invalid_date"  // a date is not YYYY-MM-DD or not a real day
	CodeDuplicate    = "duplicate"     // two items share an id, a role or a section name
	CodeUnknownUnit  = "unknown_unit"  // a calibration interval's unit is not d, wk, mo or a
	CodeInvalidValue = "invalid_value" // a calibration interval is not a positive whole number
)

// InputError is the error CheckReadiness returns for input it refuses; it
// lists every problem found, in input order.
type InputError struct {
	Problems []Problem
}

// Error joins the problems into one line per problem.
func (e *InputError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = fmt.Sprintf("%s: %s (%s)", p.Path, p.Message, p.Code)
	}
	return "qa.check_readiness: invalid input: " + strings.Join(parts, "; ")
}
