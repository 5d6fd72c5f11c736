package chem

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/scidex/substrate/skills/problem"
)

func args(t *testing.T, s string) Args {
	t.Helper()
	var a Args
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func problemsOf(t *testing.T, err error) []problem.Problem {
	t.Helper()
	var pe *problem.Error
	if !errors.As(err, &pe) {
		t.Fatalf("want a refusal, got %v", err)
	}
	return pe.Problems
}

func TestValidateReadsASeries(t *testing.T) {
	in, err := Validate(args(t, `{"compounds": [
		{"id": "a", "smiles": "c1ccccc1O", "activity": {"value": 12, "unit": "nM"}},
		{"id": "b", "smiles": "c1ccccc1N", "activity": {"value": 1.5, "unit": "µM"}, "relation": ">"},
		{"id": "c", "smiles": "c1ccccc1C", "activity": {"value": 3, "unit": "umol/L"}},
		{"id": "d", "smiles": "c1ccccc1Cl"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if in.ActivityType != "IC50" || in.SortBy != "pactivity" || !in.Figure {
		t.Fatalf("defaults: %+v", in)
	}
	want := []float64{12e-9, 1.5e-6, 3e-6}
	for i, w := range want {
		a := in.Compounds[i].Activity
		if a == nil || !near(a.Molar, w, 1e-12) {
			t.Errorf("compound %d: %+v, want %g M", i, a, w)
		}
	}
	if in.Compounds[1].Activity.Relation != ">" || in.Compounds[1].Activity.Unit != "µM" || in.Compounds[3].Activity != nil {
		t.Errorf("rows: %+v %+v", in.Compounds[1].Activity, in.Compounds[3].Activity)
	}
	if in.Compounds[0].HeavyAtoms != 7 {
		t.Errorf("heavy atoms %d", in.Compounds[0].HeavyAtoms)
	}
}

func near(a, b, rel float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= rel*b
}

// Each bad row is refused with its index, and every one in one round.
func TestValidateRefusesEachBadRowWithItsIndex(t *testing.T) {
	_, err := Validate(args(t, `{"activity_type": "ic50", "sort_by": "potency", "core": "c1ccc(", "compounds": [
		{"id": "ok", "smiles": "CCO", "activity": {"value": 5, "unit": "nM"}},
		{"id": "ring", "smiles": "C1CCC", "activity": {"value": 5, "unit": "nM"}},
		{"id": "unit", "smiles": "CCN", "activity": {"value": 5, "unit": "nm"}},
		{"id": "mass", "smiles": "CCC", "activity": {"value": 5, "unit": "ng/mL"}},
		{"id": "neg", "smiles": "CCCC", "activity": {"value": -1, "unit": "nM"}},
		{"id": "ok", "smiles": "CCCCC", "activity": {"value": 5, "unit": "nM"}, "relation": "~"},
		{"id": "nounit", "smiles": "CC", "activity": {"value": 5}}]}`))
	got := map[string]problem.Problem{}
	for _, p := range problemsOf(t, err) {
		got[p.Path] = p
	}
	for path, code := range map[string]string{
		"activity_type":               CodeActivityType,
		"sort_by":                     CodeSortBy,
		"core":                        CodeSMILESSyntax,
		"compounds[1].smiles":         CodeSMILESSyntax,
		"compounds[2].activity.unit":  CodeUnit,
		"compounds[3].activity.unit":  CodeUnit,
		"compounds[4].activity.value": CodeNotPositive,
		"compounds[5].id":             CodeDuplicateID,
		"compounds[5].relation":       CodeRelation,
		"compounds[6].activity.unit":  "unit_required",
	} {
		p, ok := got[path]
		if !ok || p.Code != code {
			t.Errorf("%s: got %+v, want code %s (all: %v)", path, p, code, got)
		}
	}
	if s := got["activity_type"].Suggestion; s != "IC50" {
		t.Errorf("activity_type suggestion %q", s)
	}
	if p := got["compounds[2].activity.unit"]; p.Suggestion != "nM" || p.Value != "nm" || !strings.Contains(p.Message, "molar concentration") {
		t.Errorf("nm: %+v", p)
	}
	if p := got["compounds[1].smiles"]; !strings.Contains(p.Message, "ring closure 1") || p.Value != "C1CCC" {
		t.Errorf("ring: %+v", p)
	}
	if len(got) != 10 {
		t.Errorf("%d problems, want 10: %v", len(got), got)
	}
}

func TestValidateEnforcesTheCaps(t *testing.T) {
	rows := make([]string, MaxCompounds+1)
	for i := range rows {
		rows[i] = fmt.Sprintf(`{"id": "c%d", "smiles": "CCO"}`, i)
	}
	_, err := Validate(args(t, `{"compounds": [`+strings.Join(rows, ",")+`]}`))
	ps := problemsOf(t, err)
	if len(ps) != 1 || ps[0].Code != CodeTooMany || !strings.Contains(ps[0].Message, "the limit is 200") {
		t.Fatalf("over the compound cap: %+v", ps)
	}
	if _, err := Validate(args(t, `{"compounds": [`+strings.Join(rows[:MaxCompounds], ",")+`]}`)); err != nil {
		t.Fatalf("at the cap: %v", err)
	}
	long := strings.Repeat("C", MaxSMILESBytes+1)
	big := strings.Repeat("C", MaxHeavyAtoms+1)
	_, err = Validate(args(t, `{"compounds": [{"id": "long", "smiles": "`+long+`"}, {"id": "big", "smiles": "`+big+`"}]}`))
	ps = problemsOf(t, err)
	if len(ps) != 2 || ps[0].Code != CodeTooLong || ps[1].Code != CodeTooLarge || !strings.Contains(ps[1].Message, "the limit is 120") {
		t.Fatalf("long and big: %+v", ps)
	}
}

func TestValidateTakesASMARTSCore(t *testing.T) {
	in, err := Validate(args(t, `{"core": "[#6]1:[#6]:[#6]:[#6]:[#6]:[#6]:1", "compounds": [{"id": "a", "smiles": "c1ccccc1O"}]}`))
	if err != nil || !in.CoreIsSMARTS {
		t.Fatalf("%v %+v", err, in)
	}
	in, err = Validate(args(t, `{"core": "c1ccccc1", "compounds": [{"id": "a", "smiles": "c1ccccc1O"}]}`))
	if err != nil || in.CoreIsSMARTS {
		t.Fatalf("%v %+v", err, in)
	}
}

// The worker gets the structures, the core and which to draw: nothing else
// of the caller's input (no id, no activity), and the sandbox's command is
// the embedded script's, whatever the input says.
func TestWorkerRequestCarriesOnlyStructures(t *testing.T) {
	in, err := Validate(args(t, `{"core": "c1ccccc1", "compounds": [
		{"id": "--bind / /host", "smiles": "c1ccccc1O", "activity": {"value": 1, "unit": "nM"}},
		{"id": "$(rm -rf /)", "smiles": "c1ccccc1N", "activity": {"value": 2, "unit": "nM"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(Request(in, PotencyOrder(in)))
	if string(b) != `{"compounds":[{"smiles":"c1ccccc1O"},{"smiles":"c1ccccc1N"}],"core":"c1ccccc1","draw":[0,1]}` {
		t.Fatalf("worker input %s", b)
	}
	tool := WorkerTool("1")
	if string(tool.Config) != `{"command": ["sar_table.py"]}` || tool.Caps.Network != "deny" || len(tool.Files) != 1 || tool.Files[0].SHA256 != WorkerSHA256 {
		t.Fatalf("worker tool %+v", tool)
	}
}
