// Package merge computes the merge hint of a VersionConflict: a three-way merge
// of the version a writer based their change on, the current version and their
// own. Text fields merge line by line, append-only arrays by union, other fields
// when the changed paths do not overlap.
package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Rules name the JSON pointers (into content) that merge specially.
type Rules struct {
	TextFields       []string
	AppendOnlyArrays []string
}

// Result is a three-way merge. Conflicts holds the JSON pointers both sides
// changed differently; Merged is the merge, with theirs kept at each conflict.
type Result struct {
	Merged    json.RawMessage
	Conflicts []string
}

// Clean reports whether every change merged.
func (r *Result) Clean() bool { return len(r.Conflicts) == 0 }

// JSON merges three JSON documents.
func JSON(base, theirs, yours json.RawMessage, rules Rules) (*Result, error) {
	var b, t, y any
	for _, p := range []struct {
		raw  json.RawMessage
		dst  *any
		name string
	}{{base, &b, "base"}, {theirs, &t, "theirs"}, {yours, &y, "yours"}} {
		if err := decode(p.raw, p.dst); err != nil {
			return nil, fmt.Errorf("merge: %s: %w", p.name, err)
		}
	}
	m := &merger{text: set(rules.TextFields), union: set(rules.AppendOnlyArrays)}
	out := m.value("", b, t, y, true, true, true)
	merged, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("merge: encode: %w", err)
	}
	sort.Strings(m.conflicts)
	return &Result{Merged: merged, Conflicts: m.conflicts}, nil
}

type merger struct {
	text, union map[string]bool
	conflicts   []string
}

// absent marks a key missing from one side.
type absentT struct{}

var absent = absentT{}

func (m *merger) value(path string, b, t, y any, hasB, hasT, hasY bool) any {
	if !hasB {
		b = absent
	}
	if !hasT {
		t = absent
	}
	if !hasY {
		y = absent
	}
	switch {
	case Equal(t, y):
		return t
	case Equal(t, b):
		return y
	case Equal(y, b):
		return t
	}
	// Both sides changed this value, differently.
	if m.text[path] {
		bs, _ := b.(string)
		ts, tOK := t.(string)
		ys, yOK := y.(string)
		if tOK && yOK {
			if merged, ok := Text(bs, ts, ys); ok {
				return merged
			}
		}
	}
	if m.union[path] {
		ta, tOK := t.([]any)
		ya, yOK := y.([]any)
		if tOK && yOK {
			out := append([]any{}, ta...)
			for _, v := range ya {
				if !contains(out, v) {
					out = append(out, v)
				}
			}
			return out
		}
	}
	bo, bOK := b.(map[string]any)
	to, tOK := t.(map[string]any)
	yo, yOK := y.(map[string]any)
	if tOK && yOK {
		if !bOK {
			bo = map[string]any{}
		}
		out := map[string]any{}
		for _, k := range keys(bo, to, yo) {
			bv, inB := bo[k]
			tv, inT := to[k]
			yv, inY := yo[k]
			v := m.value(path+"/"+escape(k), bv, tv, yv, inB, inT, inY)
			if v != absent {
				out[k] = v
			}
		}
		return out
	}
	m.conflicts = append(m.conflicts, pointerOrRoot(path))
	return t
}

func pointerOrRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func keys(ms ...map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func contains(list []any, v any) bool {
	for _, x := range list {
		if Equal(x, v) {
			return true
		}
	}
	return false
}

// Equal compares decoded JSON values, numbers by value.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case absentT:
		_, ok := b.(absentT)
		return ok
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		return e1 == nil && e2 == nil && fx == fy
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	}
	return a == b
}

// decode reads exactly one JSON value (numbers kept exact); trailing data is an error.
func decode(raw json.RawMessage, dst *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func set(list []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range list {
		m[s] = true
	}
	return m
}

// escape encodes a key as a JSON pointer token (RFC 6901).
func escape(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}
