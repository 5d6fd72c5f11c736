package data

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with the spec or options: the JSON path of the
// field (for example "spec.columns[2].type"), a snake_case code and a message
// naming the value and what was expected.
type Problem struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Problem codes for a refused Input.
const (
	CodeRequired           = "required"             // a column or key without a name, a spec without columns
	CodeUnknownType        = "unknown_type"         // a type not in Types
	CodeDuplicateColumn    = "duplicate_column"     // two spec columns with one name
	CodeInvalidBound       = "invalid_bound"        // a min or max that is not a value of the column's type
	CodeBoundNotApplicable = "bound_not_applicable" // a min or max on a string or boolean column
	CodeMinGreaterThanMax  = "min_greater_than_max" // min > max
	CodeInvalidAllowed     = "invalid_allowed"      // an allowed value that is not of the column's type, or listed twice
	CodeUnknownKeyColumn   = "unknown_key_column"   // a unique key naming a column the spec does not declare
	CodeDuplicateKeyColumn = "duplicate_key_column" // a column twice in one key
	CodeEmptyKey           = "empty_key"            // a unique key with no columns
	CodeOutOfRange         = "out_of_range"         // max_violations or progress_every outside its range
	CodeSourceConflict     = "source_conflict"      // both csv text and a Source reader given
)

// InputError is the error CheckConformance returns for a spec or options it
// refuses; it lists every problem found.
type InputError struct {
	Problems []Problem
}

// Error joins the problems into one line.
func (e *InputError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = fmt.Sprintf("%s: %s (%s)", p.Path, p.Message, p.Code)
	}
	return "data.check_conformance: invalid input: " + strings.Join(parts, "; ")
}
