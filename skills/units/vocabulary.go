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
	if p.Suggestion == "" {
		p.Suggestion = Nearest(name, allowed)
	}
	if p.Suggestion != "" {
		p.Message += "; did you mean \"" + p.Suggestion + "\"?"
	}
	return p
}

// Nearest is the one name nearest to s, or "": the same name in another
// case or spelling (Lambda-Z-Points → lambda_z_points), else the only name
// within a third of its length in edits (a transposition counts one), at
// least one.
func Nearest(s string, names []string) string {
	norm := func(x string) string {
		return strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(x)))
	}
	k := norm(s)
	for _, n := range names {
		if norm(n) == k {
			return n
		}
	}
	limit := len([]rune(k)) / 3
	if limit < 1 {
		limit = 1
	}
	best, bestD, tie := "", limit+1, false
	for _, n := range names {
		d := editDistance(k, norm(n))
		switch {
		case d < bestD:
			best, bestD, tie = n, d, false
		case d == bestD:
			tie = true
		}
	}
	if best == "" || tie || len([]rune(k)) < 3 {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and adjacent transpositions of runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
