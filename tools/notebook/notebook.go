// Package notebook is notebook.execute, one of SPEC-001's action verbs (§7.4):
// run a notebook artifact (Jupyter nbformat 4) in the bwrap sandbox with
// Debian's nbclient and an ipykernel kernel, store the executed notebook
// (outputs and execution counts filled in) as the artifact's next version,
// or, when the caller may not update it, as a new notebook derived from it,
// and answer with every cell's status, error and output sizes.
//
// The caller's arguments name the notebook; the sandbox gets only its
// cells' types and sources, never the caller's JSON or the artifact's other
// fields. The kernel runs inside the sandbox (its ZMQ sockets on the
// sandbox's own loopback), as the sandbox uid, with no network, no view of
// the host's files but /usr, and the memory, process and wall caps below.
package notebook

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
)

// Name is the verb's tool name and in_process function.
const Name = "notebook.execute"

// Version is the verb's (its tool's and its worker's).
const Version = "1.0.0"

// Manifest is the tool's manifest.
//
//go:embed tool.json
var Manifest []byte

// The caps. A notebook over one is refused before anything runs, naming
// the limit and the path.
const (
	MaxCells            = 200
	MaxCellSourceBytes  = 64 << 10
	MaxSourceBytes      = 1 << 20
	MaxCellOutputBytes  = 64 << 10
	MaxTotalOutputBytes = 384 << 10
	TracebackBytes      = 1500
	DefaultCellTimeout  = 30 * time.Second
	MaxCellTimeout      = 120 * time.Second
	NotebookTimeout     = 300 * time.Second
	WorkerMemoryBytes   = 1 << 30
	// KernelMemoryBytes is the kernel's address space (RLIMIT_AS), under
	// the sandbox's memory so that a greedy cell fails alone.
	KernelMemoryBytes = 896 << 20
	// workerOverhead is the sandbox's wall time beyond the notebook's:
	// starting and stopping the kernel.
	workerOverhead = 60 * time.Second
	// answerBytes is the worker's answer's cap, under the sandbox's stdout
	// cap (runtimes.MaxOutputBytes).
	answerBytes = runtimes.MaxOutputBytes - 32<<10
	// contentSlack keeps the executed notebook under the store's content
	// cap with room for the execution record.
	contentSlack = 32 << 10
)

// Args are the verb's arguments.
type Args struct {
	Ref          string `json:"ref"`
	CellTimeoutS *int   `json:"cell_timeout_s,omitempty"`
}

// Check refuses bad arguments before the call is recorded.
func Check(raw json.RawMessage) []runtimes.Problem {
	_, ps := args(raw)
	return ps
}

func args(raw json.RawMessage) (Args, []runtimes.Problem) {
	var a Args
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, []runtimes.Problem{{Path: "", Constraint: "type", Message: "the arguments are {ref, cell_timeout_s}: " + err.Error()}}
	}
	var ps []runtimes.Problem
	r, err := ref.Parse(a.Ref)
	switch {
	case err != nil:
		ps = append(ps, runtimes.Problem{Path: "ref", Constraint: "format", Message: fmt.Sprintf("not a ref (notebook:<id>): %v", err)})
	case r.Type != "notebook":
		ps = append(ps, runtimes.Problem{Path: "ref", Constraint: "notebook_ref", Message: fmt.Sprintf("%s is a %s, not a notebook: notebook.execute runs notebook artifacts", a.Ref, r.Type)})
	}
	if t := a.CellTimeoutS; t != nil && (*t < 1 || time.Duration(*t)*time.Second > MaxCellTimeout) {
		ps = append(ps, runtimes.Problem{Path: "cell_timeout_s", Constraint: "maximum", Message: fmt.Sprintf("%d s: a cell's wall time is 1 to %d s", *t, int(MaxCellTimeout/time.Second))})
	}
	return a, ps
}

// refused is the call's failure for a notebook it will not run.
func refused(format string, a ...any) error {
	return runtimes.Errorf(runtimes.CodeRefused, false, format, a...)
}

// cell is one cell of a notebook's content, its other fields kept as they
// are.
type cell struct {
	fields   map[string]json.RawMessage
	cellType string
	source   string
}

