package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/skills/data"
)

// conformanceArgs are data.check_conformance's arguments: the table, inline
// or as a dataset artifact (its table_csv, or one of its files, and its
// columns' units), and the column specification.
type conformanceArgs struct {
	Dataset       string            `json:"dataset,omitempty"`
	File          string            `json:"file,omitempty"`
	CSV           string            `json:"csv,omitempty"`
	Spec          data.Spec         `json:"spec"`
	DeclaredUnits map[string]string `json:"declared_units,omitempty"`
	MaxViolations int               `json:"max_violations,omitempty"`
}

// conformance is data.check_conformance, a long-running skill: its declared
// wall time puts every call on the job queue, and it reports progress.
func conformance(deps Deps) Skill {
	const name = "data.check_conformance"
	check := func(args json.RawMessage) []runtimes.Problem {
		var a conformanceArgs
		if ps := decodeStrict(args, &a); ps != nil {
			return ps
		}
		switch {
		case a.Dataset == "" && a.CSV == "":
			return []runtimes.Problem{problemOf("dataset", "required", "give the table: a dataset ref, or csv with the text")}
		case a.Dataset != "" && a.CSV != "":
			return []runtimes.Problem{problemOf("csv", "source_conflict", "give a dataset ref or csv, not both")}
		case a.File != "" && a.Dataset == "":
			return []runtimes.Problem{problemOf("file", "requires_dataset", "file names one of a dataset's files: give the dataset ref too")}
		case a.MaxViolations > data.DefaultMaxViolations:
			// data's default is the skill's cap too: it keeps a report within
			// what a tool_call holds (data itself allows up to MaxMaxViolations).
			return []runtimes.Problem{problemOf("max_violations", data.CodeOutOfRange, fmt.Sprintf("at most %d violations are listed (all are counted)", data.DefaultMaxViolations))}
		}
		if a.Dataset != "" {
			if r, err := ref.Parse(a.Dataset); err != nil || r.Type != "dataset" {
				return []runtimes.Problem{problemOf("dataset", "ref", "a dataset ref is dataset:<id>")}
			}
		}
		// The spec and options alone (the caller's max_violations, 0 for
		// data's default, and declared units): an empty table checks them
		// with data's own validation without reading anything.
		_, err := data.CheckConformance(context.Background(), data.Input{CSV: "x\n", Spec: a.Spec, DeclaredUnits: a.DeclaredUnits, MaxViolations: a.MaxViolations}, nil)
		return refusalProblems(err, nil, args)
	}
	run := func(ctx context.Context, args json.RawMessage, progress func(runtimes.Progress)) (json.RawMessage, error) {
		var a conformanceArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, refused(err)
		}
		// MaxViolations 0 is data's default, the skill's cap.
		in := data.Input{CSV: a.CSV, Spec: a.Spec, DeclaredUnits: a.DeclaredUnits, MaxViolations: a.MaxViolations}
		source := "inline csv"
		verify := func() error { return nil }
		if a.Dataset != "" {
			t, err := datasetTable(ctx, deps, a.Dataset, a.File)
			if err != nil {
				return nil, err
			}
			defer t.close()
			in.CSV, in.Source, in.SourceSize, source, verify = t.csv, t.reader, t.size, t.source, t.verify
			if in.DeclaredUnits == nil {
				in.DeclaredUnits = t.units
			}
		}
		r, err := data.CheckConformance(ctx, in, func(f float64, msg string) {
			p := runtimes.Progress{Message: msg}
			if f >= 0 {
				p.Fraction = &f
			}
			progress(p)
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, refused(err)
		}
		if err := verify(); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"report": r, "conforms": r.Conforms, "source": source,
			"calculation_route":   "every row of the table against the column specification (types, units, ranges, required, allowed values, unique keys), logic " + data.LogicVersion,
			"check_logic_version": data.LogicVersion, "units": map[string]string{}, "warnings": []string{}, "disclaimers": []string{}, "references_used": []map[string]any{}})
	}
	example := map[string]any{"csv": "subject,time_h,conc\n1,0,0.74\n1,0.25,2.84\n1,0.25,x\n",
		"spec": map[string]any{"columns": []any{
			map[string]any{"name": "subject", "type": "integer", "required": true},
			map[string]any{"name": "time_h", "type": "number", "unit": "h", "min": 0},
			map[string]any{"name": "conc", "type": "number", "unit": "mg/L", "min": 0}},
			"unique_keys": []any{[]any{"subject", "time_h"}}},
		"declared_units": map[string]any{"time_h": "h", "conc": "mg/L"}}
	return Skill{
		Name: name, Version: "1.0.0", CheckLogicVersion: data.LogicVersion, Intended: Designed,
		Run: run, Check: check,
		Tool: mustManifest(map[string]any{
			"name": name, "version": "1.1.0", "runtime": "in_process", "runtime_config": map[string]any{"function": name},
			"summary":       "Checks a dataset's table against a column specification (names, types, units, ranges, required, allowed values, unique keys) and reports every violation with its row and column. Long-running: it runs on the job queue and reports progress.",
			"input_schema":  conformanceInputSchema(example),
			"output_schema": conformanceOutputSchema(),
			// Longer than the synchronous limit: every call is queued.
			"resource_caps": map[string]any{"wall_time_min": 15}, "deterministic": true, "idempotent": true, "retries": 1,
			"render_hints": map[string]any{"primary_view": "table", "columns": []any{"row", "line", "column", "code", "message"}},
			"examples":     []any{map[string]any{"description": "A duplicate key and a value that is not a number.", "args": example}},
		}),
		Doc: mustManifest(map[string]any{
			"title":       "Dataset conformance check",
			"summary":     "Checks every row of a table against its declared column specification and reports each violation with its row, line and column.",
			"domain":      "data_quality",
			"inputs":      "dataset (a dataset ref: its table_csv, or with file one of its files[], read from the server's dataset directory and checked against its sha256; and its columns[].unit) or csv; spec {columns [{name, type string|integer|number|boolean|date, unit, required, min, max, allowed}], unique_keys, allow_extra_columns}; declared_units; max_violations (≤ 1000 listed, all counted).",
			"outputs":     "report {conforms, rows, violations [{row, line, column, code, value, message}], total_violations, violation_counts, truncated}.",
			"limitations": "Reads a table kept inline in the dataset artifact (up to about 900 kB) or a file of the dataset in the server's dataset directory (--dataset-dir), whose bytes must hash to the dataset's declared sha256; it does not fetch a dataset's url or accession.",
			"example":     map[string]any{"description": "Runs as written with runSkill; queued, so the call returns QUEUED and finishes on a worker.", "inputs": example},
		}),
	}
}

