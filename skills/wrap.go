package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/skills/problem"
)

// problem is one refusal of a skill's arguments, as the in_process runtime's
// argument check reports it (runtimes.Problem, paths relative to args).
func problemOf(path, code, msg string) runtimes.Problem {
	return runtimes.Problem{Path: trimInputs(path), Constraint: code, Message: msg}
}

// refusalProblems is a procedure's refusal (a *problem.Error) as the
// argument check's problems, each path mapped by path (nil keeps it) before
// problemOf trims it; any other error, or none, gives none, and the check
// passes it on to the run.
//
// Each problem carries the value received: the JSON the caller gave at its
// path in args (a quantity as written, {value, unit}), or else the value the
// procedure reported; and the procedure's suggestion, if it made one.
func refusalProblems(err error, path func(string) string, args json.RawMessage) []runtimes.Problem {
	var pe *problem.Error
	if !errors.As(err, &pe) {
		return nil
	}
	out := make([]runtimes.Problem, len(pe.Problems))
	for i, p := range pe.Problems {
		if path != nil {
			p.Path = path(p.Path)
		}
		out[i] = problemOf(p.Path, p.Code, p.Message)
		out[i].Suggestion = p.Suggestion
		if v := valueAt(args, out[i].Path); v != nil {
			out[i].Value = v
		} else if p.Value != nil {
			if b, err := json.Marshal(p.Value); err == nil && len(b) <= maxEchoBytes {
				out[i].Value = b
			}
		}
	}
	return out
}

// trimInputs drops the "inputs." prefix the procedures' paths carry: the
// dispatcher roots argument paths at input.args (runSkill at input.inputs).
func trimInputs(p string) string {
	for _, pre := range []string{"inputs.", "inputs"} {
		if len(p) >= len(pre) && p[:len(pre)] == pre {
			return p[len(pre):]
		}
	}
	return p
}

// decodeStrict decodes args into v, refusing unknown fields, as an argument
// check: its shape is checked first (shapeProblems), so every problem names
// the field's full path, what was received and what is wanted, in the
// caller's terms.
func decodeStrict(args json.RawMessage, v any) []runtimes.Problem {
	return decodeStrictAt("", args, v)
}

// decodeStrictAt is decodeStrict for a part of the arguments at prefix
// ("profiles[2]").
func decodeStrictAt(prefix string, raw json.RawMessage, v any) []runtimes.Problem {
	if !json.Valid(raw) {
		return []runtimes.Problem{{Path: prefix, Constraint: "type", Message: "expected a JSON object of the arguments"}}
	}
	if ps := shapeProblems(prefix, raw, v); len(ps) > 0 {
		return ps
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// The shape check mirrors the decoder; what it lets through and the
		// decoder refuses (a number too large for its type) is said plainly.
		msg := strings.TrimPrefix(err.Error(), "json: ")
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			msg = fmt.Sprintf("expected %s, got %s", describeType(ute.Type), ute.Value)
		}
		return []runtimes.Problem{{Path: prefix, Constraint: "type", Message: msg, Value: valueAt(raw, "")}}
	}
	return nil
}

// refused is a procedure's refusal after the argument check passed (it
// should not happen: the check runs the same validation); the call fails
// with the reason.
func refused(err error) error {
	return runtimes.Errorf("invalid_input", false, "%v", err)
}
