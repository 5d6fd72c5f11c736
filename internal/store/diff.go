package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
	"github.com/wI2L/jsondiff"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
)

// ArtifactDiff compares two versions: the RFC 6902 patch from one content to
// the other, and a line diff of every text field (title and the type's
// merge.text_fields).
type ArtifactDiff struct {
	From, To *Artifact
	Patch    json.RawMessage
	Text     []TextDiff
}

// TextDiff is the line diff of one text field.
type TextDiff struct {
	// Path is "title" or a JSON pointer into content ("/mechanism").
	Path    string
	Ops     []DiffOp
	Unified string
}

// DiffOp is one run of lines: kept, inserted or deleted.
type DiffOp struct {
	Op   string // EQUAL, INSERT, DELETE
	Text string
}

// Diff compares the versions two refs name (unpinned: the current version).
func (s *Store) Diff(ctx context.Context, fromS, toS string) (*ArtifactDiff, error) {
	var problems []problem.Detail
	from, err := ref.Parse(fromS)
	if err != nil {
		problems = append(problems, problem.Field("from", "ref", err.Error(), fromS))
	}
	to, err := ref.Parse(toS)
	if err != nil {
		problems = append(problems, problem.Field("to", "ref", err.Error(), toS))
	}
	if len(problems) > 0 {
		return nil, problem.Invalid(problems...)
	}
	a, err := s.Get(ctx, from)
	if errors.Is(err, ErrNotFound) {
		return nil, problem.NotFoundRef(from.String())
	}
	if err != nil {
		return nil, err
	}
	b, err := s.Get(ctx, to)
	if errors.Is(err, ErrNotFound) {
		return nil, problem.NotFoundRef(to.String())
	}
	if err != nil {
		return nil, err
	}
	patch, err := jsondiff.CompareJSON(a.Content, b.Content)
	if err != nil {
		return nil, fmt.Errorf("diff content: %w", err)
	}
	d := &ArtifactDiff{From: a, To: b, Patch: json.RawMessage("[]")}
	if len(patch) > 0 {
		if d.Patch, err = json.Marshal(patch); err != nil {
			return nil, fmt.Errorf("encode diff: %w", err)
		}
	}
	if a.Title != b.Title {
		d.Text = append(d.Text, textDiff("title", a.Title, b.Title))
	}
	t, err := s.registry.Get(ctx, b.Type)
	if err != nil {
		return nil, err
	}
	var ca, cb any
	_ = decodeJSON(a.Content, &ca)
	_ = decodeJSON(b.Content, &cb)
	for _, ptr := range t.Doc.Merge.TextFields {
		x, _ := pointerString(ca, ptr)
		y, _ := pointerString(cb, ptr)
		if x != y {
			d.Text = append(d.Text, textDiff(ptr, x, y))
		}
	}
	return d, nil
}

func textDiff(path, a, b string) TextDiff {
	dmp := diffmatchpatch.New()
	r1, r2, lines := dmp.DiffLinesToRunes(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(r1, r2, false), lines)
	td := TextDiff{Path: path}
	var u strings.Builder
	for _, df := range diffs {
		op, mark := "EQUAL", " "
		switch df.Type {
		case diffmatchpatch.DiffInsert:
			op, mark = "INSERT", "+"
		case diffmatchpatch.DiffDelete:
			op, mark = "DELETE", "-"
		}
		td.Ops = append(td.Ops, DiffOp{Op: op, Text: df.Text})
		for _, line := range splitKeep(df.Text) {
			u.WriteString(mark + line)
			if !strings.HasSuffix(line, "\n") {
				u.WriteString("\n\\ No newline at end of text\n")
			}
		}
	}
	td.Unified = u.String()
	return td
}

func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// pointerString reads the string at a JSON pointer (RFC 6901) in decoded JSON.
func pointerString(v any, ptr string) (string, bool) {
	if ptr == "" || ptr[0] != '/' {
		return "", false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		v = obj[tok]
	}
	s, ok := v.(string)
	return s, ok
}
