package tox

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
)

// tableCSV is /work/shared/data/fda2005_table1.csv copied unchanged: FDA
// CDER (July 2005), Table 1, as gathered from secondary sources (each row
// names its sources and carries its status).
//
//go:embed fda2005_table1.csv
var tableCSV []byte

// TableSHA256 is the sha256 of the embedded fda2005_table1.csv (LF line
// endings). The data README gives no hash for this file, so this is the hash
// computed when the file was copied in (sha256sum, identical bytes to
// /work/shared/data/fda2005_table1.csv); a test checks the embedded copy
// against it so an edit to the table cannot pass unnoticed.
const TableSHA256 = "1bb0d6925e90d8a61c7e3efdc805d392a42101c9a3c7c31258dc0ac12885167f"

// Status values carried unchanged from the data: a row, or a reference, is
// verified or still to be verified.
const (
	StatusVerified = "verified"
	StatusToVerify = "to_verify"
)

// HumanAdult is the table row of the adult human (60 kg, km 37): the
// denominator of the km ratio and the default human weight.
const HumanAdult = "human_adult"

// Row is one row of Table 1. DivideBy is 0 for the human rows, which have
// none.
type Row struct {
	// Species is the row's identifier ("rat", "guinea_pig", ...).
	Species string `json:"species"`
	// RefBodyWeightKg is the reference body weight in kg.
	RefBodyWeightKg float64 `json:"ref_body_weight_kg"`
	// BSAM2 is the body surface area at the reference weight, in m².
	BSAM2 float64 `json:"bsa_m2"`
	// Km converts a dose in mg/kg to mg/m² (dose_mg_per_m2 = km × dose_mg_per_kg).
	Km float64 `json:"km"`
	// DivideBy is the table's factor: HED in mg/kg = animal dose in mg/kg / DivideBy.
	DivideBy float64 `json:"divide_by,omitempty"`
	// Status is verified or to_verify, from the data file.
	Status string `json:"status"`
	// Sources names where the row's values were checked.
	Sources string `json:"sources"`
}

// table is Table 1 indexed by species, in file order.
type table struct {
	rows  []Row
	index map[string]int
}

var tableColumns = []string{"species", "ref_body_weight_kg", "bsa_m2", "km", "divide_by", "status", "sources"}

// parseTable reads Table 1 from CSV. It is strict: an unexpected header, a
// number that does not parse, a non-positive weight or km, an animal row
// without a divide-by factor or an unknown status is an error, because a
// silently misread constant would go on to print a wrong dose.
func parseTable(data []byte) (*table, error) {
	r := csv.NewReader(bytes.NewReader(data))
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read table: %w", err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("read table: no rows")
	}
	if strings.Join(recs[0], ",") != strings.Join(tableColumns, ",") {
		return nil, fmt.Errorf("read table: header %q, want %q", recs[0], tableColumns)
	}
	t := &table{index: map[string]int{}}
	for i, rec := range recs[1:] {
		line := i + 2
		num := func(col int, optional bool) (float64, error) {
			s := rec[col]
			if s == "" && optional {
				return 0, nil
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v > 0) {
				return 0, fmt.Errorf("read table: line %d: %s %q is not a positive number", line, tableColumns[col], s)
			}
			return v, nil
		}
		row := Row{Species: rec[0], Status: rec[5], Sources: rec[6]}
		if row.Species == "" {
			return nil, fmt.Errorf("read table: line %d: empty species", line)
		}
		if _, dup := t.index[row.Species]; dup {
			return nil, fmt.Errorf("read table: line %d: species %q repeated", line, row.Species)
		}
		isHuman := strings.HasPrefix(row.Species, "human_")
		if row.RefBodyWeightKg, err = num(1, false); err != nil {
			return nil, err
		}
		if row.BSAM2, err = num(2, false); err != nil {
			return nil, err
		}
		if row.Km, err = num(3, false); err != nil {
			return nil, err
		}
		if row.DivideBy, err = num(4, isHuman); err != nil {
			return nil, err
		}
		if row.Status != StatusVerified && row.Status != StatusToVerify {
			return nil, fmt.Errorf("read table: line %d: status %q, want verified or to_verify", line, row.Status)
		}
		t.index[row.Species] = len(t.rows)
		t.rows = append(t.rows, row)
	}
	if _, ok := t.index[HumanAdult]; !ok {
		return nil, fmt.Errorf("read table: no %s row", HumanAdult)
	}
	return t, nil
}

// row returns the row of species, if the table has it.
func (t *table) row(species string) (Row, bool) {
	i, ok := t.index[species]
	if !ok {
		return Row{}, false
	}
	return t.rows[i], true
}

// animalSpecies lists the species a study may name from the table: every
// row except the human ones, in file order.
func (t *table) animalSpecies() []string {
	var out []string
	for _, r := range t.rows {
		if !strings.HasPrefix(r.Species, "human_") {
			out = append(out, r.Species)
		}
	}
	return out
}

// defaultTable is the embedded Table 1, parsed once. The embedded file is
// part of the build and a test parses it, so a failure here is a build
// defect, not an input error.
var defaultTable = func() *table {
	t, err := parseTable(tableCSV)
	if err != nil {
		panic("tox: embedded " + err.Error())
	}
	return t
}()

// TableRows returns a copy of Table 1's rows in file order, for a caller that
// builds its species vocabulary or references file from the same data.
func TableRows() []Row {
	return append([]Row(nil), defaultTable.rows...)
}
