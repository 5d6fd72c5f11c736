package tox

import (
	"fmt"
	"strings"

	"github.com/scidex/substrate/skills/units"
)

// tableCSV is FDA CDER (July 2005), Table 1, as gathered from secondary
// sources (each row names its sources and carries its status): the build's
// one copy, embedded and parsed by skills/units.
var tableCSV = units.FDA2005Table1CSV()

// TableSHA256 is the sha256 of the table (units.FDA2005Table1SHA256, which a
// test checks against the embedded bytes).
const TableSHA256 = units.FDA2005Table1SHA256

// Status values carried unchanged from the data: a row, or a reference, is
// verified or still to be verified.
const (
	StatusVerified = "verified"
	StatusToVerify = "to_verify"
)

// HumanAdult is the table row of the adult human (60 kg, km 37): the
// denominator of the km ratio and the default human weight.
const HumanAdult = units.HumanAdult

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

// parseTable reads Table 1 from CSV through units.ParseFDA2005Table1 (one
// parser, strict: see there) and indexes it by species.
func parseTable(data []byte) (*table, error) {
	infos, err := units.ParseFDA2005Table1(data)
	if err != nil {
		return nil, fmt.Errorf("read table: %w", err)
	}
	t := &table{index: map[string]int{}}
	for _, s := range infos {
		t.index[s.Name] = len(t.rows)
		t.rows = append(t.rows, Row{Species: s.Name, RefBodyWeightKg: s.RefBodyWeight.Value, BSAM2: s.BSA.Value,
			Km: s.Km, DivideBy: s.DivideBy, Status: string(s.Status), Sources: s.Sources})
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