// parse reads a notebook's cells, refusing one over the caps, naming each
// limit and the path.
func parse(content json.RawMessage) (map[string]json.RawMessage, []cell, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(content, &doc); err != nil {
		return nil, nil, refused("content: not a JSON object: %v", err)
	}
	var raws []map[string]json.RawMessage
	if err := json.Unmarshal(doc["cells"], &raws); err != nil || doc["cells"] == nil {
		return nil, nil, refused("content.cells: not an array of cells")
	}
	if len(raws) > MaxCells {
		return nil, nil, refused("content.cells: %d cells, over the cap of %d cells a notebook may have", len(raws), MaxCells)
	}
	cells := make([]cell, len(raws))
	total := 0
	for i, f := range raws {
		c := cell{fields: f}
		if err := json.Unmarshal(f["cell_type"], &c.cellType); err != nil || (c.cellType != "code" && c.cellType != "markdown" && c.cellType != "raw") {
			return nil, nil, refused("content.cells[%d].cell_type: %s: only code, markdown and raw cells are run or passed through", i, orNone(f["cell_type"]))
		}
		src, err := sourceText(f["source"])
		if err != nil {
			return nil, nil, refused("content.cells[%d].source: %v", i, err)
		}
		if len(src) > MaxCellSourceBytes {
			return nil, nil, refused("content.cells[%d].source: %d bytes, over the cap of %d bytes per cell", i, len(src), MaxCellSourceBytes)
		}
		total += len(src)
		if total > MaxSourceBytes {
			return nil, nil, refused("content.cells: the sources pass the cap of %d bytes a notebook's sources may total at cell %d", MaxSourceBytes, i)
		}
		c.source = src
		cells[i] = c
	}
	return doc, cells, nil
}

// sourceText is a cell's source: a string or a list of strings (nbformat
// allows both).
func sourceText(raw json.RawMessage) (string, error) {
	if raw == nil {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return "", errors.New("a string or an array of strings")
	}
	return strings.Join(lines, ""), nil
}

func orNone(raw json.RawMessage) string {
	if raw == nil {
		return "missing"
	}
	return string(raw)
}

// CellReport is one cell in the tool's result.
type CellReport struct {
	Index          int            `json:"index"`
	CellType       string         `json:"cell_type"`
	Status         string         `json:"status"`
	ExecutionCount *int           `json:"execution_count"`
	Outputs        int            `json:"outputs"`
	OutputBytes    map[string]int `json:"output_bytes"`
	Truncated      bool           `json:"truncated"`
	Seconds        float64        `json:"seconds,omitempty"`
	Ename          string         `json:"ename,omitempty"`
	Evalue         string         `json:"evalue,omitempty"`
	Traceback      string         `json:"traceback,omitempty"`
}

// New returns the verb's function: it reads and writes through st as the
// caller and runs the worker in box (nil: it refuses to run).
func New(st *store.Store, box Sandbox) func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
	return func(ctx context.Context, raw json.RawMessage, progress func(runtimes.Progress)) (json.RawMessage, error) {
		a, ps := args(raw)
		if len(ps) > 0 {
			return nil, refused("%s: %s", ps[0].Path, ps[0].Message)
		}
		if st == nil || box == nil {
			return nil, refused("this server runs no notebooks: it has no bwrap sandbox (scripts/deps run installs bubblewrap, python3-nbclient and python3-ipykernel)")
		}
		r, _ := ref.Parse(a.Ref)
		// Read as the caller: a notebook it may not read is not found, and
		// nothing runs.
		nb, err := st.Get(ctx, r)
		if errors.Is(err, store.ErrNotFound) {
			return nil, problem.NotFoundRef(a.Ref)
		}
		if err != nil {
			return nil, err
		}
		if nb.Type != "notebook" {
			return nil, refused("ref: %s is a %s, not a notebook", a.Ref, nb.Type)
		}
		doc, cells, err := parse(nb.Content)
		if err != nil {
			return nil, err
		}
		cellTimeout := DefaultCellTimeout
		if a.CellTimeoutS != nil {
			cellTimeout = time.Duration(*a.CellTimeoutS) * time.Second
		}
		room := store.MaxContentBytes - len(stripOutputs(doc, cells)) - contentSlack
		req := workerInput{CellTimeoutS: int(cellTimeout / time.Second), NotebookTimeoutS: int(NotebookTimeout / time.Second),
			CellOutputBytes: MaxCellOutputBytes, TotalOutputBytes: max(0, min(MaxTotalOutputBytes, room)), TracebackBytes: TracebackBytes, AnswerBytes: answerBytes, KernelMemory: KernelMemoryBytes}
		for _, c := range cells {
			req.Cells = append(req.Cells, workerCell{CellType: c.cellType, Source: c.source})
		}
		if progress == nil {
			progress = func(runtimes.Progress) {}
		}
		out, err := runWorker(ctx, box, "notebook-"+randomID(), req, progress)
		if err != nil {
			return nil, err
		}
		return record(ctx, st, nb, doc, cells, out, cellTimeout)
	}
}

