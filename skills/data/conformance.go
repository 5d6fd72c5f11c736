package data

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// CheckConformance reads the table in in and checks it against in.Spec. A
// malformed spec or option returns a *[problem.Error] before anything is read;
// a context that ends returns ctx.Err() and no report; a reader that fails
// returns its error. Everything wrong with the table itself is a violation in
// the report.
//
// progress, if not nil, is called every in.ProgressEvery data rows and once at
// the end with fraction 1. The fraction is the share of the input's bytes
// consumed (csv.Reader.InputOffset over the size), or UnknownFraction for a
// Source whose size was not given.
func CheckConformance(ctx context.Context, in Input, progress func(fraction float64, message string)) (*Report, error) {
	p, err := validate(in)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if progress == nil {
		progress = func(float64, string) {}
	}
	src, size := in.Source, in.SourceSize
	if src == nil {
		src, size = strings.NewReader(in.CSV), int64(len(in.CSV))
	}
	br := bufio.NewReader(src)
	bom := int64(0)
	if b, _ := br.Peek(3); string(b) == "\uFEFF" {
		br.Discard(3)
		bom = 3
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1 // a ragged row is a violation, not a read error
	cr.ReuseRecord = true

	rep := &Report{LogicVersion: LogicVersion, Violations: []Violation{}, ViolationCounts: map[string]int{}}
	c := &collector{r: rep, max: p.maxViolations}
	fraction := func() float64 {
		if size <= 0 {
			return UnknownFraction
		}
		return min(1, float64(bom+cr.InputOffset())/float64(size))
	}

	header, err := cr.Read()
	var pe *csv.ParseError
	switch {
	case err == io.EOF:
		c.addf(0, 1, "", ViolationHeaderMissing, "", "the table has no header row")
		progress(1, "no header row")
		return finish(rep), nil
	case errors.As(err, &pe):
		c.addf(0, pe.StartLine, "", ViolationCSVSyntax, "", "header row: %v; the columns cannot be matched, so no row was checked", pe.Err)
		progress(1, "header row unreadable")
		return finish(rep), nil
	case err != nil:
		return nil, fmt.Errorf("read header: %w", err)
	}
	rep.Header = slices.Clone(header)
	at := matchHeader(p, in, rep.Header, c) // header position of each spec column, -1 when absent

	seen := make([]map[string]rowLine, len(p.keys)) // per key: key text -> where it was first seen
	for i := range seen {
		seen[i] = map[string]rowLine{}
	}
	done := ctx.Done()
	row := 0
	for {
		select {
		case <-done:
			return nil, ctx.Err()
		default:
		}
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		row++
		if row%p.progressEvery == 0 {
			progress(fraction(), fmt.Sprintf("checked %d rows, %d violations", row, rep.TotalViolations))
		}
		if errors.As(err, &pe) {
			c.addf(row, pe.StartLine, "", ViolationCSVSyntax, "", "%v", pe.Err)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read row %d: %w", row, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(rep.Header) {
			c.addf(row, line, "", ViolationRaggedRow, "", "row has %d fields, the header has %d; its cells were not checked", len(rec), len(rep.Header))
			continue
		}
		for i := range p.cols {
			if at[i] >= 0 {
				checkCell(&p.cols[i], rec[at[i]], row, line, c)
			}
		}
		for k, key := range p.keys {
			text, ok := keyText(key, at, rec)
			if !ok {
				continue
			}
			if first, dup := seen[k][text]; dup {
				names := keyNames(p, key)
				c.add(Violation{Row: row, Line: line, Column: strings.Join(names, ","), Key: names,
					Code: ViolationDuplicateKey, Value: keyValue(key, at, rec),
					Message: fmt.Sprintf("unique key (%s) = (%s) was first seen on row %d (line %d)",
						strings.Join(names, ", "), keyValue(key, at, rec), first.row, first.line)})
				continue
			}
			seen[k][text] = rowLine{row, line}
		}
	}
	rep.Rows = row
	progress(1, fmt.Sprintf("checked %d rows, %d violations", row, rep.TotalViolations))
	return finish(rep), nil
}

// rowLine is where a key was first seen.
type rowLine struct{ row, line int }

func finish(r *Report) *Report {
	r.Conforms = r.TotalViolations == 0
	return r
}

// matchHeader finds each spec column in the header and reports the header's
// and the declared units' violations, in a fixed order: header columns, spec
// columns, units by column name.
func matchHeader(p *plan, in Input, header []string, c *collector) []int {
	pos := map[string]int{}
	for i, h := range header {
		if j, dup := pos[h]; dup {
			c.addf(0, 1, h, ViolationColumnDuplicate, "", "column %q appears at positions %d and %d; only the first is checked", h, j+1, i+1)
			continue
		}
		pos[h] = i
		if _, ok := p.byName[h]; !ok && !in.Spec.AllowExtraColumns {
			c.addf(0, 1, h, ViolationColumnUnexpected, "", "column %q is not in the spec", h)
		}
	}
	at := make([]int, len(p.cols))
	for i, col := range p.cols {
		j, ok := pos[col.Name]
		if !ok {
			j = -1
			c.addf(0, 1, col.Name, ViolationColumnMissing, "", "spec column %q is not in the header", col.Name)
		}
		at[i] = j
	}
	for _, col := range p.cols {
		declared, has := in.DeclaredUnits[col.Name]
		switch {
		case col.Unit != "" && !has:
			c.addf(0, 0, col.Name, ViolationUnitMissing, "", "the spec gives column %q the unit %q; the dataset declares none", col.Name, col.Unit)
		case has && declared != col.Unit && col.Unit == "":
			c.addf(0, 0, col.Name, ViolationUnitUnexpected, declared, "the dataset declares unit %q for column %q, which the spec gives no unit", declared, col.Name)
		case has && declared != col.Unit:
			c.addf(0, 0, col.Name, ViolationUnitMismatch, declared, "the dataset declares unit %q for column %q; the spec requires %q", declared, col.Name, col.Unit)
		}
	}
	var extra []string
	for name := range in.DeclaredUnits {
		if _, ok := p.byName[name]; !ok {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		c.addf(0, 0, name, ViolationUnitUnknownColumn, in.DeclaredUnits[name], "the dataset declares a unit for column %q, which the spec does not declare", name)
	}
	return at
}

// checkCell checks one cell: required, then type, then allowed values and
// range. An empty cell is a missing value and is checked for nothing else.
func checkCell(col *column, s string, row, line int, c *collector) {
	if s == "" {
		if col.Required {
			c.addf(row, line, col.Name, ViolationRequired, "", "column %q is required; the cell is empty", col.Name)
		}
		return
	}
	v, err := parseValue(col.Type, s)
	if err != nil {
		c.addf(row, line, col.Name, ViolationType, s, "%v (column type %s)", err, col.Type)
		return
	}
	if col.allowed != nil && !col.allowed[s] {
		c.addf(row, line, col.Name, ViolationNotAllowed, s, "%q is not one of the allowed values %s", s, strings.Join(col.Allowed, ", "))
	}
	if col.hasMin && compare(col.Type, v, col.min) < 0 {
		c.addf(row, line, col.Name, ViolationBelowMin, s, "%s is below the minimum %s", s, col.Min)
	}
	if col.hasMax && compare(col.Type, v, col.max) > 0 {
		c.addf(row, line, col.Name, ViolationAboveMax, s, "%s is above the maximum %s", s, col.Max)
	}
}

// keyText encodes a row's key as length-prefixed parts, so ("a,b","c") and
// ("a","b,c") differ; ok is false when a part is empty or its column absent.
func keyText(key, at []int, rec []string) (string, bool) {
	var b strings.Builder
	for _, i := range key {
		if at[i] < 0 || rec[at[i]] == "" {
			return "", false
		}
		s := rec[at[i]]
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	return b.String(), true
}

func keyNames(p *plan, key []int) []string {
	out := make([]string, len(key))
	for i, j := range key {
		out[i] = p.cols[j].Name
	}
	return out
}

// keyValue writes a key's values for a message, quoted and comma-separated.
func keyValue(key, at []int, rec []string) string {
	parts := make([]string, 0, len(key))
	for _, i := range key {
		parts = append(parts, strconv.Quote(rec[at[i]]))
	}
	return strings.Join(parts, ", ")
}
