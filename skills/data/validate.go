package data

import (
	"fmt"
	"slices"
	"strings"

	"github.com/scidex/substrate/skills/problem"
)

// column is a spec column made ready to check cells.
type column struct {
	Column
	min, max       value
	hasMin, hasMax bool
	allowed        map[string]bool
}

// plan is a validated Input.
type plan struct {
	cols          []column
	byName        map[string]int // spec index by name
	keys          [][]int        // spec indexes per unique key
	maxViolations int
	progressEvery int
}

// validate checks the spec and options, and compiles them.
func validate(in Input) (*plan, error) {
	var ps problem.List
	p := &plan{byName: map[string]int{}, maxViolations: in.MaxViolations, progressEvery: in.ProgressEvery}
	if in.Source != nil && in.CSV != "" {
		ps.Add("csv", CodeSourceConflict, nil, "give the table as csv text or as a reader, not both")
	}
	switch {
	case p.maxViolations == 0:
		p.maxViolations = DefaultMaxViolations
	case p.maxViolations < 1 || p.maxViolations > MaxMaxViolations:
		ps.Add("max_violations", CodeOutOfRange, nil, "max_violations %d is outside 1..%d", in.MaxViolations, MaxMaxViolations)
	}
	switch {
	case p.progressEvery == 0:
		p.progressEvery = DefaultProgressEvery
	case p.progressEvery < 0:
		ps.Add("progress_every", CodeOutOfRange, nil, "progress_every %d must be a positive number of rows", in.ProgressEvery)
	}
	if len(in.Spec.Columns) == 0 {
		ps.Add("spec.columns", CodeRequired, nil, "a spec declares at least one column")
	}
	for i, c := range in.Spec.Columns {
		path := fmt.Sprintf("spec.columns[%d]", i)
		col := column{Column: c}
		if c.Name == "" {
			ps.Add(path+".name", CodeRequired, nil, "a column needs a name")
		} else if j, dup := p.byName[c.Name]; dup {
			ps.Add(path+".name", CodeDuplicateColumn, nil, "column %q is declared twice (also spec.columns[%d])", c.Name, j)
		} else {
			p.byName[c.Name] = i
		}
		if !slices.Contains(Types, c.Type) {
			ps.Add(path+".type", CodeUnknownType, nil, "type %q is not one of %s", c.Type, strings.Join(Types, ", "))
			p.cols = append(p.cols, col)
			continue
		}
		bound := func(field string, b Bound) (value, bool) {
			if b == "" {
				return value{}, false
			}
			if c.Type == TypeString || c.Type == TypeBoolean {
				ps.Add(path+"."+field, CodeBoundNotApplicable, nil, "a %s column has no %s (got %q)", c.Type, field, b)
				return value{}, false
			}
			v, err := parseValue(c.Type, string(b))
			if err != nil {
				ps.Add(path+"."+field, CodeInvalidBound, nil, "%s of a %s column: %v", field, c.Type, err)
				return value{}, false
			}
			return v, true
		}
		col.min, col.hasMin = bound("min", c.Min)
		col.max, col.hasMax = bound("max", c.Max)
		if col.hasMin && col.hasMax && compare(c.Type, col.min, col.max) > 0 {
			ps.Add(path+".min", CodeMinGreaterThanMax, nil, "min %s is greater than max %s", c.Min, c.Max)
		}
		if len(c.Allowed) > 0 {
			col.allowed = map[string]bool{}
			for k, a := range c.Allowed {
				ap := fmt.Sprintf("%s.allowed[%d]", path, k)
				if _, err := parseValue(c.Type, a); err != nil {
					ps.Add(ap, CodeInvalidAllowed, nil, "allowed value of a %s column: %v", c.Type, err)
				} else if col.allowed[a] {
					ps.Add(ap, CodeInvalidAllowed, nil, "allowed value %q is listed twice", a)
				}
				col.allowed[a] = true
			}
		}
		p.cols = append(p.cols, col)
	}
	for i, key := range in.Spec.UniqueKeys {
		path := fmt.Sprintf("spec.unique_keys[%d]", i)
		if len(key) == 0 {
			ps.Add(path, CodeEmptyKey, nil, "a unique key names at least one column")
			continue
		}
		idx := make([]int, 0, len(key))
		for k, name := range key {
			j, ok := p.byName[name]
			switch {
			case !ok:
				ps.Add(fmt.Sprintf("%s[%d]", path, k), CodeUnknownKeyColumn, nil, "key column %q is not a declared column", name)
			case slices.Contains(idx, j):
				ps.Add(fmt.Sprintf("%s[%d]", path, k), CodeDuplicateKeyColumn, nil, "column %q is in the key twice", name)
			default:
				idx = append(idx, j)
			}
		}
		p.keys = append(p.keys, idx)
	}
	if err := ps.Err(procedure); err != nil {
		return nil, err
	}
	return p, nil
}
