package chem_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
	"github.com/scidex/substrate/skills/chem"
)

// atomicWeights are IUPAC 2013 standard atomic weights (conventional
// values where IUPAC gives an interval), the ones RDKit's MolWt uses to
// 0.001 — for the golden's molecular weights, worked out here, not by RDKit.
var atomicWeights = map[string]float64{"C": 12.011, "H": 1.008, "N": 14.007, "O": 15.999, "Cl": 35.453, "Br": 79.904, "F": 18.998, "S": 32.065}

var formulaPart = regexp.MustCompile(`([A-Z][a-z]?)(\d*)`)

// formulaMass is a molecular formula's weight and heavy atoms.
func formulaMass(t *testing.T, f string) (float64, int) {
	var mw float64
	heavy := 0
	for _, m := range formulaPart.FindAllStringSubmatch(f, -1) {
		n := 1
		if m[2] != "" {
			n, _ = strconv.Atoi(m[2])
		}
		w, ok := atomicWeights[m[1]]
		if !ok {
			t.Fatalf("no atomic weight for %s", m[1])
		}
		mw += w * float64(n)
		if m[1] != "H" {
			heavy += n
		}
	}
	return mw, heavy
}

type golden struct {
	ActivityType string `json:"activity_type"`
	Compounds    []struct {
		chem.RawCompound
		Formula string `json:"formula"`
	} `json:"compounds"`
}

