package jsonlogic

import (
	"bytes"
	"encoding/json"
)

// Limits on what a client-supplied filter may cost.
const (
	// MaxFilterBytes is the longest filter, in bytes of JSON, that Compile accepts.
	MaxFilterBytes = 64 << 10
	// MaxDepth is how deeply values may nest in a filter; the filter itself is at depth 1.
	MaxDepth = 32
	// MaxNodes is how many values (rules, literals and array literals) a filter may hold.
	MaxNodes = 1000
	// MaxSteps bounds the work of one evaluation. Each rule evaluated costs a
	// step, and work that grows with the size of a value is charged in
	// proportion: a step for each array element gone through (by in, merge,
	// missing, or converting an array to a string), a step for each 8 to 128
	// bytes of string copied, searched or compared, and a step for each byte of
	// a string longer than 32 bytes converted to a number. An evaluation that
	// runs out of steps is abandoned: Match reports false and Eval returns nil.
	// A simple filter takes a handful of steps; the most any evaluation can
	// cost is of the order of a millisecond.
	MaxSteps = 50_000
)

// rootPath names the filter itself in a CompileError's Path.
const rootPath = "filter"

// Filter is a compiled JSONLogic rule. It is immutable, so one Filter may be
// evaluated by many goroutines at once. A nil *Filter matches everything.
type Filter struct {
	root *node
}

// CompileError is why Compile refused a filter: Path says where in the filter
// the problem is, in JavaScript-like notation rooted at "filter" (for example
// `filter.and[1]` or `filter.and[0]["=="][1]`), and Reason what it is.
type CompileError struct {
	Path   string
	Reason string
}

// Error returns "<path>: <reason>".
func (e *CompileError) Error() string { return e.Path + ": " + e.Reason }

// Compile parses and checks a JSONLogic filter. An empty filter, or JSON null,
// is no filter: Compile returns a nil *Filter (which matches everything) and no
// error. Any other problem is reported as a *CompileError.
func Compile(raw json.RawMessage) (*Filter, error) {
	if len(raw) > MaxFilterBytes {
		return nil, errorf(rootPath, "filter is %d bytes long, more than the limit of %d", len(raw), MaxFilterBytes)
	}
	trimmed := bytes.Trim(raw, " \t\r\n")
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, nil
	}
	root, err := compile(trimmed)
	if err != nil {
		return nil, err
	}
	return &Filter{root: root}, nil
}

// Match reports whether the filter's result for data is truthy by JSONLogic's
// rules (null, false, 0, "" and [] are falsy; everything else, "0" included,
// is truthy). data is decoded JSON and is never modified. A nil filter matches
// everything; an evaluation that exceeds MaxSteps does not match.
func (f *Filter) Match(data any) (ok bool) {
	if f == nil {
		return true
	}
	// Evaluation is written not to panic; this is a last line of defence so that
	// one subscriber's filter can never take down the goroutine fanning out events.
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	v, done := f.evaluate(data)
	return done && truthy(v)
}

// Eval returns the filter's raw result for data: a bool, float64, string, nil,
// []any or map[string]any (or, where the result is a value taken from data,
// whatever type data holds there). The result may share memory with data and
// with the filter, so it must not be modified. A nil filter yields true; an
// evaluation that exceeds MaxSteps yields nil.
func (f *Filter) Eval(data any) (v any) {
	if f == nil {
		return true
	}
	defer func() {
		if recover() != nil {
			v = nil
		}
	}()
	v, done := f.evaluate(data)
	if !done {
		return nil
	}
	return v
}

// evaluate runs the filter without recovering from panics (the fuzz target uses
// it so that a panic is a failure) and reports whether it finished within MaxSteps.
func (f *Filter) evaluate(data any) (any, bool) {
	var e evaluator
	v := e.eval(f.root, data)
	return v, e.steps <= MaxSteps
}
