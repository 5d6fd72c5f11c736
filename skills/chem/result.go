package chem

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// LogicVersion is the version of chem.sar_table's calculation logic: the
// formulas below and the worker's descriptors.
const LogicVersion = "chem.sar_table/1"

// LEFactor is ligand efficiency's factor, kcal/mol per log unit: 2.303·R·T
// at 300 K rounded to 1.4 (Hopkins, Groom and Alex 2004), so that
// LE = 1.4·pActivity / heavy atoms in kcal/mol per heavy atom.
const LEFactor = 1.4

// Lipinski's (1997) and Veber's (2002) limits.
const (
	LipinskiMW     = 500.0
	LipinskiLogP   = 5.0
	LipinskiHBD    = 5
	LipinskiHBA    = 10
	VeberRotatable = 10
	VeberTPSA      = 140.0
)

// Row is one compound of the SAR table.
type Row struct {
	Rank            int               `json:"rank"`
	Index           int               `json:"index"`
	ID              string            `json:"id"`
	InputSMILES     string            `json:"input_smiles"`
	CanonicalSMILES string            `json:"canonical_smiles,omitempty"`
	InChI           *string           `json:"inchi"`
	InChIKey        *string           `json:"inchikey"`
	Formula         string            `json:"formula,omitempty"`
	HeavyAtoms      int               `json:"heavy_atoms,omitempty"`
	MW              float64           `json:"mw,omitempty"`
	CLogP           float64           `json:"clogp"`
	TPSA            float64           `json:"tpsa"`
	HBD             int               `json:"hbd"`
	HBA             int               `json:"hba"`
	RotatableBonds  int               `json:"rotatable_bonds"`
	Lipinski        *Lipinski         `json:"lipinski,omitempty"`
	Veber           *Veber            `json:"veber,omitempty"`
	Activity        *Activity         `json:"activity"`
	PActivity       *float64          `json:"pactivity"`
	PActivityBound  string            `json:"pactivity_relation,omitempty"`
	LE              *float64          `json:"ligand_efficiency"`
	RGroups         map[string]string `json:"rgroups,omitempty"`
	Error           string            `json:"error,omitempty"`
}

// Lipinski is the rule of five (Lipinski et al. 1997) as the paper counts:
// donors are OH and NH groups, acceptors N and O atoms; cLogP is
// Wildman–Crippen's (the paper used CLOGP or MLOGP). Passes is at most one
// violation: the paper's alert is for two or more.
type Lipinski struct {
	Donors     int      `json:"donors_oh_nh"`
	Acceptors  int      `json:"acceptors_n_o"`
	Violations []string `json:"violations"`
	Passes     bool     `json:"passes"`
}

// Veber is Veber et al.'s (2002) oral bioavailability criteria: at most 10
// rotatable bonds and a polar surface area of at most 140 Å².
type Veber struct {
	Violations []string `json:"violations"`
	Passes     bool     `json:"passes"`
}

// Table is the SAR table and what it was decomposed on.
type Table struct {
	ActivityType string   `json:"activity_type"`
	PName        string   `json:"pactivity_name"`
	SortedBy     string   `json:"sorted_by"`
	Rows         []Row    `json:"rows"`
	Core         Core     `json:"core"`
	RLabels      []string `json:"rgroup_labels"`
	Unmatched    []string `json:"unmatched"`
}

// Core is the core of the decomposition: the caller's, or the series'
// maximum common substructure (rdFMCS).
type Core struct {
	Source   string `json:"source"`
	Given    string `json:"given,omitempty"`
	SMARTS   string `json:"smarts,omitempty"`
	Atoms    int    `json:"atoms"`
	TimedOut bool   `json:"timed_out"`
}

// PActivity is −log10 of a molar activity.
func PActivity(molar float64) float64 { return -math.Log10(molar) }

// LigandEfficiency is LEFactor·p / heavy atoms.
func LigandEfficiency(p float64, heavy int) float64 { return LEFactor * p / float64(heavy) }

// flip is the relation of pActivity for an activity's relation (> 10 µM is
// pIC50 < 5).
var flip = map[string]string{">": "<", "<": ">", ">=": "<=", "<=": ">="}

// PotencyOrder is the compounds' indices most potent first (by the
// activity given, none last, ties by id): the figure's order.
func PotencyOrder(in *Input) []int {
	order := make([]int, len(in.Compounds))
	for i := range order {
		order[i] = i
	}
	p := func(i int) float64 {
		if a := in.Compounds[i].Activity; a != nil {
			return PActivity(a.Molar)
		}
		return math.Inf(-1)
	}
	sort.SliceStable(order, func(a, b int) bool {
		pa, pb := p(order[a]), p(order[b])
		if pa != pb {
			return pa > pb
		}
		return in.Compounds[order[a]].ID < in.Compounds[order[b]].ID
	})
	return order
}