// stripOutputs is the notebook's content without its code cells' outputs:
// what the executed notebook holds besides the new outputs.
func stripOutputs(doc map[string]json.RawMessage, cells []cell) []byte {
	raws := make([]map[string]json.RawMessage, len(cells))
	for i, c := range cells {
		f := map[string]json.RawMessage{}
		for k, v := range c.fields {
			f[k] = v
		}
		if c.cellType == "code" {
			f["outputs"] = json.RawMessage(`[]`)
		}
		raws[i] = f
	}
	d := map[string]json.RawMessage{}
	for k, v := range doc {
		d[k] = v
	}
	d["cells"], _ = json.Marshal(raws)
	b, _ := json.Marshal(d)
	return b
}

// record stores the executed notebook and builds the tool's result.
func record(ctx context.Context, st *store.Store, nb *store.Artifact, doc map[string]json.RawMessage, cells []cell, out *workerOutput, cellTimeout time.Duration) (json.RawMessage, error) {
	var warnings []string
	fit(doc, cells, out)
	reports := make([]CellReport, len(cells))
	counts := map[string]int{}
	for i, c := range cells {
		w := out.Cells[i]
		rep := CellReport{Index: i, CellType: c.cellType, Status: w.Status, ExecutionCount: w.ExecutionCount, Outputs: len(w.Outputs),
			OutputBytes: outputBytes(w.Outputs), Truncated: w.Truncated, Seconds: w.Seconds, Ename: w.Ename, Evalue: w.Evalue, Traceback: w.Traceback}
		counts[w.Status]++
		if w.Truncated {
			warnings = append(warnings, fmt.Sprintf("cells[%d]: outputs truncated at the cap (%d bytes per cell, %d per notebook)", i, MaxCellOutputBytes, MaxTotalOutputBytes))
		}
		reports[i] = rep
	}
	source := nb.Ref().String()
	executedAt := time.Now().UTC().Format(time.RFC3339)
	execution := map[string]any{"tool": Name, "tool_version": Version, "executed_at": executedAt, "status": out.Status, "error": out.Error,
		"source": source, "kernel": "python3 (ipykernel " + out.IpykernelVersion + ", Python " + out.PythonVersion + ")",
		"nbclient_version": out.NbclientVersion, "cell_timeout_s": int(cellTimeout / time.Second), "cells": counts}
	content, err := executedContent(doc, cells, out, execution)
	if err != nil {
		return nil, err
	}
	ref, mode, err := write(ctx, st, nb, content)
	if err != nil {
		return nil, err
	}
	if mode == "derived" {
		warnings = append(warnings, fmt.Sprintf("the executed notebook is a new notebook %s derived from %s: the caller may not update the original, or it changed while it ran", ref, source))
	}
	if warnings == nil {
		warnings = []string{}
	}
	return json.Marshal(map[string]any{
		"notebook": ref, "result_ref": ref, "written_as": mode, "source": source,
		"status": out.Status, "error": out.Error, "cells": reports, "counts": counts,
		"kernel": execution["kernel"], "nbclient_version": out.NbclientVersion, "warnings": warnings,
	})
}

