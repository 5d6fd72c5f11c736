package chem

import (
	"fmt"
	"strings"
)

// SyntaxError is where a SMILES breaks the OpenSMILES grammar: Pos is the
// byte offset (0-based) of the offending character.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("at character %d: %s", e.Pos+1, e.Msg) }

// Summary is what the syntax check counts of a valid SMILES: its atoms
// written (a bracket atom counts once, whatever hydrogens it carries) and
// of those the heavy ones (every atom but hydrogen; * counts as heavy), and
// its dot-separated components.
type Summary struct {
	Atoms, HeavyAtoms, Components int
}

// elements are the element symbols a bracket atom may name (IUPAC, 1–118).
var elements = map[string]bool{}

func init() {
	for _, s := range strings.Fields(`H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn
		Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy
		Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No
		Lr Rf Db Sg Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og`) {
		elements[s] = true
	}
}

// aromaticBracket are the aromatic symbols a bracket atom may use.
var aromaticBracket = []string{"se", "as", "te", "b", "c", "n", "o", "p", "s"}

// CheckSMILES checks s against the OpenSMILES syntax (chains, branches,
// bonds, ring closures, bracket atoms with isotope, chirality, hydrogen
// count, charge and class, the organic subset outside brackets, dots) and
// counts its atoms. It checks syntax, not chemistry: a pentavalent carbon
// passes here and is refused by RDKit in the worker.
func CheckSMILES(s string) (Summary, error) {
	return check(s, false)
}

// CheckSMARTS is CheckSMILES for a core given as SMARTS: bracket atoms
// hold SMARTS primitives and logic ([#6,#7;!H0]), and the bonds ~ @ ! , ; &
// are allowed too. Recursive SMARTS ($(...)) is refused.
func CheckSMARTS(s string) (Summary, error) {
	return check(s, true)
}

func check(s string, smarts bool) (Summary, error) {
	var sum Summary
	if s == "" {
		return sum, &SyntaxError{0, "empty"}
	}
	type ring struct {
		pos, atom int
		bond      byte
	}
	rings := map[int]ring{}
	depth := 0
	// prevAtom: an atom was written in the current chain (a bond, a ring
	// closure or a branch may follow); bond: a bond symbol is pending (an
	// atom or a ring closure must follow).
	prevAtom, bond := false, byte(0)
	branchOpen := []int{}
	// justOpened: just after '(' (a branch may not be empty).
	justOpened := false
	sum.Components = 1
	fail := func(i int, f string, a ...any) (Summary, error) {
		return Summary{}, &SyntaxError{i, fmt.Sprintf(f, a...)}
	}
	isBond := func(c byte) bool {
		if strings.IndexByte("-=#$:/\\", c) >= 0 {
			return true
		}
		return smarts && strings.IndexByte("~@!,;&", c) >= 0
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return fail(i, "a '[' is never closed by ']'")
			}
			body := s[i+1 : i+end]
			var heavy bool
			var err error
			if smarts {
				heavy, err = checkSMARTSBracket(body)
			} else {
				heavy, err = checkBracket(body)
			}
			if err != nil {
				return fail(i, "bracket atom [%s]: %v", body, err)
			}
			sum.Atoms++
			if heavy {
				sum.HeavyAtoms++
			}
			prevAtom, bond, justOpened = true, 0, false
			i += end + 1
		case c == ']':
			return fail(i, "a ']' without its '['")
		case c == '(':
			if !prevAtom {
				return fail(i, "a branch '(' must follow an atom")
			}
			if bond != 0 {
				return fail(i, "a bond %q before '(' (put it inside the branch)", bond)
			}
			depth++
			branchOpen = append(branchOpen, i)
			justOpened = true
			i++
		case c == ')':
			if depth == 0 {
				return fail(i, "a ')' without its '('")
			}
			if justOpened {
				return fail(i, "an empty branch ()")
			}
			if bond != 0 {
				return fail(i, "a bond %q with no atom after it", bond)
			}
			depth--
			branchOpen = branchOpen[:len(branchOpen)-1]
			i++
		case c == '.':
			if !prevAtom || bond != 0 || justOpened {
				return fail(i, "a '.' must separate two components")
			}
			if depth > 0 {
				return fail(i, "a '.' inside a branch")
			}
			sum.Components++
			prevAtom = false
			i++
		case isBond(c):
			if !prevAtom && !justOpened {
				return fail(i, "a bond %q must follow an atom", c)
			}
			if bond != 0 && !smarts {
				return fail(i, "two bonds in a row (%q then %q)", bond, c)
			}
			bond = c
			i++
		case c >= '0' && c <= '9' || c == '%':
			if !prevAtom || justOpened {
				return fail(i, "a ring-closure number must follow an atom")
			}
			n, w := int(c-'0'), 1
			if c == '%' {
				if i+2 >= len(s) || !isDigit(s[i+1]) || !isDigit(s[i+2]) {
					return fail(i, "a '%%' ring closure takes two digits (%%10..%%99)")
				}
				n, w = int(s[i+1]-'0')*10+int(s[i+2]-'0'), 3
			}
			if r, open := rings[n]; open {
				if r.atom == sum.Atoms {
					return fail(i, "ring closure %d closes on the atom that opened it", n)
				}
				if r.bond != 0 && bond != 0 && r.bond != bond && !smarts {
					return fail(i, "ring closure %d opened with bond %q and closed with %q", n, r.bond, bond)
				}
				delete(rings, n)
			} else {
				rings[n] = ring{pos: i, atom: sum.Atoms, bond: bond}
			}
			bond = 0
			i += w
		default:
			sym, heavy, ok := organicAt(s[i:], smarts)
			if !ok {
				return fail(i, "%q is not an atom of the organic subset (B C N O P S F Cl Br I, aromatic b c n o p s, *); other elements go in brackets, e.g. [Na]", string(rune(s[i])))
			}
			sum.Atoms++
			if heavy {
				sum.HeavyAtoms++
			}
			prevAtom, bond, justOpened = true, 0, false
			i += len(sym)
		}
		if justOpened && c != '(' && !isBond(c) {
			justOpened = false
		}
	}
	if depth > 0 {
		return fail(branchOpen[len(branchOpen)-1], "a '(' is never closed")
	}
	if bond != 0 {
		return fail(len(s)-1, "ends with a bond %q", bond)
	}
	if !prevAtom {
		return fail(len(s)-1, "ends without an atom")
	}
	if len(rings) > 0 {
		first := len(s)
		n := 0
		for k, r := range rings {
			if r.pos < first {
				first, n = r.pos, k
			}
		}
		return fail(first, "ring closure %d is opened and never closed", n)
	}
	return sum, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// organicAt reads an organic-subset atom at the start of s.
