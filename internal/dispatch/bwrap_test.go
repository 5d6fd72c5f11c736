package dispatch_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

// bwrapEnv is a server with the bwrap runtime (a real bubblewrap sandbox).
func bwrapEnv(t *testing.T) *apitest.Env {
	t.Helper()
	dir, err := os.MkdirTemp("", "scidex-bwrap-api-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return env(t, nil, func(c *app.Config) {
		c.Runtimes = func(st *store.Store) (*runtimes.Registry, error) {
			box, err := bwrap.New(bwrap.Options{CacheDir: filepath.Join(dir, "cache")})
			if err != nil {
				return nil, err
			}
			return runtimes.NewRegistry(tools.Runtime(skills.Deps{Store: st}), box)
		}
	})
}

// files reads a bundle's files for registerTool.
func files(t *testing.T, dir string, names ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, map[string]any{"path": n, "contentBase64": base64.StdEncoding.EncodeToString(b)})
	}
	return out
}

func registerWithFiles(t *testing.T, e *apitest.Env, token string, m map[string]any, fs []map[string]any) registered {
	t.Helper()
	var out registered
	e.OK(t, token, registerQ, map[string]any{"m": m, "files": fs}, &out)
	return out
}

// The shipped text-stats bundle, registered by a contributor with its files
// and activated by a reviewer, runs in the sandbox through invokeTool; a
// sandboxed tool outliving its wall time is a FAILED call saying so; a bundle
// file altered after registration is refused at dispatch.
func TestBwrapTool(t *testing.T) {
	e := bwrapEnv(t)
	m := manifest(t, "text-stats")
	delete(m, "files")
	r := registerWithFiles(t, e, alice(t), m, files(t, "../../tools/text-stats", "text-stats.sh", "decode.awk"))
	if r.RegisterTool.Typename != "WriteSuccess" || r.RegisterTool.Artifact.LifecycleState != "draft" {
		t.Fatalf("register text-stats: %+v", r.RegisterTool)
	}
	setState(t, e, apitestToken(t, "rita", "reviewer"), r.RegisterTool.Ref, "active")
	// Alter the stored bytes of text-stats.sh behind the registry's back: the
	// runtime refuses the file at dispatch, as a setup failure.
	const fileOf = `(SELECT f->>'sha256' FROM artifacts, jsonb_array_elements(content->'files') f
		WHERE type = 'tool' AND id = 'text-stats' AND f->>'path' = 'text-stats.sh')`
	var original []byte
	if err := e.Pool.QueryRow(t.Context(), `SELECT content FROM tool_files WHERE sha256 = `+fileOf).Scan(&original); err != nil {
		t.Fatal(err)
	}
	evil := []byte("#!/bin/sh\ncat /etc/shadow\n")
	if _, err := e.Pool.Exec(t.Context(), `UPDATE tool_files SET content = $1, size = $2 WHERE sha256 = `+fileOf, evil, len(evil)); err != nil {
		t.Fatal(err)
	}
	ex := m["examples"].([]any)[0].(map[string]any)
	if a := invoke(t, e, bob(t), "text-stats", ex["args"]); a.Status != "FAILED" || a.Error == nil || a.Error.Code != runtimes.CodeBundleAltered || !a.Error.Setup {
		t.Fatalf("altered bundle: %+v", a)
	}
	if _, err := e.Pool.Exec(t.Context(), `UPDATE tool_files SET content = $1, size = $2 WHERE sha256 = `+fileOf, original, len(original)); err != nil {
		t.Fatal(err)
	}
	c := invoke(t, e, bob(t), "text-stats", ex["args"])
	want, _ := json.Marshal(ex["result"])
	if c.Status != "SUCCEEDED" || !sameJSON(c.Result, want) || len(c.OutputViolations) != 0 {
		t.Fatalf("text-stats: %+v, want result %s", c, want)
	}

	sleeper := map[string]any{"name": "test.sleeper", "version": "1.0.0", "runtime": "bwrap",
		"runtime_config": map[string]any{"command": []any{"sleep.sh"}},
		"input_schema":   map[string]any{"type": "object"}, "output_schema": map[string]any{"type": "object"},
		"resource_caps": map[string]any{"wall_time_min": 0.01}}
	script := base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\nsleep 60\necho '{}'\n"))
	r = registerWithFiles(t, e, alice(t), sleeper, []map[string]any{{"path": "sleep.sh", "contentBase64": script}})
	setState(t, e, admin(t), r.RegisterTool.Ref, "active")
	s := invoke(t, e, alice(t), "test.sleeper", map[string]any{})
	if s.Status != "FAILED" || s.Error == nil || s.Error.Code != runtimes.CodeWallTimeout || s.Error.Setup {
		t.Fatalf("sleeper: %+v", s)
	}

}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
