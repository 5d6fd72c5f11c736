package data

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// got is a violation's position and code, what the tests compare.
func got(r *Report) []string {
	out := make([]string, len(r.Violations))
	for i, v := range r.Violations {
		out[i] = fmt.Sprintf("%d/%d %s %s", v.Row, v.Line, v.Column, v.Code)
	}
	return out
}

func check(t *testing.T, in Input) *Report {
	t.Helper()
	r, err := CheckConformance(context.Background(), in, nil)
	if err != nil {
		t.Fatalf("CheckConformance: %v", err)
	}
	return r
}

// pkSpec is a small PK table: subject, time in h, concentration in mg/L.
func pkSpec() Spec {
	return Spec{
		Columns: []Column{
			{Name: "subject", Type: TypeInteger, Required: true, Min: "1", Max: "12"},
			{Name: "time_h", Type: TypeNumber, Unit: "h", Required: true, Min: "0"},
			{Name: "conc", Type: TypeNumber, Unit: "mg/L", Min: "0", Max: "20"},
			{Name: "sex", Type: TypeString, Allowed: []string{"F", "M"}},
			{Name: "dosed", Type: TypeBoolean},
			{Name: "visit", Type: TypeDate, Min: "2026-01-01", Max: "2026-12-31"},
		},
		UniqueKeys: [][]string{{"subject", "time_h"}},
	}
}

var pkUnits = map[string]string{"time_h": "h", "conc": "mg/L"}

const pkHeader = "subject,time_h,conc,sex,dosed,visit\n"

func TestConformingTable(t *testing.T) {
	r := check(t, Input{Spec: pkSpec(), DeclaredUnits: pkUnits, CSV: pkHeader +
		"1,0,0.74,F,TRUE,2026-01-05\n" +
		"1,0.25,2.84,F,true,2026-01-05\n" +
		"2,0,,M,False,\n" + // empty optional cells are missing values, not violations
		"12,24,20,M,false,2026-12-31\n"}) // bounds are inclusive
	if !r.Conforms || r.TotalViolations != 0 || r.Rows != 4 || len(r.Header) != 6 {
		t.Fatalf("conforms=%v rows=%d violations %v", r.Conforms, r.Rows, got(r))
	}
	if r.LogicVersion != LogicVersion {
		t.Errorf("logic version %q", r.LogicVersion)
	}
}

