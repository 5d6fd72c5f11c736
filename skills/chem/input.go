package chem

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/scidex/substrate/skills/problem"
	"github.com/scidex/substrate/skills/units"
)

// The caps of one series, enforced here before anything runs (the sandbox's
// wall time and memory caps stand behind them).
const (
	// MaxCompounds is the most compounds of one series.
	MaxCompounds = 200
	// MaxSMILESBytes is the longest SMILES of a compound or of the core.
	MaxSMILESBytes = 500
	// MaxHeavyAtoms is the most heavy atoms of one compound (a small
	// molecule; peptides and macrocycles past it are another tool's work).
	MaxHeavyAtoms = 120
	// MaxIDBytes is the longest compound id.
	MaxIDBytes = 64
	// MaxFigure is the most structures drawn in the figure: the most potent
	// first, in the table's order.
	MaxFigure = 40
)

// The refusal codes of Validate.
const (
	CodeRequired        = "required"
	CodeTooMany         = "too_many_compounds"
	CodeTooLong         = "too_long"
	CodeTooLarge        = "too_many_heavy_atoms"
	CodeSMILESSyntax    = "smiles_syntax"
	CodeDuplicateID     = "duplicate_id"
	CodeUnit            = "unit"
	CodeNotPositive     = "not_positive"
	CodeActivityType    = "activity_type"
	CodeRelation        = "relation"
	CodeSortBy          = "sort_by"
	CodeInvalidID       = "invalid_id"
	CodeWorkerRefused   = "not_a_molecule"
	CodeCoreNotMatching = "core_not_matching"
)

// ActivityTypes are the activities a series may report; pActivity is
// −log10 of the value in mol/L whichever it is.
var ActivityTypes = []string{"IC50", "EC50", "Ki", "Kd", "GI50"}

// Relations are how a reported activity relates to the measured one: =, or
// a bound (> 10000 nM: inactive at the top concentration).
var Relations = []string{"=", "<", ">", "<=", ">="}

// SortKeys order the SAR table (each descending but id).
var SortKeys = []string{"pactivity", "ligand_efficiency", "id"}

// molarAliases are the molar symbols a chemist writes, with the UCUM unit
// each stands for: the units layer takes UCUM only (nmol/L), a series is
// reported in nM.
var molarAliases = map[string]string{
	"M": "mol/L", "mM": "mmol/L", "uM": "umol/L", "µM": "umol/L", "μM": "umol/L", "nM": "nmol/L", "pM": "pmol/L",
}

// Args are chem.sar_table's arguments as a caller gives them.
type Args struct {
	Compounds    []RawCompound `json:"compounds"`
	ActivityType string        `json:"activity_type,omitempty"`
	Core         string        `json:"core,omitempty"`
	SortBy       string        `json:"sort_by,omitempty"`
	Figure       *bool         `json:"figure,omitempty"`
}

// RawCompound is one row as given.
type RawCompound struct {
	ID       string          `json:"id"`
	SMILES   string          `json:"smiles"`
	Activity json.RawMessage `json:"activity,omitempty"`
	Relation string          `json:"relation,omitempty"`
}

// Compound is one validated row.
type Compound struct {
	Index  int
	ID     string
	SMILES string
	// HeavyAtoms are the heavy atoms the syntax check counted (RDKit's
	// count, after hydrogens in brackets are folded, is the one reported).
	HeavyAtoms int
	// Activity is nil when the row reports none.
	Activity *Activity
}

// Activity is a validated activity.
type Activity struct {
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Relation string  `json:"relation"`
	// Molar is the value in mol/L.
	Molar float64 `json:"-"`
}

// Input is a validated series.
type Input struct {
	Compounds    []Compound
	ActivityType string
	Core         string
	// CoreIsSMARTS says the core did not read as SMILES and is taken as
	// SMARTS.
	CoreIsSMARTS bool
	SortBy       string
	Figure       bool
}

