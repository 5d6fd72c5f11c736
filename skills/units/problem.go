package units

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The codes a [Problem] carries. They are snake_case and stable: the skills'
// JSON wrappers hand them to clients as the constraint of a ValidationFailed
// detail.
const (
	// CodeRequired: the quantity (or its value) is absent or null.
	CodeRequired = "required"
	// CodeNotAQuantity: the JSON is not a {value, unit} object (a string, an
	// array, an object with other fields, a value that is not a number).
	CodeNotAQuantity = "not_a_quantity"
	// CodeUnitRequired: a bare number where a quantity is required, or an
	// object whose unit is missing, null or empty.
	CodeUnitRequired = "unit_required"
	// CodeUnknownUnit: the unit is not in the whitelist (a suggestion is given
	// when a near match exists: MG → mg, hr → h).
	CodeUnknownUnit = "unknown_unit"
	// CodeIncompatibleUnit: the unit is known but measures another dimension
	// (a time unit for a dose).
	CodeIncompatibleUnit = "incompatible_unit"
	// CodeNotFinite: the number overflows float64 (JSON has no NaN or
	// infinity, but 1e999 is valid JSON).
	CodeNotFinite = "not_finite"
	// CodeOutOfRange: the number is finite but so large or so small (in
	// magnitude, other than zero) that converting it to another unit of its
	// dimension could overflow or underflow; or its literal is too long.
	CodeOutOfRange = "out_of_range"
	// CodeUnknownSpecies, CodeUnknownRoute and CodeUnknownDoseForm: a name
	// outside the closed vocabulary; Allowed lists the vocabulary.
	CodeUnknownSpecies  = "unknown_species"
	CodeUnknownRoute    = "unknown_route"
	CodeUnknownDoseForm = "unknown_dose_form"
)

// maxEchoBytes bounds the received value a Problem carries back.
const maxEchoBytes = 200

// Problem is one thing wrong with one input field. Its fields map one to one
// onto a ValidationFailed detail of the API (Code is the detail's constraint).
type Problem struct {
	// Path names the field, as a JSON path from the skill's arguments
	// (inputs.dose.unit, inputs.times.values[3]), exactly as the caller passed
	// it plus the suffixes this package adds (.value, .unit, .values[i]).
	Path string
	// Code is one of the Code* constants.
	Code string
	// Message says what was received and what is expected, in a sentence.
	Message string
	// Value is the JSON received at Path, when it is short enough to echo.
	Value json.RawMessage
	// Suggestion is a valid replacement when a near match exists ("mg" for
	// "MG", "h" for "hr", "rat" for "Rat"); empty otherwise.
	Suggestion string
	// Allowed lists the accepted values for a closed vocabulary (species,
	// routes, dose forms); nil for units, whose lists are long (see [Units]).
	Allowed []string
}

// Error formats the problem as "path: code: message".
func (p *Problem) Error() string {
	return fmt.Sprintf("%s: %s: %s", p.Path, p.Code, p.Message)
}

func newProblem(path, code string, value json.RawMessage, format string, args ...any) *Problem {
	p := &Problem{Path: path, Code: code, Message: fmt.Sprintf(format, args...)}
	if len(value) > 0 && len(value) <= maxEchoBytes {
		p.Value = append(json.RawMessage(nil), value...)
	}
	return p
}

// Problems is a list of problems, built up field by field; it is an error
// when not empty. Callers gather every field's problem before refusing, so a
// client sees everything wrong at once.
type Problems []Problem

// Add appends p; a nil p (a field that was fine) is ignored, so the result of
// every Parse* call can be added unconditionally.
func (ps *Problems) Add(p *Problem) {
	if p != nil {
		*ps = append(*ps, *p)
	}
}

// Err returns ps as an error, or nil when there are none. Return this rather
// than ps itself so an empty list is a nil error.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// Error joins the problems with "; ".
func (ps Problems) Error() string {
	parts := make([]string, len(ps))
	for i := range ps {
		parts[i] = ps[i].Error()
	}
	return strings.Join(parts, "; ")
}
