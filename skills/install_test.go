package skills_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/skillcall"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// tool is the installed tool:<name>, as the server reads it.
func tool(t *testing.T, e *apitest.Env, name string) (version, state, hash string, inputSchema map[string]any) {
	t.Helper()
	ctx := request.With(context.Background(), request.System("test", time.Now()))
	a, err := e.Store.Get(ctx, ref.Ref{Type: "tool", ID: name})
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version     string         `json:"version"`
		InputSchema map[string]any `json:"input_schema"`
	}
	_ = json.Unmarshal(a.Content, &m)
	if a.LifecycleState != nil {
		state = *a.LifecycleState
	}
	return m.Version, state, a.ContentHash, m.InputSchema
}

// A server that installed the skills' tools with their former manifests
// (version 1.0.0, schemas without properties) installs the described ones
// at its next start, as new active versions, and changes nothing at the
// start after; every skill's example then runs through invokeTool with a
// result that keeps to its output schema (no output violation), the queued
// conformance check included.
func TestInstallUpgradesTheSkillToolsAndTheirResultsKeepToTheirSchemas(t *testing.T) {
	// chem.sar_table's worker runs in a real sandbox where the machine has
	// one (bwrap and Debian's RDKit).
	box := skills.TestSandbox(t)
	e := apitest.New(t, apitest.Opts{App: func(c *app.Config) {
		c.OnStart = nil
		c.Runtimes = func(st *store.Store) (*runtimes.Registry, error) {
			return runtimes.NewRegistry(tools.Runtime(skills.Deps{Store: st, Sandbox: box}), skillcall.New(workpacket.Writer(st)))
		}
	}})
	ctx := context.Background()
	cat := skills.Catalog(skills.Deps{Store: e.Store, Sandbox: box})
	old := make([]skills.Skill, len(cat))
	for i, s := range cat {
		var m map[string]any
		_ = json.Unmarshal(s.Tool, &m)
		m["version"] = "1.0.0"
		m["input_schema"] = map[string]any{"type": "object"}
		m["output_schema"] = map[string]any{"type": "object"}
		s.Tool, _ = json.Marshal(m)
		old[i] = s
	}
	if err := skills.Install(ctx, e.App.Registrar, e.Store, old); err != nil {
		t.Fatal(err)
	}
	if v, _, _, _ := tool(t, e, "pk.nca"); v != "1.0.0" {
		t.Fatalf("the former pk.nca installed as %s", v)
	}
	if err := skills.Install(ctx, e.App.Registrar, e.Store, cat); err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{}
	for _, s := range cat {
		var want struct{ Version string }
		_ = json.Unmarshal(s.Tool, &want)
		v, state, hash, in := tool(t, e, s.Name)
		if v != want.Version || state != "active" || in["properties"] == nil {
			t.Fatalf("%s after the upgrade: version %s (want %s), %s, input schema %v", s.Name, v, want.Version, state, in)
		}
		hashes[s.Name] = hash
	}
	if err := skills.Install(ctx, e.App.Registrar, e.Store, cat); err != nil {
		t.Fatal(err)
	}
	for _, s := range cat {
		if _, _, hash, _ := tool(t, e, s.Name); hash != hashes[s.Name] {
			t.Fatalf("%s changed at a start that changed nothing", s.Name)
		}
	}

	alice := apitest.Contributor(t, "alice")
	for _, s := range cat {
		var m struct {
			Examples []struct {
				Args map[string]any `json:"args"`
			} `json:"examples"`
		}
		_ = json.Unmarshal(s.Tool, &m)
		var out struct {
			InvokeTool struct {
				Typename   string `json:"__typename"`
				ArtifactID string
				Status     string
			}
		}
		e.OK(t, alice, `mutation($n: String!, $a: JSON!) { invokeTool(input: {name: $n, args: $a}) { __typename ... on ToolCall { artifactId status } } }`,
			map[string]any{"n": s.Name, "a": m.Examples[0].Args}, &out)
		if out.InvokeTool.Typename != "ToolCall" {
			t.Fatalf("%s: invokeTool answered %s", s.Name, out.InvokeTool.Typename)
		}
		var call struct {
			ToolCall struct {
				Status           string
				Error            json.RawMessage
				OutputViolations json.RawMessage
			}
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			e.OK(t, alice, `query($id: ID!) { toolCall(id: $id) { status error outputViolations } }`, map[string]any{"id": out.InvokeTool.ArtifactID}, &call)
			if s := call.ToolCall.Status; s == "SUCCEEDED" || s == "FAILED" || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if call.ToolCall.Status != "SUCCEEDED" {
			t.Fatalf("%s's example ended %s: %s", s.Name, call.ToolCall.Status, call.ToolCall.Error)
		}
		if v := string(call.ToolCall.OutputViolations); v != "" && v != "null" && v != "[]" {
			t.Errorf("%s's result breaks its output schema: %s", s.Name, v)
		}
	}
}
