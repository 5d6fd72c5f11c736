package notebook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
	"github.com/scidex/substrate/runtimes/skillcall"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

// sandbox is the real bwrap runtime over a cache the sandbox uid can
// reach. Without bubblewrap, nbclient or ipykernel the test is skipped,
// unless SCIDEX_REQUIRE_NOTEBOOK=1 or SCIDEX_REQUIRE_BROWSER=1 (scripts/test,
// CI), where that is a failure (scripts/deps run installs them).
func sandbox(t *testing.T) *bwrap.Runtime {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("bwrap"); err != nil {
		missing = "bubblewrap"
	} else if exec.Command("/usr/bin/python3", "-IS", "-c", "import sys; sys.path.append('/usr/lib/python3/dist-packages'); import nbclient, ipykernel").Run() != nil {
		missing = "python3-nbclient or python3-ipykernel"
	}
	if missing != "" {
		if os.Getenv("SCIDEX_REQUIRE_NOTEBOOK") == "1" || os.Getenv("SCIDEX_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s is not installed (scripts/deps run)", missing)
		}
		t.Skipf("%s is not installed (scripts/deps run)", missing)
	}
	dir, err := os.MkdirTemp("", "notebook-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rt, err := bwrap.New(bwrap.Options{CacheDir: filepath.Join(dir, "cache"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// env is a real server whose in_process tools get the sandbox.
func env(t *testing.T) *apitest.Env {
	t.Helper()
	box := sandbox(t)
	return apitest.New(t, apitest.Opts{App: func(c *app.Config) {
		c.Runtimes = func(st *store.Store) (*runtimes.Registry, error) {
			return runtimes.NewRegistry(tools.Runtime(skills.Deps{Store: st, Sandbox: box}), skillcall.New(workpacket.Writer(st)))
		}
	}})
}

func code(src string) map[string]any {
	return map[string]any{"cell_type": "code", "metadata": map[string]any{}, "outputs": []any{}, "execution_count": nil, "source": src}
}

func markdown(src string) map[string]any {
	return map[string]any{"cell_type": "markdown", "metadata": map[string]any{}, "source": src}
}

// create makes a notebook of cells as token's actor and returns its ref.
func create(t *testing.T, e *apitest.Env, token, title string, cells ...map[string]any) string {
	t.Helper()
	var out struct {
		CreateArtifact struct {
			Typename string `json:"__typename"`
			Ref      string
			Problems []struct{ Path, Message string }
		}
	}
	e.OK(t, token, `mutation($c: JSON!, $t: String!) { createArtifact(input: {type: "notebook", title: $t, content: $c}) { __typename ... on WriteSuccess { ref } ... on ValidationFailed { problems { path message } } } }`,
		map[string]any{"t": title, "c": map[string]any{"nbformat": 4, "nbformat_minor": 5, "metadata": map[string]any{}, "cells": cells}}, &out)
	if out.CreateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("create notebook %q: %+v", title, out.CreateArtifact)
	}
	r, _, _ := strings.Cut(out.CreateArtifact.Ref, "@")
	return r
}

type invoked struct {
	Typename   string `json:"__typename"`
	ArtifactID string
	Status     string
	Problems   []struct{ Path, Constraint, Message string }
	Code       string
	Message    string
}

func invoke(t *testing.T, e *apitest.Env, token string, args map[string]any) invoked {
	t.Helper()
	var out struct{ InvokeTool invoked }
	e.OK(t, token, `mutation($a: JSON!) { invokeTool(input: {name: "notebook.execute", args: $a}) { __typename
	  ... on ToolCall { artifactId status } ... on ValidationFailed { problems { path constraint message } } ... on Problem { code message } } }`,
		map[string]any{"a": args}, &out)
	return out.InvokeTool
}