// Validate reads args into a series, or refuses with every problem found:
// each with its path (compounds[3].smiles), what was received and what is
// wanted.
func Validate(a Args) (*Input, error) {
	var ps problem.List
	in := &Input{ActivityType: a.ActivityType, Core: a.Core, SortBy: a.SortBy, Figure: a.Figure == nil || *a.Figure}
	if in.ActivityType == "" {
		in.ActivityType = "IC50"
	}
	if t, ok := oneOf(in.ActivityType, ActivityTypes); !ok {
		p := problem.Problem{Path: "activity_type", Code: CodeActivityType, Value: a.ActivityType,
			Message: fmt.Sprintf("activity_type %q: want one of %s", a.ActivityType, strings.Join(ActivityTypes, ", "))}
		p.Suggestion = t
		ps = append(ps, p)
	}
	if in.SortBy == "" {
		in.SortBy = "pactivity"
	}
	if s, ok := oneOf(in.SortBy, SortKeys); !ok {
		ps = append(ps, problem.Problem{Path: "sort_by", Code: CodeSortBy, Value: a.SortBy, Suggestion: s,
			Message: fmt.Sprintf("sort_by %q: want one of %s", a.SortBy, strings.Join(SortKeys, ", "))})
	}
	if a.Core != "" {
		switch {
		case len(a.Core) > MaxSMILESBytes:
			ps.Add("core", CodeTooLong, nil, "the core is %d bytes long; the limit is %d (MaxSMILESBytes)", len(a.Core), MaxSMILESBytes)
		default:
			if _, err := CheckSMILES(a.Core); err != nil {
				if _, serr := CheckSMARTS(a.Core); serr != nil {
					ps.Add("core", CodeSMILESSyntax, a.Core, "the core %q is neither SMILES (%v) nor SMARTS (%v)", a.Core, err, serr)
				} else {
					in.CoreIsSMARTS = true
				}
			}
		}
	}
	switch n := len(a.Compounds); {
	case n == 0:
		ps.Add("compounds", CodeRequired, nil, "compounds is empty: give the series as [{id, smiles, activity: {value, unit}}]")
	case n > MaxCompounds:
		ps.Add("compounds", CodeTooMany, n, "the series has %d compounds; the limit is %d (MaxCompounds): split it into series of at most %d", n, MaxCompounds, MaxCompounds)
		return nil, ps.Err("chem.sar_table")
	}
	seen := map[string]int{}
	for i, rc := range a.Compounds {
		path := fmt.Sprintf("compounds[%d]", i)
		c := Compound{Index: i, ID: rc.ID, SMILES: rc.SMILES}
		switch {
		case rc.ID == "":
			ps.Add(path+".id", CodeRequired, nil, "compound %d has no id", i)
		case len(rc.ID) > MaxIDBytes:
			ps.Add(path+".id", CodeTooLong, nil, "the id is %d bytes long; the limit is %d", len(rc.ID), MaxIDBytes)
		case !printable(rc.ID):
			ps.Add(path+".id", CodeInvalidID, rc.ID, "the id %q holds control characters or invalid UTF-8", rc.ID)
		default:
			if j, dup := seen[rc.ID]; dup {
				ps.Add(path+".id", CodeDuplicateID, rc.ID, "the id %q is also compounds[%d]'s", rc.ID, j)
			}
			seen[rc.ID] = i
		}
		switch {
		case rc.SMILES == "":
			ps.Add(path+".smiles", CodeRequired, nil, "compound %d (%s) has no smiles", i, rc.ID)
		case len(rc.SMILES) > MaxSMILESBytes:
			ps.Add(path+".smiles", CodeTooLong, nil, "the SMILES is %d bytes long; the limit is %d (MaxSMILESBytes)", len(rc.SMILES), MaxSMILESBytes)
		default:
			sum, err := CheckSMILES(rc.SMILES)
			if err != nil {
				ps.Add(path+".smiles", CodeSMILESSyntax, rc.SMILES, "compound %d (%s): %q is not a valid SMILES: %v", i, rc.ID, rc.SMILES, err)
			} else if sum.HeavyAtoms > MaxHeavyAtoms {
				ps.Add(path+".smiles", CodeTooLarge, sum.HeavyAtoms, "compound %d (%s) has %d heavy atoms; the limit is %d (MaxHeavyAtoms)", i, rc.ID, sum.HeavyAtoms, MaxHeavyAtoms)
			}
			c.HeavyAtoms = sum.HeavyAtoms
		}
		rel := rc.Relation
		if rel == "" {
			rel = "="
		}
		if _, ok := oneOf(rel, Relations); !ok {
			ps.Add(path+".relation", CodeRelation, rc.Relation, "relation %q: want one of %s", rc.Relation, strings.Join(Relations, " "))
		}
		if len(rc.Activity) > 0 && string(rc.Activity) != "null" {
			act, p := parseActivity(path+".activity", rc.Activity)
			if p != nil {
				ps = append(ps, *p)
			} else {
				act.Relation = rel
				c.Activity = act
			}
		}
		in.Compounds = append(in.Compounds, c)
	}
	if len(ps) > 0 {
		return nil, ps.Err("chem.sar_table")
	}
	return in, nil
}