// One hand-written case per violation kind, each asserting row, line,
// column and code.
func TestEveryViolationKind(t *testing.T) {
	cases := []struct {
		name  string
		csv   string
		units map[string]string
		spec  func(*Spec)
		want  []string
	}{
		{"header missing", "", pkUnits, nil, []string{"0/1  header_missing"}},
		{"column missing and unexpected", "subject,time_h,conc,sex,dosed,when\n1,0,1,F,true,x\n", pkUnits, nil,
			[]string{"0/1 when column_unexpected", "0/1 visit column_missing"}},
		{"extra columns allowed", "subject,time_h,conc,sex,dosed,visit,note\n1,0,1,F,true,2026-01-01,hi\n", pkUnits,
			func(s *Spec) { s.AllowExtraColumns = true }, nil},
		{"column duplicate", "subject,time_h,conc,sex,dosed,visit,conc\n1,0,1,F,true,2026-01-01,abc\n", pkUnits, nil,
			[]string{"0/1 conc column_duplicate"}},
		{"unit missing", pkHeader, map[string]string{"time_h": "h"}, nil, []string{"0/0 conc unit_missing"}},
		{"unit mismatch is case-sensitive", pkHeader, map[string]string{"time_h": "h", "conc": "mg/l"}, nil,
			[]string{"0/0 conc unit_mismatch"}},
		{"unit unexpected", pkHeader, map[string]string{"time_h": "h", "conc": "mg/L", "subject": "1"}, nil,
			[]string{"0/0 subject unit_unexpected"}},
		{"unit on unknown column", pkHeader, map[string]string{"time_h": "h", "conc": "mg/L", "wt": "kg"}, nil,
			[]string{"0/0 wt unit_unknown_column"}},
		{"required missing", pkHeader + "1,,1,F,true,2026-01-01\n", pkUnits, nil, []string{"1/2 time_h required_missing"}},
		{"type mismatch", pkHeader + "1,0,1,F,true,2026-01-01\nx,1.5.1,NaN,F,yes,2026-02-30\n", pkUnits, nil,
			[]string{"2/3 subject type_mismatch", "2/3 time_h type_mismatch", "2/3 conc type_mismatch", "2/3 dosed type_mismatch", "2/3 visit type_mismatch"}},
		{"integer not a decimal", pkHeader + "1.0,0,1,F,true,2026-01-01\n", pkUnits, nil, []string{"1/2 subject type_mismatch"}},
		{"below min", pkHeader + "0,-0.5,1,F,true,2025-12-31\n", pkUnits, nil,
			[]string{"1/2 subject below_min", "1/2 time_h below_min", "1/2 visit below_min"}},
		{"above max", pkHeader + "13,0,20.0001,F,true,2027-01-01\n", pkUnits, nil,
			[]string{"1/2 subject above_max", "1/2 conc above_max", "1/2 visit above_max"}},
		{"not allowed", pkHeader + "1,0,1,f,true,2026-01-01\n", pkUnits, nil, []string{"1/2 sex value_not_allowed"}},
		{"duplicate composite key", pkHeader + "1,0,1,F,true,\n1,1,1,F,true,\n2,0,1,F,true,\n1,0,2,F,true,\n", pkUnits, nil,
			[]string{"4/5 subject,time_h duplicate_key"}},
		{"key parts do not run together", pkHeader + "1,23,1,F,true,\n12,3,1,F,true,\n", pkUnits, nil, nil},
		{"key compares text", pkHeader + "1,0,1,F,true,\n1,0.0,1,F,true,\n", pkUnits, nil, nil},
		{"single-column key", pkHeader + "1,0,1,F,true,\n1,1,1,F,true,\n", pkUnits,
			func(s *Spec) { s.UniqueKeys = [][]string{{"subject"}} }, []string{"2/3 subject duplicate_key"}},
		{"empty key part is not checked", pkHeader + "1,0,,F,true,\n1,1,,F,true,\n", pkUnits,
			func(s *Spec) { s.UniqueKeys = [][]string{{"subject", "conc"}} }, nil},
		{"ragged rows", pkHeader + "1,0,1,F\n1,1,1,F,true,2026-01-01,extra\n2,0,x,F,true,\n", pkUnits, nil,
			[]string{"1/2  ragged_row", "2/3  ragged_row", "3/4 conc type_mismatch"}},
		{"bare quote, then rows go on", pkHeader + "1,0,1,F\"x,true,\n2,0,x,F,true,\n", pkUnits, nil,
			[]string{"1/2  csv_syntax", "2/3 conc type_mismatch"}},
		{"unterminated quote", pkHeader + "1,0,1,F,true,\n2,0,\"1,F,true,\n", pkUnits, nil, []string{"2/3  csv_syntax"}},
		{"header unreadable", "subject,\"time\"h\n1,2\n", pkUnits, nil, []string{"0/1  csv_syntax"}},
		{"cells are not trimmed", pkHeader + "1, 0,1,F,true,\n", pkUnits, nil, []string{"1/2 time_h type_mismatch"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := pkSpec()
			if tc.spec != nil {
				tc.spec(&s)
			}
			r := check(t, Input{Spec: s, DeclaredUnits: tc.units, CSV: tc.csv})
			if g := strings.Join(got(r), "; "); g != strings.Join(tc.want, "; ") {
				t.Errorf("violations\n got  %s\n want %s", g, strings.Join(tc.want, "; "))
			}
			if r.Conforms != (len(tc.want) == 0) || r.TotalViolations != len(tc.want) {
				t.Errorf("conforms=%v total=%d", r.Conforms, r.TotalViolations)
			}
			for _, v := range r.Violations {
				if v.Message == "" {
					t.Errorf("violation without message: %+v", v)
				}
			}
		})
	}
}

func TestDuplicateKeyNamesFirstRow(t *testing.T) {
	r := check(t, Input{Spec: pkSpec(), DeclaredUnits: pkUnits, CSV: pkHeader + "1,0,1,F,true,\n1,1,1,F,true,\n1,0,2,F,true,\n"})
	v := r.Violations[0]
	if v.Message != `unique key (subject, time_h) = ("1", "0") was first seen on row 1 (line 2)` || len(v.Key) != 2 || v.Value != `"1", "0"` {
		t.Errorf("%+v", v)
	}
}