// Result is the verb's result as a caller reads it.
type Result struct {
	Notebook, Source, Status, Error string
	WrittenAs                       string `json:"written_as"`
	Cells                           []struct {
		Index          int
		CellType       string `json:"cell_type"`
		Status         string
		ExecutionCount *int `json:"execution_count"`
		Outputs        int
		OutputBytes    map[string]int `json:"output_bytes"`
		Truncated      bool
		Ename, Evalue  string
		Traceback      string
	}
	Warnings []string
}

type finished struct {
	Status string
	Result json.RawMessage
	Error  json.RawMessage
}

// wait follows the call's events until it has ended, and returns it.
func wait(t *testing.T, e *apitest.Env, token, id string) finished {
	t.Helper()
	sel, err := event.NewSelector([]string{"*"}, nil, "tool_call:"+id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sub := e.Hub.Subscribe(ctx, event.SubscribeOpts{Actor: auth.System(), Selector: sel})
	timeout := time.After(6 * time.Minute)
	for {
		var out struct{ ToolCall finished }
		e.OK(t, token, `query($id: ID!) { toolCall(id: $id) { status result error } }`, map[string]any{"id": id}, &out)
		switch out.ToolCall.Status {
		case "SUCCEEDED", "FAILED", "CANCELLED":
			return out.ToolCall
		}
		select {
		case <-sub.C:
		case <-sub.Done():
			t.Fatalf("tool_call:%s: the event subscription ended: %s", id, sub.Reason())
		case <-timeout:
			t.Fatalf("tool_call:%s did not end within 6 minutes", id)
		}
	}
}

// run invokes notebook.execute and waits for its result.
func run(t *testing.T, e *apitest.Env, token string, args map[string]any) (string, finished, *Result) {
	t.Helper()
	c := invoke(t, e, token, args)
	if c.Typename != "ToolCall" {
		t.Fatalf("invokeTool notebook.execute %v: %+v", args, c)
	}
	if c.Status != "QUEUED" && c.Status != "RUNNING" {
		t.Errorf("notebook.execute answered %s at once, want a queued call", c.Status)
	}
	f := wait(t, e, token, c.ArtifactID)
	if f.Status != "SUCCEEDED" {
		return c.ArtifactID, f, nil
	}
	var r Result
	if err := json.Unmarshal(f.Result, &r); err != nil {
		t.Fatalf("result %s: %v", f.Result, err)
	}
	return c.ArtifactID, f, &r
}

// cellsOf reads a notebook's stored cells.
func cellsOf(t *testing.T, e *apitest.Env, token, ref string) (int, []map[string]any, map[string]any) {
	t.Helper()
	var out struct {
		Artifact struct {
			Revision int
			Content  struct {
				Cells     []map[string]any
				Execution map[string]any
			}
		}
	}
	e.OK(t, token, `query($r: Ref!) { artifact(ref: $r) { revision content } }`, map[string]any{"r": ref}, &out)
	return out.Artifact.Revision, out.Artifact.Content.Cells, out.Artifact.Content.Execution
}

func outputText(cell map[string]any) string {
	var b strings.Builder
	outs, _ := cell["outputs"].([]any)
	for _, o := range outs {
		m, _ := o.(map[string]any)
		switch v := m["text"].(type) {
		case string:
			b.WriteString(v)
		case []any:
			for _, s := range v {
				b.WriteString(fmt.Sprint(s))
			}
		}
		if d, ok := m["data"].(map[string]any); ok {
			b.WriteString(fmt.Sprint(d["text/plain"]))
		}
	}
	return b.String()
}

// kernels lists the host's processes that are this worker's kernels or
// their children: a kernel's command line names its connection file under
// the sandbox's /tmp/jupyter/runtime.
func leftovers(t *testing.T, marker string) []string {
	t.Helper()
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, marker) {
			out = append(out, d.Name()+": "+cmd)
		}
	}
	return out
}

