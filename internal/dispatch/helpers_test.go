package dispatch_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/inprocess"
	"github.com/scidex/substrate/runtimes/skillcall"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

// env is a server whose in_process runtime has the build's tools plus the
// test functions given, and the skill_call runtime.
func env(t *testing.T, extra map[string]inprocess.Func, adjust ...func(*app.Config)) *apitest.Env {
	t.Helper()
	return apitest.New(t, apitest.Opts{App: func(c *app.Config) {
		c.Runtimes = func(st *store.Store) (*runtimes.Registry, error) {
			funcs := tools.InProcess(skills.Deps{Store: st})
			for k, v := range extra {
				funcs[k] = v
			}
			return runtimes.NewRegistry(inprocess.New(funcs).WithChecks(skills.Checks(skills.Deps{Store: st})), skillcall.New(workpacket.Writer(st)))
		}
		for _, a := range adjust {
			a(c)
		}
	}})
}

var (
	admin = func(t *testing.T) string { return apitest.Token(t, "ada", auth.PermAdmin) }
	alice = func(t *testing.T) string { return apitest.Contributor(t, "alice") }
	bob   = func(t *testing.T) string { return apitest.Contributor(t, "bob") }
)

const registerQ = `mutation($m: JSON!, $files: [ToolFileInput!]) { registerTool(input: {manifest: $m, files: $files}) {
  __typename
  ... on WriteSuccess { ref contentHash warnings artifact { ... on Tool { name version lifecycleState } } }
  ... on ValidationFailed { problems { path constraint message } }
  ... on PermissionDenied { message } } }`

type registered struct {
	RegisterTool struct {
		Typename    string `json:"__typename"`
		Ref         string
		ContentHash string
		Warnings    []string
		Artifact    struct{ Name, Version, LifecycleState string }
		Problems    []struct{ Path, Constraint, Message string }
		Message     string
	}
}

func register(t *testing.T, e *apitest.Env, token string, manifest any) registered {
	t.Helper()
	var out registered
	e.OK(t, token, registerQ, map[string]any{"m": manifest}, &out)
	return out
}

// activate registers manifest as admin and makes it active.
func activate(t *testing.T, e *apitest.Env, manifest any) {
	t.Helper()
	r := register(t, e, admin(t), manifest)
	if r.RegisterTool.Typename != "WriteSuccess" {
		t.Fatalf("register: %+v", r.RegisterTool)
	}
	setState(t, e, admin(t), r.RegisterTool.Ref, "active")
}

func setState(t *testing.T, e *apitest.Env, token, ref, state string) {
	t.Helper()
	var out struct {
		UpdateArtifact struct {
			Typename string `json:"__typename"`
			Message  string
		}
	}
	r, _, _ := strings.Cut(ref, "@")
	var cur struct{ Artifact struct{ ContentHash string } }
	e.OK(t, token, `query($r: Ref!) { artifact(ref: $r) { contentHash } }`, map[string]any{"r": r}, &cur)
	e.OK(t, token, `mutation($r: Ref!, $h: String!, $s: String) { updateArtifact(input: {ref: $r, baseContentHash: $h, lifecycleState: $s}) {
	  __typename ... on Problem { message } } }`, map[string]any{"r": r, "h": cur.Artifact.ContentHash, "s": state}, &out)
	if out.UpdateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("set %s %s: %+v", r, state, out.UpdateArtifact)
	}
}

// manifest reads a shipped tool's tool.json.
func manifest(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../../tools/" + dir + "/tool.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// testTool is a manifest for an in_process test function.
func testTool(name, fn string, mutate ...func(map[string]any)) map[string]any {
	m := map[string]any{
		"name": name, "version": "1.0.0", "summary": "a test tool", "runtime": "in_process",
		"runtime_config": map[string]any{"function": fn},
		"input_schema":   map[string]any{"type": "object", "properties": map[string]any{"value": map[string]any{}}},
		"output_schema":  map[string]any{"type": "object", "required": []any{"value"}, "properties": map[string]any{"value": map[string]any{"type": "number"}}},
	}
	for _, f := range mutate {
		f(m)
	}
	return m
}

const invokeQ = `mutation($n: String!, $a: JSON!, $k: String, $async: Boolean, $v: String) {
  invokeTool(input: {name: $n, args: $a, idempotencyKey: $k, async: $async, version: $v}) {
    __typename
    ... on ToolCall { artifactId status result resultRef error durationMs costUsd outputViolations toolVersion inputsHash cached }
    ... on ValidationFailed { problems { path constraint message } }
    ... on Problem { code message retryAfterMs } } }`

type call struct {
	Typename   string `json:"__typename"`
	ArtifactID string
	Status     string
	Result     json.RawMessage
	ResultRef  *string
	Error      *struct {
		Code, Message string
		Setup         bool
	}
	DurationMs       *int
	CostUsd          *float64
	OutputViolations []struct{ Path, Constraint, Message string }
	ToolVersion      string
	InputsHash       string
	Cached           *bool
	Problems         []struct{ Path, Constraint, Message string }
	Code             string
	Message          string
	RetryAfterMs     *int
}

func invoke(t testing.TB, e *apitest.Env, token, name string, args any, vars ...map[string]any) call {
	t.Helper()
	v := map[string]any{"n": name, "a": args}
	for _, x := range vars {
		for k, val := range x {
			v[k] = val
		}
	}
	var out struct{ InvokeTool call }
	e.OK(t, token, invokeQ, v, &out)
	return out.InvokeTool
}

func count(t *testing.T, e *apitest.Env, where string) int {
	t.Helper()
	var n int
	if err := e.Pool.QueryRow(context.Background(), "SELECT count(*) FROM artifacts WHERE "+where).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func apitestToken(t *testing.T, sub, perm string) string {
	return apitest.Token(t, sub, auth.Permission(perm))
}
