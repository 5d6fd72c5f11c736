package pk

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with the input: where (a JSON path relative to
// the profile, such as `times[3]`, or `profiles[2].conc[0]` from [NCAMany]),
// which rule (a snake_case code such as `unsorted_times`), the value received
// and a message saying what was expected. The caller prefixes the path with
// where the profile sits in its own request (for example `inputs.`).
type Problem struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// Value is the offending value when there is one (a number, a string).
	Value any `json:"value,omitempty"`
}

// ValidationError is returned, and nothing is computed, when the input breaks
// at least one rule. It lists every problem found, in input order.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = fmt.Sprintf("%s: %s (%s)", p.Path, p.Message, p.Code)
	}
	return "pk: invalid input: " + strings.Join(parts, "; ")
}

// The problem codes this package reports.
const (
	CodeLengthMismatch        = "length_mismatch"
	CodeTooFewPoints          = "too_few_points"
	CodeNotFinite             = "not_finite"
	CodeNegativeTime          = "negative_time"
	CodeUnsortedTimes         = "unsorted_times"
	CodeDuplicateTime         = "duplicate_time"
	CodeNegativeConcentration = "negative_concentration"
	CodeNonPositiveDose       = "non_positive_dose"
	CodeRouteRequired         = "route_required"
	CodeUnknownRoute          = "unknown_route"
	CodeNonPositiveLLOQ       = "non_positive_lloq"
	CodeBLQRuleRequired       = "blq_rule_required"
	CodeUnknownBLQRule        = "unknown_blq_rule"
	CodeLLOQRequired          = "lloq_required"
	CodeAUCMethodRequired     = "auc_method_required"
	CodeUnknownAUCMethod      = "unknown_auc_method"
	CodeLambdaZPointsRange    = "lambda_z_points_out_of_range"
	CodeNoQuantifiable        = "no_quantifiable_concentration"
	CodeNoProfiles            = "no_profiles"
	CodeDuplicateSubject      = "duplicate_subject"
	CodeUnitRequired          = "unit_required"
	CodeUnitNotPrintable      = "unit_not_printable"
	CodeResultMissing         = "result_missing"
	CodeResultProfileMismatch = "result_profile_mismatch"
)

// problems collects Problems while validating.
type problems []Problem

func (ps *problems) add(path, code string, value any, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Code: code, Message: fmt.Sprintf(format, args...), Value: value})
}

func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return &ValidationError{Problems: ps}
}