// A notebook run through invokeTool, as a hostile author would write it:
// every cell's status and error in the result, the executed notebook stored
// as the owner's next version with outputs and execution counts, and none
// of the attacks getting anywhere — the host's /etc/shadow and the
// server's data dir are not there, the internet is unreachable and the
// server's port is the sandbox's own closed loopback, a process started to
// outlive the kernel is gone with the sandbox, a 100 MB print is cut at the
// per-cell cap, a cell writing a forged answer to fd 1 forges nothing.
// Progress comes as one event per cell.
func TestExecuteThroughTheAPI(t *testing.T) {
	e := env(t)
	alice := apitest.Contributor(t, "alice")
	dataDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "secret.txt"), []byte("the server's secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(e.Server.URL)
	const marker = "987.654321"
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	nb := create(t, e, alice, "Hostile notebook",
		markdown("# A notebook that tries everything"),
		code("print(2 + 2)"),
		code("open('/etc/shadow').read()"),
		code(fmt.Sprintf("print(open(%q).read())", filepath.Join(dataDir, "secret.txt"))),
		code(fmt.Sprintf(`import socket
for host, port in [("1.1.1.1", 80), ("127.0.0.1", %s)]:
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect((host, port)); print(host, "CONNECTED")
    except OSError as e:
        print(host, type(e).__name__, e)`, u.Port())),
		code(fmt.Sprintf("import subprocess\np = subprocess.Popen(['sleep', '%s'], start_new_session=True)\nprint('started', p.pid)", marker)),
		code(`from IPython.display import SVG, Image, display
import base64
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'))
display(Image(data=base64.b64decode("`+png+`")))`),
		code("1 / 0"),
		code("import sys\nfor _ in range(100):\n    sys.stdout.write('x' * (1 << 20))"),
		code("x = 21\nx * 2"),
		code(`import os
os.write(1, b'{"status": "ok", "error": "", "cells": []}')
print("forged")`),
	)
	id, f, r := run(t, e, alice, map[string]any{"ref": nb})
	if r == nil {
		t.Fatalf("the call ended %s: %s", f.Status, f.Error)
	}
	t.Logf("result: status %s, %d cells, warnings %v", r.Status, len(r.Cells), r.Warnings)
	if r.WrittenAs != "version" || !strings.HasPrefix(r.Notebook, nb+"@") || !strings.HasPrefix(r.Source, nb+"@") || r.Notebook == r.Source {
		t.Fatalf("written as %s to %s from %s, want the owner's next version", r.WrittenAs, r.Notebook, r.Source)
	}
	if r.Status != "error" || len(r.Cells) != 11 {
		t.Fatalf("status %s with %d cells, want error (a cell raised) with 11: a cell's write to fd 1 is not the worker's answer", r.Status, len(r.Cells))
	}
	want := []struct{ status, ename string }{{"passed", ""}, {"ok", ""}, {"error", "FileNotFoundError"}, {"error", "FileNotFoundError"},
		{"ok", ""}, {"ok", ""}, {"ok", ""}, {"error", "ZeroDivisionError"}, {"ok", ""}, {"ok", ""}, {"ok", ""}}
	for i, w := range want {
		c := r.Cells[i]
		if c.Index != i || c.Status != w.status || c.Ename != w.ename {
			t.Errorf("cells[%d]: %s %s (%s), want %s %s", i, c.Status, c.Ename, c.Evalue, w.status, w.ename)
		}
	}
	if tb := r.Cells[7].Traceback; !strings.Contains(tb, "ZeroDivisionError") || strings.Contains(tb, "\x1b[") || len(tb) > 1600 {
		t.Errorf("cells[7]'s traceback is not the trimmed plain text: %q", tb)
	}
	t.Logf("cells[8]: %s %s %s", r.Cells[8].Status, r.Cells[8].Ename, r.Cells[8].Evalue)
	if c := r.Cells[8]; !c.Truncated || c.OutputBytes["text"] > 64<<10 || c.OutputBytes["text"] < 60<<10 {
		t.Errorf("the 100 MB print: truncated %v, %d bytes of text kept, want truncated at 64 KiB", c.Truncated, c.OutputBytes["text"])
	} else {
		t.Logf("the 100 MB print kept %d bytes", c.OutputBytes["text"])
	}
	if c := r.Cells[6]; c.OutputBytes["image/svg+xml"] == 0 || c.OutputBytes["image/png"] == 0 {
		t.Errorf("the display cell's sizes: %v", c.OutputBytes)
	}
	if c := r.Cells[9]; c.ExecutionCount == nil || *c.ExecutionCount != 9 {
		t.Errorf("the last cell's execution count: %v, want 9", c.ExecutionCount)
	}

	rev, cells, execution := cellsOf(t, e, alice, nb)
	if rev != 2 || len(cells) != 11 {
		t.Fatalf("the notebook is at revision %d with %d cells, want 2 with 11", rev, len(cells))
	}
	if execution["status"] != "error" || execution["source"] != r.Source {
		t.Errorf("the stored execution record: %v", execution)
	}
	if got := outputText(cells[1]); got != "4\n" {
		t.Errorf("cells[1]'s stored output %q, want 4", got)
	}
	if got := outputText(cells[9]); got != "42" || cells[9]["execution_count"] != float64(9) {
		t.Errorf("cells[9]: output %q, execution_count %v", got, cells[9]["execution_count"])
	}
	if _, ok := cells[0]["outputs"]; ok {
		t.Errorf("the markdown cell got outputs: %v", cells[0])
	}
	net := outputText(cells[4])
	if strings.Contains(net, "CONNECTED") || !strings.Contains(net, "1.1.1.1 OSError") || !strings.Contains(net, "127.0.0.1 ConnectionRefusedError") {
		t.Errorf("the network cell printed %q: want the internet unreachable and the server's port refused", net)
	}
	t.Logf("network: %q", net)
	if s := outputText(cells[3]); strings.Contains(s, "secret") {
		t.Errorf("the data dir was read: %q", s)
	}
	if left := leftovers(t, "sleep "+marker); len(left) > 0 {
		t.Errorf("a process the notebook started outlived the call: %v", left)
	}

	// Progress as events, one per cell's end (the dispatcher keeps the
	// last of those closer than 100 ms apart): the last is cell 10's.
	var poll struct {
		Poll struct {
			Events []struct {
				Type, Ref string
				Payload   struct {
					Fraction float64
					Message  string
					Data     struct {
						Cell   *int
						Status string
					}
				}
			}
		}
	}
	e.OK(t, alice, `{ poll(types: ["tool_call.progress"], from: START, limit: 1000) { events { type ref payload } } }`, nil, &poll)
	var msgs []string
	last := -1
	for _, ev := range poll.Poll.Events {
		if strings.HasPrefix(ev.Ref, "tool_call:"+id) {
			msgs = append(msgs, ev.Payload.Message)
			if ev.Payload.Data.Cell != nil {
				last = *ev.Payload.Data.Cell
			}
		}
	}
	t.Logf("%d progress events: %v", len(msgs), msgs)
	if len(msgs) < 3 || last != 10 || msgs[len(msgs)-1] != "cell 10: ok" {
		t.Errorf("progress events %v, want per-cell reports ending with cell 10's", msgs)
	}
}

