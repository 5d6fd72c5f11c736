package pk

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/csv"
	"encoding/hex"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// theophCSV is an unchanged copy of /work/shared/data/theoph.csv (R's
// datasets::Theoph).
//
//go:embed testdata/theoph.csv
var theophCSV []byte

// theophSHA256 is the sha256 the shared data README gives for theoph.csv.
const theophSHA256 = "228b0e1c7b89f05b90ea49c144a40ba8439c64e6a1684af8201981e0a8dee3cf"

func TestTheophChecksum(t *testing.T) {
	sum := sha256.Sum256(theophCSV)
	if got := hex.EncodeToString(sum[:]); got != theophSHA256 {
		t.Fatalf("testdata/theoph.csv sha256 = %s, want %s (the README's): the copy was changed", got, theophSHA256)
	}
}

// theophProfiles reads the 12 subjects, dose 320 mg each as the published
// NCA reports of this dataset use (the README's note).
func theophProfiles(t *testing.T) []Profile {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(theophCSV)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var ps []Profile
	for _, row := range rows[1:] {
		tm, err1 := strconv.ParseFloat(row[3], 64)
		c, err2 := strconv.ParseFloat(row[4], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad row %v", row)
		}
		if len(ps) == 0 || ps[len(ps)-1].Subject != row[0] {
			ps = append(ps, Profile{Subject: row[0], Dose: 320, Route: RouteExtravascular})
		}
		p := &ps[len(ps)-1]
		p.Times = append(p.Times, tm)
		p.Conc = append(p.Conc, c)
	}
	if len(ps) != 12 {
		t.Fatalf("read %d subjects, want 12", len(ps))
	}
	return ps
}

// params flattens a result into the names the by-hand file and the naive
// implementation use. A parameter that is nil is left out.
func params(r *Result) map[string]float64 {
	m := map[string]float64{
		"cmax": r.Cmax, "tmax": r.Tmax, "clast": r.Clast, "tlast": r.Tlast, "c0": r.C0,
		"auclast": r.AUClast, "aucall": r.AUCall, "aumclast": r.AUMClast,
		"cmaxd": r.CmaxD, "auclastd": r.AUClastD,
	}
	set := func(k string, v *float64) {
		if v != nil {
			m[k] = *v
		}
	}
	set("mrtlast", r.MRTlast)
	set("tlag", r.Tlag)
	set("aucinfobsd", r.AUCinfObsD)
	set("aucinfpredd", r.AUCinfPredD)
	set("aumcpctextrapobs", r.AUMCPctExtrapObs)
	set("aumcpctextrappred", r.AUMCPctExtrapPred)
	set("vssobs", r.VssObs)
	set("vsspred", r.VssPred)
	set("clastpred", r.ClastPred)
	set("aucinfobs", r.AUCinfObs)
	set("aucinfpred", r.AUCinfPred)
	set("aucpctextrapobs", r.AUCPctExtrapObs)
	set("aucpctextrappred", r.AUCPctExtrapPred)
	set("aumcinfobs", r.AUMCinfObs)
	set("aumcinfpred", r.AUMCinfPred)
	set("mrtinfobs", r.MRTinfObs)
	set("mrtinfpred", r.MRTinfPred)
	set("clobs", r.CLObs)
	set("clpred", r.CLPred)
	set("vzobs", r.VzObs)
	set("vzpred", r.VzPred)
	if tm := r.Terminal; tm != nil {
		m["lambdaz"], m["lambdazn"], m["r2"], m["adjr2"] = tm.LambdaZ, float64(tm.N), tm.R2, tm.AdjR2
		m["halflife"], m["span"], m["intercept"] = tm.HalfLife, tm.Span, tm.Intercept
		m["lambdaztfirst"] = tm.Times[0]
		m["corrxy"] = tm.CorrXY
	}
	return m
}

// near reports whether got is within rel of want (absolute near zero).
func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(1, math.Abs(want))
}