func organicAt(s string, smarts bool) (string, bool, bool) {
	if strings.HasPrefix(s, "Cl") || strings.HasPrefix(s, "Br") {
		return s[:2], true, true
	}
	switch s[0] {
	case 'B', 'C', 'N', 'O', 'P', 'S', 'F', 'I', 'b', 'c', 'n', 'o', 's', 'p', '*':
		return s[:1], true, true
	}
	if smarts {
		switch s[0] {
		case 'a', 'A':
			return s[:1], true, true
		}
	}
	return "", false, false
}

// checkBracket checks a bracket atom's body: isotope? symbol chiral? hcount?
// charge? class?; heavy reports whether the atom is not hydrogen.
func checkBracket(b string) (bool, error) {
	i := 0
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i > 3 {
		return false, fmt.Errorf("an isotope of more than 3 digits")
	}
	rest := b[i:]
	sym := ""
	switch {
	case strings.HasPrefix(rest, "*"):
		sym = "*"
	default:
		for _, a := range aromaticBracket {
			if strings.HasPrefix(rest, a) {
				sym = a
				break
			}
		}
		if sym == "" {
			if len(rest) >= 2 && rest[0] >= 'A' && rest[0] <= 'Z' && rest[1] >= 'a' && rest[1] <= 'z' && elements[rest[:2]] {
				sym = rest[:2]
			} else if len(rest) >= 1 && elements[rest[:1]] {
				sym = rest[:1]
			}
		}
	}
	if sym == "" {
		if rest == "" {
			return false, fmt.Errorf("no element symbol")
		}
		return false, fmt.Errorf("no known element symbol at %q", rest)
	}
	i += len(sym)
	// chirality
	if i < len(b) && b[i] == '@' {
		i++
		if i < len(b) && b[i] == '@' {
			i++
		} else {
			for _, cls := range []string{"TH", "AL", "SP", "TB", "OH"} {
				if strings.HasPrefix(b[i:], cls) {
					i += 2
					j := i
					for i < len(b) && isDigit(b[i]) {
						i++
					}
					if i == j {
						return false, fmt.Errorf("chirality @%s takes a number", cls)
					}
					break
				}
			}
		}
	}
	// hydrogen count
	if i < len(b) && b[i] == 'H' {
		i++
		if i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	// charge
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		sign := b[i]
		i++
		if i < len(b) && b[i] == sign {
			i++
		} else {
			j := i
			for i < len(b) && isDigit(b[i]) {
				i++
			}
			if i-j > 2 {
				return false, fmt.Errorf("a charge of more than 2 digits")
			}
		}
	}
	// class
	if i < len(b) && b[i] == ':' {
		i++
		j := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i == j {
			return false, fmt.Errorf("an atom class ':' takes a number")
		}
	}
	if i != len(b) {
		return false, fmt.Errorf("unexpected %q (want [isotope]symbol[chirality][H count][charge][:class])", b[i:])
	}
	return sym != "H", nil
}

// checkSMARTSBracket checks a SMARTS bracket atom's body loosely: its
// characters are SMARTS primitives and logic, and no recursion.
func checkSMARTSBracket(b string) (bool, error) {
	if b == "" {
		return false, fmt.Errorf("empty")
	}
	if strings.Contains(b, "$(") {
		return false, fmt.Errorf("recursive SMARTS $(...) is not accepted in a core")
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || isDigit(c) || strings.IndexByte("#@+-!&;,:*", c) >= 0 {
			continue
		}
		return false, fmt.Errorf("%q is not a SMARTS primitive character", string(rune(c)))
	}
	return b != "H" && b != "#1", nil
}