// BOM, CRLF and quoted fields with commas, quotes and newlines: the header is
// matched despite the BOM, and a row after a multi-line cell is placed on
// its true line.
func TestCSVFormat(t *testing.T) {
	s := Spec{Columns: []Column{{Name: "id", Type: TypeInteger}, {Name: "note", Type: TypeString}, {Name: "v", Type: TypeNumber}}}
	text := "\uFEFFid,note,v\r\n" +
		"1,\"a, b\",1\r\n" +
		"2,\"say \"\"hi\"\"\nand\r\nbye\",2\r\n" + // lines 3-5
		"3,plain,x\r\n" // line 6
	r := check(t, Input{Spec: s, CSV: text})
	if r.Header[0] != "id" || r.Rows != 3 {
		t.Fatalf("header %q, rows %d", r.Header, r.Rows)
	}
	if g := strings.Join(got(r), "; "); g != "3/6 v type_mismatch" {
		t.Errorf("got %s", g)
	}
}

func TestCapCountsEverything(t *testing.T) {
	var b strings.Builder
	b.WriteString("id\n")
	for i := 0; i < 50; i++ {
		b.WriteString("x\n")
	}
	r := check(t, Input{Spec: Spec{Columns: []Column{{Name: "id", Type: TypeInteger}}}, CSV: b.String(), MaxViolations: 3})
	if len(r.Violations) != 3 || r.TotalViolations != 50 || !r.Truncated || r.ViolationCounts[ViolationType] != 50 {
		t.Errorf("listed %d, total %d, truncated %v, counts %v", len(r.Violations), r.TotalViolations, r.Truncated, r.ViolationCounts)
	}
	if r.Violations[2].Row != 3 || r.Violations[2].Line != 4 {
		t.Errorf("the first violations are kept: %+v", r.Violations[2])
	}
	r = check(t, Input{Spec: Spec{Columns: []Column{{Name: "id", Type: TypeInteger}}}, CSV: b.String()})
	if len(r.Violations) != 50 || r.Truncated {
		t.Errorf("default cap %d: listed %d, truncated %v", DefaultMaxViolations, len(r.Violations), r.Truncated)
	}
}

func TestLongValueIsShortened(t *testing.T) {
	long := strings.Repeat("9", 1000) + "x"
	r := check(t, Input{Spec: Spec{Columns: []Column{{Name: "id", Type: TypeInteger}}}, CSV: "id\n" + long + "\n"})
	if v := r.Violations[0]; len(v.Value) > maxValueLen+3 || len(v.Message) > maxMessageLen+3 {
		t.Errorf("value of %d bytes, message of %d", len(v.Value), len(v.Message))
	}
	if got := shorten("aé", 2); got != "a…" {
		t.Errorf("shorten cuts on a rune boundary: %q", got)
	}
}

// Key parts are length-prefixed, so text with the separator in it cannot
// make two different keys look equal.
func TestKeyPartsAreDelimited(t *testing.T) {
	s := Spec{Columns: []Column{{Name: "a", Type: TypeString}, {Name: "b", Type: TypeString}}, UniqueKeys: [][]string{{"a", "b"}}}
	r := check(t, Input{Spec: s, CSV: "a,b\nx:y,z\nx,y:z\n1:x,y\n"})
	if !r.Conforms {
		t.Errorf("distinct keys reported as duplicates: %v", got(r))
	}
}

// The byte order mark counts in the fraction, as it counts in the size.
func TestFractionCountsBOM(t *testing.T) {
	text := "\uFEFFid\n1\n2\n"
	var fr []float64
	check := func(f float64, _ string) { fr = append(fr, f) }
	if _, err := CheckConformance(context.Background(), Input{Spec: Spec{Columns: []Column{{Name: "id", Type: TypeInteger}}}, CSV: text, ProgressEvery: 1}, check); err != nil {
		t.Fatal(err)
	}
	// After row 1: BOM (3 bytes) + "id\n" + "1\n" = 8 of 10 bytes.
	if len(fr) != 3 || fr[0] != 0.8 || fr[1] != 1 || fr[2] != 1 {
		t.Errorf("fractions %v", fr)
	}
}