// parseActivity reads {value, unit} in a molar concentration: nM, µM...
// as a chemist writes them, or a UCUM molar unit (nmol/L).
func parseActivity(path string, raw json.RawMessage) (*Activity, *problem.Problem) {
	var probe struct {
		Unit string `json:"unit"`
	}
	_ = json.Unmarshal(raw, &probe)
	ucum, alias := molarAliases[probe.Unit]
	given := raw
	if alias {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			m["unit"], _ = json.Marshal(ucum)
			given, _ = json.Marshal(m)
		}
	}
	q, up := units.ParseQuantity(path, given, units.MolarConcentration)
	if up != nil {
		p := &problem.Problem{Path: up.Path, Code: CodeUnit, Message: up.Message, Suggestion: up.Suggestion}
		if up.Code != "unknown_unit" && up.Code != "incompatible_unit" {
			p.Code = up.Code
		}
		if strings.HasSuffix(up.Path, "unit") {
			p.Value = probe.Unit
			p.Message = unitMessage(probe.Unit, up.Message)
			p.Suggestion = unitSuggestion(probe.Unit, up.Suggestion)
		}
		return nil, p
	}
	molar, err := q.In("mol/L")
	if err != nil {
		return nil, &problem.Problem{Path: path + ".unit", Code: CodeUnit, Value: probe.Unit, Message: err.Error()}
	}
	var v struct {
		Value float64 `json:"value"`
	}
	_ = json.Unmarshal(raw, &v)
	if !(molar > 0) || math.IsInf(molar, 0) {
		return nil, &problem.Problem{Path: path + ".value", Code: CodeNotPositive, Value: v.Value,
			Message: fmt.Sprintf("an activity of %v %s: want a positive concentration (pActivity is −log10 of it)", v.Value, probe.Unit)}
	}
	return &Activity{Value: v.Value, Unit: probe.Unit, Molar: molar}, nil
}

// unitMessage says what a molar unit is, in the chemist's symbols.
func unitMessage(got, ucum string) string {
	return fmt.Sprintf("activity unit %q: want a molar concentration, nM, uM (µM), mM, pM or M, or their UCUM forms (nmol/L...); %s", got, lowerFirst(ucum))
}

// unitSuggestion suggests the molar symbol meant: "nm" (nanometres) for
// nM, "um" for uM, nanomolar for nM; else the units layer's.
func unitSuggestion(got, ucum string) string {
	for sym := range molarAliases {
		if strings.EqualFold(got, sym) {
			return sym
		}
	}
	switch strings.ToLower(strings.TrimSpace(got)) {
	case "molar":
		return "M"
	case "millimolar":
		return "mM"
	case "micromolar":
		return "uM"
	case "nanomolar":
		return "nM"
	case "picomolar":
		return "pM"
	}
	return ucum
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// oneOf reports whether s is one of allowed; when not, it suggests the
// allowed value s matches but for case.
func oneOf(s string, allowed []string) (string, bool) {
	for _, a := range allowed {
		if s == a {
			return a, true
		}
	}
	for _, a := range allowed {
		if strings.EqualFold(s, a) {
			return a, false
		}
	}
	return "", false
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// ErrNoSandbox is the refusal of a server without the bwrap runtime.
var ErrNoSandbox = errors.New("chem.sar_table runs RDKit in the bwrap sandbox, and this server has none (install bubblewrap: scripts/deps run)")
