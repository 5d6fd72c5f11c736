package mcp_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/mcp"
	"github.com/scidex/substrate/internal/server"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
	"github.com/scidex/substrate/runtimes/skillcall"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

// notebookEnv is a server with /mcp whose in_process tools get the bwrap
// sandbox; skipped without bubblewrap, nbclient or ipykernel unless
// SCIDEX_REQUIRE_NOTEBOOK=1 or SCIDEX_REQUIRE_BROWSER=1 (scripts/test).
func notebookEnv(t *testing.T) *apitest.Env {
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
	dir, err := os.MkdirTemp("", "mcp-notebook-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	box, err := bwrap.New(bwrap.Options{CacheDir: filepath.Join(dir, "cache"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.MCP = mcp.Options{Mutations: mcp.MutationsAll} }, App: func(c *app.Config) {
		c.Runtimes = func(st *store.Store) (*runtimes.Registry, error) {
			return runtimes.NewRegistry(tools.Runtime(skills.Deps{Store: st, Sandbox: box}), skillcall.New(workpacket.Writer(st)))
		}
	}})
}

// tool.notebook.execute over MCP: listed, queued with how to follow it,
// followed with get_tool_call to the executed notebook's per-cell report;
// a ref that is not a notebook is an error result naming args.ref.
func TestNotebookExecuteOverMCP(t *testing.T) {
	e := notebookEnv(t)
	alice := apitest.Contributor(t, "alice")
	cs, changed := watchTools(t, e, alice)
	listed(t, cs, changed, func(m map[string]*sdk.Tool) bool { return m["tool.notebook.execute"] != nil })

	var created struct {
		CreateArtifact struct{ Ref string }
	}
	data(t, cs, "create_artifact", call(t, cs, "create_artifact", map[string]any{"input": map[string]any{"type": "notebook", "title": "Over MCP",
		"content": map[string]any{"nbformat": 4, "nbformat_minor": 5, "metadata": map[string]any{}, "cells": []any{
			map[string]any{"cell_type": "markdown", "source": "# Sum"},
			map[string]any{"cell_type": "code", "source": []any{"xs = [1, 2, 3]\n", "sum(xs)"}},
			map[string]any{"cell_type": "code", "source": "undefined_name"},
		}}}}), &created)
	nb, _, _ := strings.Cut(created.CreateArtifact.Ref, "@")

	bad := call(t, cs, "tool.notebook.execute", map[string]any{"ref": "hypothesis:h1"})
	if !bad.IsError || !strings.Contains(text(bad), "ref") || !strings.Contains(text(bad), "not a notebook") {
		t.Errorf("a hypothesis ref: isError %v, %s", bad.IsError, text(bad))
	}

	queued := call(t, cs, "tool.notebook.execute", map[string]any{"ref": nb})
	raw, _ := json.Marshal(queued.StructuredContent)
	var st struct {
		ToolCall struct{ ID, Status, Follow string } `json:"tool_call"`
	}
	if err := json.Unmarshal(raw, &st); err != nil || queued.IsError || (st.ToolCall.Status != "queued" && st.ToolCall.Status != "running") || !strings.Contains(st.ToolCall.Follow, "get_tool_call") {
		t.Fatalf("the call: %s (%s)", raw, text(queued))
	}
	ws := e.WS(t, alice)
	defer ws.Close()
	ws.Subscribe("calls", `subscription { events(types: ["tool_call.*"], from: START) { type } }`, nil)
	var got struct {
		ToolCall struct {
			Status string
			Result json.RawMessage
			Error  json.RawMessage
		}
	}
	for {
		data(t, cs, "get_tool_call", call(t, cs, "get_tool_call", map[string]any{"id": st.ToolCall.ID}), &got)
		if got.ToolCall.Status == "SUCCEEDED" {
			break
		}
		if got.ToolCall.Status == "FAILED" || got.ToolCall.Status == "CANCELLED" {
			t.Fatalf("the call ended %s: %s", got.ToolCall.Status, got.ToolCall.Error)
		}
		if m := ws.Next("calls"); m.Type != "next" {
			t.Fatalf("the event subscription answered %+v", m)
		}
	}
	var r struct {
		Cells []struct {
			Status, Ename string
			Outputs       int
		}
	}
	var res map[string]any
	_ = json.Unmarshal(got.ToolCall.Result, &res)
	_ = json.Unmarshal(got.ToolCall.Result, &r)
	if res["written_as"] != "version" || res["status"] != "error" || !strings.HasPrefix(res["notebook"].(string), nb+"@") {
		t.Fatalf("result %s", got.ToolCall.Result)
	}
	if len(r.Cells) != 3 || r.Cells[0].Status != "passed" || r.Cells[1].Status != "ok" || r.Cells[1].Outputs != 1 || r.Cells[2].Status != "error" || r.Cells[2].Ename != "NameError" {
		t.Errorf("cells %+v", r.Cells)
	}
	var art struct {
		Artifact struct {
			Ref     string
			Content struct{ Cells []map[string]any }
		}
	}
	data(t, cs, "get_artifact", call(t, cs, "get_artifact", map[string]any{"ref": nb}), &art)
	if art.Artifact.Ref != res["notebook"] {
		t.Fatalf("the notebook is at %s, not the executed version %s", art.Artifact.Ref, res["notebook"])
	}
	outs, _ := art.Artifact.Content.Cells[1]["outputs"].([]any)
	if len(outs) != 1 || !strings.Contains(mustJSONString(outs[0]), `"6"`) {
		t.Errorf("the stored output of sum(xs): %v", outs)
	}
}

func mustJSONString(v any) string { b, _ := json.Marshal(v); return string(b) }
