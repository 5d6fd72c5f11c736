// Package problem is the refusal the skill procedures (skills/data,
// skills/qa, skills/tox, skills/pk) return for input they will not compute
// on: every Problem found, each naming the JSON path of the field, a
// snake_case code a program can branch on and a message for a person, in
// one *Error, and nothing computed.
//
// The procedures refuse in the same shape so that the skill wrappers turn
// any of them into the runtime's argument problems one way, and a caller
// reads one type whichever procedure it called. Each procedure keeps its own
// codes: they are its vocabulary, documented beside the rules that report
// them. A procedure validates everything before it reports, so a caller
// fixes every field in one round.
//
// The richer units.Problem (a suggestion, the allowed values, the raw JSON
// received) stays in skills/units: it is about a field the vocabulary layer
// could not read at all, where these are about readable values that break a
// procedure's rule.
package problem

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with an input. Path is the field's JSON path
// in the procedure's own input (for example "spec.columns[2].type" or
// "inputs.studies[1].noael"); a caller that nests the input prefixes it.
type Problem struct {
	Path string `json:"path"`
	// Code is the rule broken, one of the procedure's Code constants.
	Code string `json:"code"`
	// Message names the value received and what was expected.
	Message string `json:"message"`
	// Value is the offending value when the procedure reports one (a
	// number, a string); it is left out of the JSON otherwise.
	Value any `json:"value,omitempty"`
	// Suggestion is a valid replacement when the procedure knows one (the
	// Table 1 name "monkey" for "rhesus"); empty otherwise.
	Suggestion string `json:"suggestion,omitempty"`
}

// List collects problems while an input is validated, in the order they
// are found. The zero List is empty and ready to use.
type List []Problem

// Add appends the problem at path with code and value (nil when there is
// none to report), its message formatted from format and args as by
// fmt.Sprintf.
func (l *List) Add(path, code string, value any, format string, args ...any) {
	*l = append(*l, Problem{Path: path, Code: code, Message: fmt.Sprintf(format, args...), Value: value})
}

// Suggest sets the suggestion of the problem added last (a no-op on an
// empty List), and says it in the message: "; did you mean "monkey"?".
func (l List) Suggest(s string) {
	if len(l) == 0 || s == "" {
		return
	}
	l[len(l)-1].Suggestion = s
	l[len(l)-1].Message += fmt.Sprintf("; did you mean %q?", s)
}

// Err is nil when l is empty, and otherwise an *Error from procedure
// listing l's problems.
func (l List) Err(procedure string) error {
	if len(l) == 0 {
		return nil
	}
	return &Error{Procedure: procedure, Problems: l}
}

// Error is a procedure's refusal of its input: every problem found. Callers
// reach it with errors.As.
type Error struct {
	// Procedure names who refused (a skill, "data.check_conformance", or a
	// package, "pk"), as the message's prefix; empty, the message is the
	// problems alone.
	Procedure string
	// Problems are every problem found, in the order they were found.
	Problems []Problem
}

// Error is "<procedure>: invalid input: " and then each problem as
// "<path>: <message> (<code>)", joined by "; ".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Procedure != "" {
		b.WriteString(e.Procedure + ": invalid input: ")
	}
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Path + ": " + p.Message + " (" + p.Code + ")")
	}
	return b.String()
}