// A cell that never ends is stopped at its wall time, reported as timed
// out, the cells after it are not run, and what ran before is stored; a
// fork bomb is held by the sandbox's process cap and dies with it.
func TestATimedOutCellIsReportedAndTheRestSkipped(t *testing.T) {
	e := env(t)
	alice := apitest.Contributor(t, "alice")
	nb := create(t, e, alice, "Never ends",
		code("print('before')"),
		code("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"),
		code("print('after')"))
	start := time.Now()
	_, f, r := run(t, e, alice, map[string]any{"ref": nb, "cell_timeout_s": 4})
	if r == nil {
		t.Fatalf("the call ended %s: %s", f.Status, f.Error)
	}
	t.Logf("took %s: %s", time.Since(start), r.Error)
	if r.Status != "timeout" || !strings.Contains(r.Error, "cell 1 timed out") {
		t.Fatalf("status %s (%q), want a timeout naming cell 1", r.Status, r.Error)
	}
	if r.Cells[0].Status != "ok" || r.Cells[1].Status != "timeout" || r.Cells[2].Status != "skipped" {
		t.Fatalf("cells %s %s %s, want ok timeout skipped", r.Cells[0].Status, r.Cells[1].Status, r.Cells[2].Status)
	}
	_, cells, _ := cellsOf(t, e, alice, nb)
	if outputText(cells[0]) != "before\n" || outputText(cells[2]) != "" || cells[2]["execution_count"] != nil {
		t.Errorf("stored: %q / %q (%v)", outputText(cells[0]), outputText(cells[2]), cells[2]["execution_count"])
	}
	if left := leftovers(t, "/tmp/jupyter/runtime/kernel"); len(left) > 0 {
		t.Errorf("kernel processes outlived the call: %d, e.g. %s", len(left), left[0])
	}
}