// TestTheophSubject1ByHand checks subject 1 against the calculation written
// out in testdata/theoph_subject1_by_hand.txt, for both AUC methods and every
// parameter. The file prints 10 significant digits, so the tolerance is 1e-9
// relative.
func TestTheophSubject1ByHand(t *testing.T) {
	f, err := os.Open("testdata/theoph_subject1_by_hand.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]map[string]float64{AUCLinear: {}, AUCLinearUpLogDown: {}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 4 || fs[0] != "expect" {
			continue
		}
		v, err := strconv.ParseFloat(fs[3], 64)
		if err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		for m := range want {
			if fs[1] == "both" || fs[1] == m {
				want[m][fs[2]] = v
			}
		}
	}
	p := theophProfiles(t)[0]
	for method, exp := range want {
		r, err := NCA(p, Options{AUCMethod: method})
		if err != nil {
			t.Fatal(err)
		}
		got := params(r)
		// Every parameter of the list is in the file.
		for _, k := range []string{"cmax", "tmax", "tlast", "clast", "auclast", "aucall", "aucinfobs", "aucinfpred",
			"aucpctextrapobs", "aucpctextrappred", "lambdaz", "lambdazn", "r2", "adjr2", "span", "halflife",
			"aumclast", "aumcinfobs", "mrtinfobs", "clobs", "vzobs"} {
			if _, ok := exp[k]; !ok {
				t.Errorf("by-hand file lacks %s for %s", k, method)
			}
		}
		for k, w := range exp {
			g, ok := got[k]
			if !ok || !near(g, w, 1e-9) {
				t.Errorf("%s: subject 1 %s = %v (present %v), by hand %v", method, k, g, ok, w)
			}
		}
		if r.Method != method || r.Route != RouteExtravascular || r.CLName != "CL/F" || r.VzName != "Vz/F" {
			t.Errorf("result names %q %q %q %q", r.Method, r.Route, r.CLName, r.VzName)
		}
		if len(r.Terminal.Times) != 3 || r.Terminal.Times[0] != 9.05 || r.Terminal.Times[2] != 24.37 {
			t.Errorf("λz points %v, by hand 9.05, 12.12, 24.37", r.Terminal.Times)
		}
		if !hasNote(r.Imputations, NoteC0Observed) || !hasNote(r.Warnings, WarnExtrapolatedOver20) {
			t.Errorf("notes %v warnings %v: want c0_observed and the >20%% extrapolation warning", r.Imputations, r.Warnings)
		}
	}
}

// TestTheophAllSubjects compares all 12 subjects, both methods, every
// parameter with the naive implementation in naive_test.go (written apart from
// the package, sharing none of its code), to 1e-9 relative.
func TestTheophAllSubjects(t *testing.T) {
	ps := theophProfiles(t)
	for _, method := range []string{AUCLinear, AUCLinearUpLogDown} {
		rs, err := NCAMany(ps, Options{AUCMethod: method})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range ps {
			want := naiveNCA(p.Times, p.Conc, p.Dose, method == AUCLinearUpLogDown)
			got := params(rs[i])
			if len(got) != len(want) {
				t.Errorf("%s subject %s: %d parameters, naive %d", method, p.Subject, len(got), len(want))
			}
			for k, w := range want {
				if g, ok := got[k]; !ok || !near(g, w, 1e-9) {
					t.Errorf("%s subject %s: %s = %v, naive %v", method, p.Subject, k, g, w)
				}
			}
			// Subjects 1, 7 and 10 start from their observed non-zero C(0).
			switch p.Subject {
			case "1", "7", "10":
				if rs[i].C0 == 0 || !hasNote(rs[i].Imputations, NoteC0Observed) {
					t.Errorf("subject %s: C0 %v, notes %v", p.Subject, rs[i].C0, rs[i].Imputations)
				}
			}
		}
	}
}

func hasNote(ns []Note, code string) bool {
	for _, n := range ns {
		if n.Code == code {
			return true
		}
	}
	return false
}