// fit drops the largest cells' outputs until the executed notebook is
// within the store's content cap (JSON escapes can make outputs longer than
// the bytes the worker counted), marking each cell truncated.
func fit(doc map[string]json.RawMessage, cells []cell, out *workerOutput) {
	for {
		content, err := executedContent(doc, cells, out, map[string]any{})
		if err != nil || len(content) <= store.MaxContentBytes-contentSlack {
			return
		}
		big, size := -1, 0
		for i, c := range out.Cells {
			n := 0
			for _, o := range c.Outputs {
				n += len(o)
			}
			if n > size {
				big, size = i, n
			}
		}
		if big < 0 {
			return
		}
		out.Cells[big].Outputs, out.Cells[big].Truncated = nil, true
	}
}

// outputBytes sizes a cell's outputs by kind: text (streams, text/*,
// tracebacks), image/png, image/svg+xml, other.
func outputBytes(outs []json.RawMessage) map[string]int {
	m := map[string]int{"text": 0, "image/png": 0, "image/svg+xml": 0, "other": 0}
	for _, raw := range outs {
		var o struct {
			OutputType string                     `json:"output_type"`
			Text       json.RawMessage            `json:"text"`
			Traceback  []string                   `json:"traceback"`
			Data       map[string]json.RawMessage `json:"data"`
		}
		if json.Unmarshal(raw, &o) != nil {
			continue
		}
		if o.Text != nil {
			s, _ := sourceText(o.Text)
			m["text"] += len(s)
		}
		for _, t := range o.Traceback {
			m["text"] += len(t)
		}
		for mime, v := range o.Data {
			n := len(v)
			if s, err := sourceText(v); err == nil {
				n = len(s)
			}
			switch {
			case mime == "image/png" || mime == "image/svg+xml":
				m[mime] += n
			case strings.HasPrefix(mime, "text/"):
				m["text"] += n
			default:
				m["other"] += n
			}
		}
	}
	return m
}

// executedContent is the notebook with its code cells' outputs and
// execution counts as the worker ran them; markdown and raw cells, the
// cells' ids and metadata and the notebook's metadata as they were.
func executedContent(doc map[string]json.RawMessage, cells []cell, out *workerOutput, execution map[string]any) (json.RawMessage, error) {
	raws := make([]map[string]json.RawMessage, len(cells))
	for i, c := range cells {
		f := map[string]json.RawMessage{}
		for k, v := range c.fields {
			f[k] = v
		}
		if c.cellType == "code" {
			outs := out.Cells[i].Outputs
			if outs == nil {
				outs = []json.RawMessage{}
			}
			f["outputs"], _ = json.Marshal(outs)
			f["execution_count"], _ = json.Marshal(out.Cells[i].ExecutionCount)
		}
		raws[i] = f
	}
	d := map[string]json.RawMessage{}
	for k, v := range doc {
		d[k] = v
	}
	var err error
	if d["cells"], err = json.Marshal(raws); err != nil {
		return nil, err
	}
	if d["execution"], err = json.Marshal(execution); err != nil {
		return nil, err
	}
	d["produced_by"] = json.RawMessage(`{"tool": "` + Name + `"}`)
	return json.Marshal(d)
}

// write stores the executed notebook: the original's next version when
// the caller may update it and it has not changed since it was read; else a
// new notebook, derived_from the version that ran.
func write(ctx context.Context, st *store.Store, nb *store.Artifact, content json.RawMessage) (string, string, error) {
	res, err := st.UpdateArtifact(ctx, store.UpdateParams{Ref: nb.Ref().Unpinned().String(), BaseContentHash: nb.ContentHash, Content: content})
	if err == nil {
		return res.Ref, "version", nil
	}
	if p, ok := problem.As(err); !ok || (p.Code != problem.PermissionDenied && p.Code != problem.VersionConflict) {
		return "", "", fmt.Errorf("store the executed notebook: %w", err)
	}
	var created *store.WriteResult
	err = st.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		title := nb.Title
		if !strings.HasSuffix(title, " (executed)") {
			title += " (executed)"
		}
		if created, err = tx.Store().CreateArtifact(ctx, store.CreateParams{Type: "notebook", Title: title, Content: content}); err != nil {
			return fmt.Errorf("record the executed notebook: %w", err)
		}
		if _, err := tx.Store().AddLink(ctx, store.LinkParams{From: created.Ref, Predicate: "derived_from", To: nb.Ref().String()}); err != nil {
			return fmt.Errorf("link the executed notebook to %s: %w", nb.Ref(), err)
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	return created.Ref, "derived", nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