// Another's notebook is not the caller's to update: the executed notebook
// is a new notebook of the caller's, derived_from the version that ran, and
// the original is untouched.
func TestAnotherCallersNotebookIsExecutedAsADerivedOne(t *testing.T) {
	e := env(t)
	alice, bob := apitest.Contributor(t, "alice"), apitest.Contributor(t, "bob")
	nb := create(t, e, alice, "Alice's", code("print('hello from', 6 * 7)"))
	_, f, r := run(t, e, bob, map[string]any{"ref": nb})
	if r == nil {
		t.Fatalf("the call ended %s: %s", f.Status, f.Error)
	}
	if r.WrittenAs != "derived" || strings.HasPrefix(r.Notebook, nb+"@") || !strings.HasPrefix(r.Notebook, "notebook:") {
		t.Fatalf("written as %s to %s, want a derived notebook", r.WrittenAs, r.Notebook)
	}
	if rev, cells, _ := cellsOf(t, e, alice, nb); rev != 1 || outputText(cells[0]) != "" {
		t.Errorf("alice's notebook changed: revision %d, output %q", rev, outputText(cells[0]))
	}
	derived, _, _ := strings.Cut(r.Notebook, "@")
	_, cells, _ := cellsOf(t, e, bob, derived)
	if outputText(cells[0]) != "hello from 42\n" {
		t.Errorf("the derived notebook's output %q", outputText(cells[0]))
	}
	var links struct {
		Artifact struct {
			CreatedBy struct{ ID string }
			Links     struct {
				Edges []struct {
					Node struct {
						Predicate string
						To        struct{ Ref string }
					}
				}
			}
		}
	}
	e.OK(t, bob, `query($r: Ref!) { artifact(ref: $r) { createdBy { id } links(direction: OUT, predicates: ["derived_from"], first: 5) { edges { node { predicate to { ref } } } } } }`,
		map[string]any{"r": derived}, &links)
	if l := links.Artifact.Links.Edges; len(l) != 1 || l[0].Node.To.Ref != r.Source {
		t.Errorf("derived_from links %+v, want one to %s", l, r.Source)
	}
	if links.Artifact.CreatedBy.ID != "bob" && !strings.HasSuffix(links.Artifact.CreatedBy.ID, "bob") {
		t.Errorf("the derived notebook is %s's", links.Artifact.CreatedBy.ID)
	}
}

