package skills

import (
	"bytes"
	"encoding/json"
	"errors"

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
func refusalProblems(err error, path func(string) string) []runtimes.Problem {
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
// check: the problem names the field.
func decodeStrict(args json.RawMessage, v any) []runtimes.Problem {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return []runtimes.Problem{problemOf(ute.Field, "type", "must be "+ute.Type.String()+", got "+ute.Value)}
		}
		return []runtimes.Problem{problemOf("", "json", err.Error())}
	}
	return nil
}

// refused is a procedure's refusal after the argument check passed (it
// should not happen: the check runs the same validation); the call fails
// with the reason.
func refused(err error) error {
	return runtimes.Errorf("invalid_input", false, "%v", err)
}
