package data

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/scidex/substrate/skills/problem"
)

func col(name, typ string) Column { return Column{Name: name, Type: typ} }

// A malformed spec or option is refused with its path and code, before
// anything is read (the reader here would fail the test if touched).
func TestRefusesMalformedSpec(t *testing.T) {
	base := func() Input {
		return Input{Spec: Spec{Columns: []Column{col("id", TypeInteger), col("x", TypeNumber), col("d", TypeDate), col("s", TypeString)}}}
	}
	cases := []struct {
		name   string
		mutate func(*Input)
		path   string
		code   string
	}{
		{"no columns", func(in *Input) { in.Spec.Columns = nil }, "spec.columns", CodeRequired},
		{"unnamed column", func(in *Input) { in.Spec.Columns[1].Name = "" }, "spec.columns[1].name", CodeRequired},
		{"unknown type", func(in *Input) { in.Spec.Columns[1].Type = "float" }, "spec.columns[1].type", CodeUnknownType},
		{"type is case-sensitive", func(in *Input) { in.Spec.Columns[0].Type = "Integer" }, "spec.columns[0].type", CodeUnknownType},
		{"duplicate column", func(in *Input) { in.Spec.Columns[3].Name = "x" }, "spec.columns[3].name", CodeDuplicateColumn},
		{"min > max", func(in *Input) { in.Spec.Columns[1].Min, in.Spec.Columns[1].Max = "10", "9.5" }, "spec.columns[1].min", CodeMinGreaterThanMax},
		{"date min > max", func(in *Input) { in.Spec.Columns[2].Min, in.Spec.Columns[2].Max = "2026-02-01", "2026-01-31" }, "spec.columns[2].min", CodeMinGreaterThanMax},
		{"integer bound not integer", func(in *Input) { in.Spec.Columns[0].Max = "1.5" }, "spec.columns[0].max", CodeInvalidBound},
		{"number bound not number", func(in *Input) { in.Spec.Columns[1].Min = "NaN" }, "spec.columns[1].min", CodeInvalidBound},
		{"bad date bound", func(in *Input) { in.Spec.Columns[2].Max = "2026-02-30" }, "spec.columns[2].max", CodeInvalidBound},
		{"bound on string", func(in *Input) { in.Spec.Columns[3].Min = "a" }, "spec.columns[3].min", CodeBoundNotApplicable},
		{"allowed not of type", func(in *Input) { in.Spec.Columns[0].Allowed = []string{"1", "two"} }, "spec.columns[0].allowed[1]", CodeInvalidAllowed},
		{"allowed twice", func(in *Input) { in.Spec.Columns[3].Allowed = []string{"a", "a"} }, "spec.columns[3].allowed[1]", CodeInvalidAllowed},
		{"unknown key column", func(in *Input) { in.Spec.UniqueKeys = [][]string{{"id", "y"}} }, "spec.unique_keys[0][1]", CodeUnknownKeyColumn},
		{"empty key", func(in *Input) { in.Spec.UniqueKeys = [][]string{{"id"}, {}} }, "spec.unique_keys[1]", CodeEmptyKey},
		{"column twice in key", func(in *Input) { in.Spec.UniqueKeys = [][]string{{"id", "id"}} }, "spec.unique_keys[0][1]", CodeDuplicateKeyColumn},
		{"negative cap", func(in *Input) { in.MaxViolations = -1 }, "max_violations", CodeOutOfRange},
		{"cap too large", func(in *Input) { in.MaxViolations = MaxMaxViolations + 1 }, "max_violations", CodeOutOfRange},
		{"negative progress", func(in *Input) { in.ProgressEvery = -5 }, "progress_every", CodeOutOfRange},
		{"text and reader", func(in *Input) { in.CSV = "id\n"; in.Source = strings.NewReader("id\n") }, "csv", CodeSourceConflict},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.mutate(&in)
			if in.Source == nil {
				in.Source = failReader{t}
			}
			r, err := CheckConformance(context.Background(), in, nil)
			var pe *problem.Error
			if !errors.As(err, &pe) || r != nil {
				t.Fatalf("got %v, %v; want a *problem.Error", r, err)
			}
			if len(pe.Problems) != 1 || pe.Problems[0].Path != tc.path || pe.Problems[0].Code != tc.code {
				t.Fatalf("problems %+v, want one at %s with code %s", pe.Problems, tc.path, tc.code)
			}
			if want := "data.check_conformance: invalid input: " + tc.path + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %q, want it to begin %q", err, want)
			}
		})
	}
}

// failReader fails the test when read: the spec must be refused first.
type failReader struct{ t *testing.T }

func (f failReader) Read([]byte) (int, error) {
	f.t.Error("the table was read although the input is refused")
	return 0, errors.New("unreachable")
}

func TestSpecFromJSON(t *testing.T) {
	var s Spec
	err := json.Unmarshal([]byte(`{"columns": [
		{"name": "conc", "type": "number", "unit": "mg/L", "min": 0, "max": 1.5e3, "required": true},
		{"name": "day", "type": "date", "min": "2026-01-01", "max": null}],
		"unique_keys": [["conc", "day"]]}`), &s)
	if err != nil {
		t.Fatal(err)
	}
	if s.Columns[0].Min != "0" || s.Columns[0].Max != "1.5e3" || s.Columns[1].Min != "2026-01-01" || s.Columns[1].Max != "" {
		t.Errorf("bounds %+v", s.Columns)
	}
	if err := json.Unmarshal([]byte(`{"columns": [{"name": "x", "type": "number", "min": true}]}`), &s); err == nil {
		t.Error("a boolean bound should not decode")
	}
}

func TestValueSyntax(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-12": true, "+3": true, "1.5": true, "1.": true, ".5": true, "1e3": true, "-2.5E-3": true,
		"": false, "-": false, ".": false, "e3": false, "1e": false, "1e+": false, "NaN": false, "Inf": false,
		"0x1p-2": false, "1_000": false, " 1": false, "1 ": false, "1,5": false, "--1": false,
	} {
		if got := isDecimal(s); got != want {
			t.Errorf("isDecimal(%q) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]bool{"0": true, "-12": true, "+3": true, "1.0": false, "": false, "+": false, "1e3": false} {
		if got := isInteger(s); got != want {
			t.Errorf("isInteger(%q) = %v, want %v", s, got, want)
		}
	}
	if _, err := parseValue(TypeInteger, "9223372036854775808"); err == nil {
		t.Error("2^63 overflows int64")
	}
}