// What is refused, and that nothing runs for it: a ref that is not a
// notebook, or is another's private artifact, is refused by invokeTool
// naming args.ref before a call is recorded; a notebook that does not
// exist (or that the caller may not read) fails NOT_FOUND; a cell over the
// source cap (given as lines, which the schema's maxLength does not see) is
// refused naming the cell and the cap, without a progress event or a new
// version.
func TestRefusals(t *testing.T) {
	e := env(t)
	alice := apitest.Contributor(t, "alice")
	before := e.Count(t, "artifacts")
	for _, c := range []struct{ ref, path, says string }{
		{"hypothesis:h1", "args.ref", "not a notebook"},
		{"tool_call:someone-elses", "args.ref", "not a notebook"},
		{"notebook:x y", "args.ref", "ref"},
	} {
		got := invoke(t, e, alice, map[string]any{"ref": c.ref})
		if got.Typename != "ValidationFailed" || len(got.Problems) == 0 || !strings.Contains(got.Problems[0].Path, "ref") || !strings.Contains(got.Problems[0].Message, c.says) {
			t.Errorf("%s: %+v, want refused at %s saying %q", c.ref, got, c.path, c.says)
		}
	}
	if got := invoke(t, e, alice, map[string]any{"ref": "notebook:x", "cell_timeout_s": 121}); got.Typename != "ValidationFailed" || !strings.Contains(got.Problems[0].Path, "cell_timeout_s") {
		t.Errorf("a 121 s cell timeout: %+v", got)
	}
	if n := e.Count(t, "artifacts"); n != before {
		t.Errorf("the refusals wrote %d artifacts", n-before)
	}

	_, f, _ := run(t, e, alice, map[string]any{"ref": "notebook:does-not-exist"})
	if f.Status != "FAILED" || !strings.Contains(string(f.Error), "NOT_FOUND") && !strings.Contains(string(f.Error), "not found") {
		t.Errorf("a notebook that does not exist: %s %s", f.Status, f.Error)
	}

	lines := make([]string, 0, 1025)
	for range 1025 {
		lines = append(lines, strings.Repeat("#", 63)+"\n")
	}
	big := code("")
	big["source"] = lines
	nb := create(t, e, alice, "Too big", code("print(1)"), big)
	id, f, _ := run(t, e, alice, map[string]any{"ref": nb})
	if f.Status != "FAILED" || !strings.Contains(string(f.Error), "content.cells[1].source") || !strings.Contains(string(f.Error), "65536") {
		t.Fatalf("a 65600-byte cell: %s %s, want refused naming content.cells[1].source and the 65536-byte cap", f.Status, f.Error)
	}
	t.Logf("refused: %s", f.Error)
	if rev, _, _ := cellsOf(t, e, alice, nb); rev != 1 {
		t.Errorf("the refused notebook is at revision %d", rev)
	}
	var poll struct {
		Poll struct{ Events []struct{ Ref string } }
	}
	e.OK(t, alice, `{ poll(types: ["tool_call.progress"], from: START, limit: 100) { events { ref } } }`, nil, &poll)
	for _, ev := range poll.Poll.Events {
		if strings.HasPrefix(ev.Ref, "tool_call:"+id) {
			t.Errorf("the refused notebook ran: a progress event %s", ev.Ref)
		}
	}
}

// A cell over the sandbox's 1 GiB memory cap fails, reported: a
// MemoryError where the cap is an address-space limit, the kernel killed
// (DeadKernelError, the rest skipped) where it is a memory cgroup.
func TestACellOverTheMemoryCapFails(t *testing.T) {
	e := env(t)
	alice := apitest.Contributor(t, "alice")
	nb := create(t, e, alice, "Greedy", code("x = bytearray(3 << 30)\nx[-1] = 1"), code("print('after')"))
	_, f, r := run(t, e, alice, map[string]any{"ref": nb})
	if r == nil {
		t.Fatalf("the call ended %s: %s", f.Status, f.Error)
	}
	c := r.Cells[0]
	t.Logf("cell 0: %s %s %s; cell 1: %s; %s", c.Status, c.Ename, c.Evalue, r.Cells[1].Status, r.Error)
	switch {
	case c.Status == "error" && c.Ename == "MemoryError" && r.Cells[1].Status == "ok":
	case c.Status == "error" && c.Ename == "DeadKernelError" && r.Cells[1].Status == "skipped" && r.Status == "error":
	default:
		t.Errorf("a 3 GiB allocation: cell 0 %s %s, cell 1 %s, status %s", c.Status, c.Ename, r.Cells[1].Status, r.Status)
	}
}