func loadGolden(t *testing.T) (golden, chem.Args) {
	b, err := os.ReadFile("testdata/egfr_quinazolines.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	a := chem.Args{ActivityType: g.ActivityType}
	for _, c := range g.Compounds {
		a.Compounds = append(a.Compounds, c.RawCompound)
	}
	return g, a
}

// sandbox is the real bwrap runtime over a cache the sandbox uid can
// reach; the test is skipped where the machine has no bwrap or no RDKit
// (scripts/deps installs both), unless SCIDEX_REQUIRE_RDKIT=1.
func sandbox(t *testing.T) *bwrap.Runtime {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("bwrap"); err != nil {
		missing = "bubblewrap"
	} else if err := exec.Command("/usr/bin/python3", "-IS", "-c", "import sys; sys.path.append('/usr/lib/python3/dist-packages'); import rdkit").Run(); err != nil {
		missing = "python3-rdkit"
	}
	if missing != "" {
		if os.Getenv("SCIDEX_REQUIRE_RDKIT") == "1" {
			t.Fatalf("%s is not installed (scripts/deps)", missing)
		}
		t.Skipf("%s is not installed (scripts/deps)", missing)
	}
	dir, err := os.MkdirTemp("", "sar-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rt, err := bwrap.New(bwrap.Options{CacheDir: filepath.Join(dir, "cache"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// The golden series through the real sandbox: every property RDKit reports
// is checked against a calculation of this test's own.
func TestGoldenSeriesInTheSandbox(t *testing.T) {
	box := sandbox(t)
	g, a := loadGolden(t)
	in, err := chem.Validate(a)
	if err != nil {
		t.Fatal(err)
	}
	order := chem.PotencyOrder(in)
	var mu sync.Mutex
	var progress []string
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := chem.RunWorker(ctx, box, "test", "golden", chem.Request(in, order), func(p runtimes.Progress) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, p.Message)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.RDKitVersion, "20") {
		t.Errorf("rdkit_version %q", out.RDKitVersion)
	}
	mu.Lock()
	if len(progress) < 3 || !strings.Contains(strings.Join(progress, "|"), "R-group decomposition") {
		t.Errorf("progress: %q", progress)
	}
	mu.Unlock()
	table, warnings := chem.Build(in, out)
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}
	byID := map[string]chem.Row{}
	for _, r := range table.Rows {
		byID[r.ID] = r
	}
	var worstMW float64
	for i, c := range g.Compounds {
		r := byID[c.ID]
		mw, heavy := formulaMass(t, c.Formula)
		if r.Formula != c.Formula {
			t.Errorf("%s: formula %s, want %s", c.ID, r.Formula, c.Formula)
		}
		if d := math.Abs(r.MW - mw); d > 0.01 {
			t.Errorf("%s: MW %.3f, want %.3f from %s", c.ID, r.MW, mw, c.Formula)
		} else if d > worstMW {
			worstMW = d
		}
		if r.HeavyAtoms != heavy || in.Compounds[i].HeavyAtoms != heavy {
			t.Errorf("%s: heavy atoms %d (Go's SMILES count %d), want %d", c.ID, r.HeavyAtoms, in.Compounds[i].HeavyAtoms, heavy)
		}
		p := -math.Log10(in.Compounds[i].Activity.Molar)
		if r.PActivity == nil || math.Abs(*r.PActivity-p) > 0.0005 || r.LE == nil || math.Abs(*r.LE-1.4*p/float64(heavy)) > 0.0005 {
			t.Errorf("%s: pIC50 %v LE %v, want %.3f %.3f", c.ID, r.PActivity, r.LE, p, 1.4*p/float64(heavy))
		}
		if !r.Lipinski.Passes || len(r.Lipinski.Violations) > 0 || !r.Veber.Passes {
			t.Errorf("%s: Lipinski %+v Veber %+v", c.ID, r.Lipinski, r.Veber)
		}
		if r.InChIKey == nil || !regexp.MustCompile(`^[A-Z]{14}-[A-Z]{10}-[A-Z]$`).MatchString(*r.InChIKey) {
			t.Errorf("%s: InChIKey %v", c.ID, r.InChIKey)
		}
		if r.RGroups["Core"] == "" {
			t.Errorf("%s: no R-groups: %v", c.ID, r.RGroups)
		}
	}
	t.Logf("largest MW difference from the formulas: %.4f g/mol", worstMW)
	// PD 153035 by hand: IC50 25 pM is pIC50 10.602; C16H14BrN3O2 has 22
	// heavy atoms; LE = 1.4 × 10.602 / 22 = 0.675.
	pd := byID["PD 153035"]
	if *pd.PActivity != 10.602 || *pd.LE != 0.675 || pd.HeavyAtoms != 22 || pd.TPSA != 56.27 {
		t.Errorf("PD 153035: %+v", pd)
	}
	t.Logf("PD 153035 InChIKey %v", deref(pd.InChIKey))
	// Most potent first: the 6,7-diethoxy compound (6 pM), then PD 153035;
	// the unsubstituted 4-anilinoquinazoline last.
	if table.Rows[0].ID != "6,7-diOEt 3'-Br" || table.Rows[1].ID != "PD 153035" || table.Rows[len(table.Rows)-1].ID != "anilino" {
		t.Errorf("order: %v", ids(table.Rows))
	}
	// The maximum common substructure is the 4-anilinoquinazoline: 17 atoms.
	if table.Core.Source != "mcs" || table.Core.Atoms != 17 || len(table.Unmatched) != 0 {
		t.Errorf("core %+v unmatched %v", table.Core, table.Unmatched)
	}
	if len(out.SVG) != len(g.Compounds) {
		t.Errorf("%d drawings of %d", len(out.SVG), len(g.Compounds))
	}
	for k, svg := range out.SVG {
		d, err := chem.SanitizeSVG(svg)
		if err != nil || !strings.Contains(d.Inner, "<path") {
			t.Errorf("drawing %s: %v", k, err)
		}
	}
}

// A structure RDKit cannot sanitize (a pentavalent carbon passes the
// syntax check) is listed with its reason; the others are computed.
func TestWorkerListsAnUnsanitizableStructure(t *testing.T) {
	box := sandbox(t)
	in, err := chem.Validate(chem.Args{Compounds: []chem.RawCompound{{ID: "aspirin", SMILES: "OC(=O)c1ccccc1OC(C)=O"}, {ID: "bad", SMILES: "C(C)(C)(C)(C)C"}}, Figure: new(bool)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := chem.RunWorker(ctx, box, "test", "bad", chem.Request(in, chem.PotencyOrder(in)), nil)
	if err != nil {
		t.Fatal(err)
	}
	table, warnings := chem.Build(in, out)
	if len(warnings) == 0 || !strings.Contains(warnings[0], "compounds[1] (bad)") || len(out.SVG) != 0 {
		t.Fatalf("warnings %q svg %d", warnings, len(out.SVG))
	}
	for _, r := range table.Rows {
		// Aspirin's InChIKey is the well-known one.
		if r.ID == "aspirin" && (r.CanonicalSMILES != "CC(=O)Oc1ccccc1C(=O)O" || r.HeavyAtoms != 13 || deref(r.InChIKey) != "BSYNRYMUTXBXSQ-UHFFFAOYSA-N") ||
			r.ID == "bad" && r.Error == "" {
			t.Errorf("row %+v", r)
		}
	}
}

func ids(rows []chem.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
