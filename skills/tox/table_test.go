package tox

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// The embedded table is the shared data file unchanged: its hash is the one
// recorded when it was copied (the data README gives none for this file).
func TestTableSHA256(t *testing.T) {
	sum := sha256.Sum256(tableCSV)
	if got := hex.EncodeToString(sum[:]); got != TableSHA256 {
		t.Fatalf("sha256 of embedded fda2005_table1.csv = %s, want %s", got, TableSHA256)
	}
}

func TestTableParsed(t *testing.T) {
	rows := TableRows()
	if len(rows) != 15 {
		t.Fatalf("%d rows, want 15 (2 human, 13 animal)", len(rows))
	}
	h, ok := defaultTable.row(HumanAdult)
	if !ok || h.Km != 37 || h.RefBodyWeightKg != 60 || h.Status != StatusVerified {
		t.Fatalf("human_adult row = %+v, want km 37, 60 kg, verified", h)
	}
	r, _ := defaultTable.row("rat")
	if r.Km != 6 || r.DivideBy != 6.2 || r.RefBodyWeightKg != 0.15 {
		t.Fatalf("rat row = %+v", r)
	}
	if got := len(AllowedSpecies()); got != 14 {
		t.Fatalf("%d allowed species, want 13 animals + other", got)
	}
	for _, s := range AllowedSpecies() {
		if strings.HasPrefix(s, "human_") {
			t.Fatalf("allowed species include %s", s)
		}
	}
}

// A table that does not read as expected is an error, not a silent zero.
func TestParseTableRefuses(t *testing.T) {
	head := "species,ref_body_weight_kg,bsa_m2,km,divide_by,status,sources\n"
	human := "human_adult,60,1.62,37,,verified,x\n"
	cases := map[string]string{
		"bad header":       "species,weight,bsa_m2,km,divide_by,status,sources\n" + human,
		"no rows":          head,
		"bad number":       head + human + "rat,0.15,0.025,six,6.2,verified,x\n",
		"zero km":          head + human + "rat,0.15,0.025,0,6.2,verified,x\n",
		"animal no factor": head + human + "rat,0.15,0.025,6,,verified,x\n",
		"bad status":       head + human + "rat,0.15,0.025,6,6.2,checked,x\n",
		"repeated":         head + human + "rat,0.15,0.025,6,6.2,verified,x\nrat,0.15,0.025,6,6.2,verified,x\n",
		"no human":         head + "rat,0.15,0.025,6,6.2,verified,x\n",
	}
	for name, csv := range cases {
		if _, err := parseTable([]byte(csv)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if _, err := parseTable([]byte(head + human + "rat,0.15,0.025,6,6.2,verified,x\n")); err != nil {
		t.Fatalf("good table: %v", err)
	}
}

func TestReferences(t *testing.T) {
	refs := References()
	if len(refs) != 2 || refs[0].Status != StatusToVerify || refs[1].SHA256 != TableSHA256 {
		t.Fatalf("references = %+v", refs)
	}
	// Every row this skill can read is verified; only the child row is not.
	if refs[1].Status != StatusVerified {
		t.Fatalf("table status = %s, want verified (human_child_20kg is never used)", refs[1].Status)
	}
}