// Build makes the SAR table of a series from the worker's answer.
func Build(in *Input, out *WorkerOutput) (*Table, []string) {
	t := &Table{ActivityType: in.ActivityType, PName: "p" + in.ActivityType, SortedBy: in.SortBy, RLabels: []string{}, Unmatched: []string{}}
	var warnings []string
	groups := map[int]map[string]string{}
	for _, r := range out.RGroups.Rows {
		groups[r.Index] = r.Groups
	}
	for i, c := range in.Compounds {
		w := out.Compounds[i]
		row := Row{Index: i, ID: c.ID, InputSMILES: c.SMILES, Activity: c.Activity}
		if !w.OK {
			row.Error = w.Error
			warnings = append(warnings, fmt.Sprintf("compounds[%d] (%s): %s; it is listed without properties", i, c.ID, w.Error))
			t.Rows = append(t.Rows, row)
			continue
		}
		row.CanonicalSMILES, row.InChI, row.InChIKey, row.Formula = w.CanonicalSMILES, w.InChI, w.InChIKey, w.Formula
		row.HeavyAtoms, row.MW, row.CLogP, row.TPSA = w.HeavyAtoms, round(w.MW, 3), round(w.CLogP, 3), round(w.TPSA, 2)
		row.HBD, row.HBA, row.RotatableBonds = w.HBD, w.HBA, w.RotatableBonds
		row.Lipinski = lipinski(w)
		row.Veber = veber(w)
		if c.Activity != nil {
			p := PActivity(c.Activity.Molar)
			row.PActivity = ptr(round(p, 3))
			if w.HeavyAtoms > 0 {
				row.LE = ptr(round(LigandEfficiency(p, w.HeavyAtoms), 3))
			}
			row.PActivityBound = "="
			if f, ok := flip[c.Activity.Relation]; ok {
				row.PActivityBound = f
			}
		}
		row.RGroups = groups[i]
		t.Rows = append(t.Rows, row)
	}
	for _, i := range out.RGroups.Unmatched {
		if i >= 0 && i < len(in.Compounds) {
			t.Unmatched = append(t.Unmatched, in.Compounds[i].ID)
		}
	}
	if len(out.RGroups.Labels) > 0 {
		t.RLabels = out.RGroups.Labels
	}
	t.Core = Core{Given: in.Core, Atoms: out.Core.CoreAtoms, TimedOut: out.Core.TimedOut}
	if out.Core.Source != nil {
		t.Core.Source = *out.Core.Source
	}
	if out.Core.SMARTS != nil {
		t.Core.SMARTS = *out.Core.SMARTS
	}
	switch {
	case out.Core.Error != "":
		warnings = append(warnings, "core: "+out.Core.Error+"; no R-group decomposition")
	case t.Core.Source == "":
		warnings = append(warnings, "no core: a series of fewer than two structures has no common substructure; no R-group decomposition")
	case t.Core.SMARTS == "":
		warnings = append(warnings, "the structures share no common substructure with complete rings; no R-group decomposition")
	}
	if t.Core.TimedOut {
		warnings = append(warnings, "the maximum common substructure search stopped at its time limit: the core may be smaller than the largest one")
	}
	if len(t.Unmatched) > 0 {
		warnings = append(warnings, fmt.Sprintf("%d compounds do not contain the core and have no R-groups: %s", len(t.Unmatched), strings.Join(t.Unmatched, ", ")))
	}
	sortRows(t.Rows, in.SortBy)
	for i := range t.Rows {
		t.Rows[i].Rank = i + 1
	}
	return t, warnings
}

func lipinski(w WorkerResult) *Lipinski {
	l := &Lipinski{Donors: w.NHOHCount, Acceptors: w.NOCount, Violations: []string{}}
	if w.MW > LipinskiMW {
		l.Violations = append(l.Violations, fmt.Sprintf("MW %.1f > 500", w.MW))
	}
	if w.CLogP > LipinskiLogP {
		l.Violations = append(l.Violations, fmt.Sprintf("cLogP %.2f > 5", w.CLogP))
	}
	if w.NHOHCount > LipinskiHBD {
		l.Violations = append(l.Violations, fmt.Sprintf("%d OH+NH > 5", w.NHOHCount))
	}
	if w.NOCount > LipinskiHBA {
		l.Violations = append(l.Violations, fmt.Sprintf("%d N+O > 10", w.NOCount))
	}
	l.Passes = len(l.Violations) <= 1
	return l
}

func veber(w WorkerResult) *Veber {
	v := &Veber{Violations: []string{}}
	if w.RotatableBonds > VeberRotatable {
		v.Violations = append(v.Violations, fmt.Sprintf("%d rotatable bonds > 10", w.RotatableBonds))
	}
	if w.TPSA > VeberTPSA {
		v.Violations = append(v.Violations, fmt.Sprintf("TPSA %.1f Å² > 140", w.TPSA))
	}
	v.Passes = len(v.Violations) == 0
	return v
}

// sortRows orders the table: by pActivity or ligand efficiency, highest
// first (rows without one last), or by id; ties by id.
func sortRows(rows []Row, by string) {
	key := func(r Row) float64 {
		var v *float64
		switch by {
		case "ligand_efficiency":
			v = r.LE
		case "pactivity":
			v = r.PActivity
		}
		if v == nil {
			return math.Inf(-1)
		}
		return *v
	}
	sort.SliceStable(rows, func(a, b int) bool {
		if by != "id" {
			ka, kb := key(rows[a]), key(rows[b])
			if ka != kb {
				return ka > kb
			}
		}
		return rows[a].ID < rows[b].ID
	})
}

// Legend is a structure's legend in the figure: its id, and its activity
// with pActivity and LE.
func Legend(t *Table, r Row) []string {
	if r.Activity == nil || r.PActivity == nil {
		return []string{r.ID, "no activity"}
	}
	rel := ""
	if r.Activity.Relation != "=" {
		rel = r.Activity.Relation + " "
	}
	line := fmt.Sprintf("%s %s%s %s · %s %s", t.ActivityType, rel, strconv.FormatFloat(r.Activity.Value, 'g', 4, 64), r.Activity.Unit,
		t.PName, strconv.FormatFloat(*r.PActivity, 'f', 2, 64))
	if r.LE != nil {
		line += " · LE " + strconv.FormatFloat(*r.LE, 'f', 2, 64)
	}
	return []string{r.ID, line}
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

func ptr(v float64) *float64 { return &v }
