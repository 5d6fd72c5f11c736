package skills

import (
	"strings"
	"testing"

	"github.com/scidex/substrate/skills/tox"
)

// The references gate: a skill intended for preview or available that
// depends on a to_verify entry fails the check and is served designed; once
// it depends only on verified entries it passes and is served as intended.
func TestReferencesGate(t *testing.T) {
	refs, err := References()
	if err != nil {
		t.Fatal(err)
	}
	if refs["fda_2005_mrsd"].Status != ToVerify || refs["theoph_dataset"].Status != Verified {
		t.Fatalf("the statuses of shared/data are not carried: %+v", refs)
	}
	preview := Skill{Name: "x.preview", Intended: Preview, References: []string{"theoph_dataset", "fda_2005_mrsd"}}
	g := Check([]Skill{preview}, refs)
	if len(g.Problems) != 1 || !strings.Contains(g.Problems[0], "fda_2005_mrsd") || g.Served["x.preview"] != Designed {
		t.Fatalf("a preview skill on a to_verify reference: %+v", g)
	}
	preview.References = []string{"theoph_dataset", "fda_2005_table1"}
	if g := Check([]Skill{preview}, refs); len(g.Problems) != 0 || g.Served["x.preview"] != Preview {
		t.Fatalf("a preview skill on verified references: %+v", g)
	}
	designed := Skill{Name: "x.designed", Intended: Designed, References: []string{"fda_2005_mrsd"}}
	if g := Check([]Skill{designed}, refs); len(g.Problems) != 0 || g.Served["x.designed"] != Designed {
		t.Fatalf("a designed skill may depend on anything: %+v", g)
	}
	unknown := Skill{Name: "x.unknown", Intended: Designed, References: []string{"nope"}}
	if g := Check([]Skill{unknown}, refs); len(g.Problems) != 1 {
		t.Fatalf("an unknown reference: %+v", g)
	}
}

// The catalog as shipped passes the gate (CI runs the same check with
// `scidex skills check-references`).
func TestCatalogPassesTheGate(t *testing.T) {
	refs, err := References()
	if err != nil {
		t.Fatal(err)
	}
	if g := Check(Catalog(Deps{}), refs); len(g.Problems) > 0 {
		t.Fatalf("the shipped catalog fails the references gate:\n%s", strings.Join(g.Problems, "\n"))
	}
}

// Every dataset file matches the sha256 its reference records.
func TestReferenceFilesMatch(t *testing.T) {
	refs, err := References()
	if err != nil {
		t.Fatal(err)
	}
	if ps := CheckFiles(refs); len(ps) > 0 {
		t.Fatal(strings.Join(ps, "\n"))
	}
	altered := map[string]Reference{}
	for k, v := range refs {
		altered[k] = v
	}
	bad := "0000000000000000000000000000000000000000000000000000000000000000"
	r := altered["theoph_dataset"]
	r.SHA256 = &bad
	altered["theoph_dataset"] = r
	if ps := CheckFiles(altered); len(ps) != 1 {
		t.Fatalf("a wrong hash went unnoticed: %v", ps)
	}
}

// The references a skill's result names are entries of the references file:
// a reader follows references_used into skills/references.json.
func TestToxReferencesAreInTheReferencesFile(t *testing.T) {
	refs, err := References()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{tox.GuidanceID, tox.TableID} {
		if _, ok := refs[id]; !ok {
			t.Errorf("tox names reference %q, which skills/references.json does not hold", id)
		}
	}
}
