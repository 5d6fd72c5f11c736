package units

import (
	"encoding/json"
	"strings"
)

// refuseTerm builds the problem for a name outside a closed vocabulary: the
// code, the allowed names, and a suggestion when the name is one of them
// written differently (Rat, guinea pig, mini-pig) or a common alias (po for
// oral, cynomolgus for monkey).
func refuseTerm(path, code, what, name string, allowed []string, aliases map[string]string) *Problem {
	raw, _ := json.Marshal(name)
	p := newProblem(path, code, raw, "%q is not a known %s; expected one of %s", name, what, strings.Join(allowed, ", "))
	if name == "" {
		p.Message = "the " + what + " is missing; expected one of " + strings.Join(allowed, ", ")
	}
	p.Allowed = append([]string(nil), allowed...)
	key := strings.ToLower(strings.TrimSpace(name))
	key = strings.NewReplacer(" ", "_", "-", "_", ".", "").Replace(key)
	for _, a := range allowed {
		if key == a {
			p.Suggestion = a
		}
	}
	if p.Suggestion == "" {
		p.Suggestion = aliases[key]
	}
	if p.Suggestion != "" {
		p.Message += "; did you mean \"" + p.Suggestion + "\"?"
	}
	return p
}
