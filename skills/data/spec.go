package data

import (
	"encoding/json"
	"fmt"
	"io"
)

// LogicVersion is the version of the checks this package runs; the lead
// records it as the tool call's check_logic_version.
const LogicVersion = "data.check_conformance/1"

// Column types.
const (
	TypeString  = "string"  // any text
	TypeInteger = "integer" // [+-]?[0-9]+ within int64
	TypeNumber  = "number"  // a decimal: [+-]?digits[.digits][e[+-]digits]; no NaN, Inf, hex or separators
	TypeBoolean = "boolean" // true or false, in any letter case (R and spreadsheets write TRUE)
	TypeDate    = "date"    // an ISO 8601 calendar date YYYY-MM-DD that exists
)

// Types lists the column types a spec may use.
var Types = []string{TypeString, TypeInteger, TypeNumber, TypeBoolean, TypeDate}

// Limits and defaults of the options.
const (
	DefaultMaxViolations = 1000
	MaxMaxViolations     = 10000
	DefaultProgressEvery = 10000
)

// UnknownFraction is the fraction passed to progress when the size of a
// Source reader was not given, so how far along the check is is unknown.
const UnknownFraction = -1.0

// Input is a table and the spec it must conform to.
type Input struct {
	// CSV is the table's text: a header row, then data rows.
	CSV string `json:"csv"`
	// Source, for Go callers with a file, is read instead of CSV (leave CSV
	// empty); SourceSize, its size in bytes if known, lets progress report a
	// fraction.
	Source     io.Reader `json:"-"`
	SourceSize int64     `json:"-"`
	// Spec is the declared column specification.
	Spec Spec `json:"spec"`
	// DeclaredUnits are the units the dataset declares for its columns, by
	// column name (for example from the dataset artifact's metadata); each
	// must equal the spec's unit for the column exactly.
	DeclaredUnits map[string]string `json:"declared_units,omitempty"`
	// MaxViolations caps the violations listed (1..MaxMaxViolations, 0 means
	// DefaultMaxViolations); every violation is still counted.
	MaxViolations int `json:"max_violations,omitempty"`
	// ProgressEvery is how many data rows pass between progress reports (0
	// means DefaultProgressEvery).
	ProgressEvery int `json:"progress_every,omitempty"`
}

// Spec is the declared shape of a table.
type Spec struct {
	// Columns, matched to the header by exact name; order is not checked.
	Columns []Column `json:"columns"`
	// UniqueKeys are column sets whose values must not repeat across rows;
	// a key of one column is a unique column. A row whose key has an empty
	// cell is not checked for that key, as SQL's UNIQUE treats NULL: declare
	// the key's columns required to demand them.
	UniqueKeys [][]string `json:"unique_keys,omitempty"`
	// AllowExtraColumns accepts header columns the spec does not declare;
	// by default each is a column_unexpected violation.
	AllowExtraColumns bool `json:"allow_extra_columns,omitempty"`
}

// Column is one declared column.
type Column struct {
	Name string `json:"name"`
	// Type is one of Types.
	Type string `json:"type"`
	// Unit is the UCUM unit the dataset must declare for the column, or
	// empty for a column without a unit (which must then declare none).
	Unit string `json:"unit,omitempty"`
	// Required columns may have no empty cell.
	Required bool `json:"required,omitempty"`
	// Min and Max are inclusive bounds for integer, number and date columns.
	Min Bound `json:"min,omitempty"`
	Max Bound `json:"max,omitempty"`
	// Allowed, when not empty, is the closed list of values a cell may hold,
	// compared as exact text.
	Allowed []string `json:"allowed,omitempty"`
}

// Bound is an inclusive range limit written as text: "0", "1.5e3",
// "2026-01-01". In JSON it is a number for integer and number columns or a
// string for dates (either form is read); empty means unbounded.
type Bound string

// UnmarshalJSON reads a JSON number literal or string as the bound's text, so
// a number keeps its exact decimal spelling.
func (b *Bound) UnmarshalJSON(data []byte) error {
	switch {
	case string(data) == "null":
		*b = ""
		return nil
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*b = Bound(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(data, &n); err != nil {
		return fmt.Errorf("a bound is a number or a date string, not %s", data)
	}
	*b = Bound(n)
	return nil
}