// table is where a dataset's rows come from: its inline CSV, or a file
// read as it is hashed (verify says whether it was the declared file).
type table struct {
	csv    string
	reader io.Reader
	size   int64
	units  map[string]string
	source string
	verify func() error
	close  func()
}

// datasetTable reads a dataset artifact: its inline table, or the file named
// (its only CSV file when none is named and nothing is inline), and its
// columns' units.
func datasetTable(ctx context.Context, deps Deps, s, file string) (*table, error) {
	r, err := ref.Parse(s)
	if err != nil {
		return nil, refused(err)
	}
	a, err := deps.Store.Get(ctx, r)
	if errors.Is(err, store.ErrNotFound) {
		return nil, runtimes.Errorf("not_found", false, "no dataset %s (or you may not read it)", s)
	}
	if err != nil {
		return nil, err
	}
	var c struct {
		TableCSV string        `json:"table_csv"`
		Files    []datasetFile `json:"files"`
		Columns  []struct {
			Name string `json:"name"`
			Unit string `json:"unit"`
		} `json:"columns"`
	}
	_ = json.Unmarshal(a.Content, &c)
	t := &table{units: map[string]string{}, source: a.Ref().String(), verify: func() error { return nil }, close: func() {}}
	for _, col := range c.Columns {
		if col.Unit != "" {
			t.units[col.Name] = col.Unit
		}
	}
	if c.TableCSV != "" && file == "" {
		t.csv = c.TableCSV
		return t, nil
	}
	if len(c.Files) == 0 {
		return nil, runtimes.Errorf("no_table", false, "dataset %s keeps no table inline (content.table_csv) and declares no files", a.Unpinned())
	}
	f, err := pickFile(a.Unpinned().String(), file, c.Files)
	if err != nil {
		return nil, err
	}
	fr, err := openDatasetFile(deps.DatasetDir, a.Unpinned().String(), f)
	if err != nil {
		return nil, err
	}
	t.reader, t.size, t.verify, t.close = fr, fr.size, fr.verify, fr.close
	t.source = a.Ref().String() + " file " + f.Path + " (sha256:" + f.SHA256 + ")"
	return t, nil
}
