package dispatch_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolspec"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
	"github.com/scidex/substrate/runtimes/skillcall"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

// capsEnv is a server with the sandbox and skill_call runtimes and the
// operator limits l.
func capsEnv(t *testing.T, l toolspec.CapLimits) *apitest.Env {
	t.Helper()
	dir, err := os.MkdirTemp("", "scidex-caps-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return apitest.New(t, apitest.Opts{App: func(c *app.Config) {
		c.Tools.Caps = l
		c.Runtimes = func(st *store.Store) (*runtimes.Registry, error) {
			box, err := bwrap.New(bwrap.Options{CacheDir: filepath.Join(dir, "cache")})
			if err != nil {
				return nil, err
			}
			return runtimes.NewRegistry(tools.Runtime(skills.Deps{Store: st}), skillcall.New(workpacket.Writer(st)), box)
		}
	}})
}

// shTool is a bwrap tool running script, with resource_caps caps (none when
// nil), and the file to upload with it.
func shTool(name, script string, caps map[string]any) (map[string]any, []map[string]any) {
	m := map[string]any{"name": name, "version": "1.0.0", "runtime": "bwrap",
		"runtime_config": map[string]any{"command": []any{"run.sh"}},
		"input_schema":   map[string]any{"type": "object"}, "output_schema": map[string]any{"type": "object"}}
	if caps != nil {
		m["resource_caps"] = caps
	}
	return m, []map[string]any{{"path": "run.sh", "contentBase64": base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\n" + script + "\n"))}}
}

// problemAt finds the problem at path.
func problemAt(ps []struct{ Path, Constraint, Message string }, path string) (string, string, bool) {
	for _, p := range ps {
		if p.Path == path {
			return p.Constraint, p.Message, true
		}
	}
	return "", "", false
}

// toolVersion is the stored version of tool:name, 0 when there is none.
func toolVersion(t *testing.T, e *apitest.Env, name string) int {
	t.Helper()
	var n int
	if err := e.Pool.QueryRow(t.Context(), `SELECT coalesce((SELECT version FROM artifacts WHERE type = 'tool' AND id = $1), 0)`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A manifest over an operator maximum is refused whoever registers it,
// naming the field and the maximum; one above a default, or with network, is
// refused unless an admin registers it, naming the default and that an admin
// grants it; nothing is stored. Before, memory_gb 64 and cpu_count 64 were
// taken from anyone.
func TestResourceCapsAtRegistration(t *testing.T) {
	e := capsEnv(t, toolspec.CapLimits{
		Default: toolspec.CapSet{WallTime: time.Minute, MemoryGB: 0.5, CPUs: 1},
		Max:     toolspec.CapSet{WallTime: 20 * time.Minute, MemoryGB: 2, CPUs: 2},
	})
	for _, tt := range []struct {
		name, token string
		caps        map[string]any
		path, want  string
		constraint  string
	}{
		{"contributor over the memory maximum", alice(t), map[string]any{"memory_gb": 64},
			"content.resource_caps.memory_gb", "memory_gb 64 is above this server's maximum of 2 GB", "resource_cap_max"},
		{"admin over the memory maximum", admin(t), map[string]any{"memory_gb": 64},
			"content.resource_caps.memory_gb", "memory_gb 64 is above this server's maximum of 2 GB", "resource_cap_max"},
		{"admin over the cpu maximum", admin(t), map[string]any{"cpu_count": 64},
			"content.resource_caps.cpu_count", "cpu_count 64 is above this server's maximum of 2 CPUs", "resource_cap_max"},
		{"admin over the wall time maximum", admin(t), map[string]any{"wall_time_min": 21},
			"content.resource_caps.wall_time_min", "wall_time_min 21 is above this server's maximum of 20 minutes", "resource_cap_max"},
		{"contributor above the cpu default", alice(t), map[string]any{"cpu_count": 2},
			"content.resource_caps.cpu_count", "cpu_count 2 is above this server's default of 1 CPUs: only an admin registers a tool asking for more than the default", "resource_cap_admin"},
		{"contributor above the memory default", alice(t), map[string]any{"memory_gb": 1},
			"content.resource_caps.memory_gb", "memory_gb 1 is above this server's default of 0.5 GB: only an admin", "resource_cap_admin"},
		{"contributor above the wall time default", alice(t), map[string]any{"wall_time_min": 5},
			"content.resource_caps.wall_time_min", "wall_time_min 5 is above this server's default of 1 minutes: only an admin", "resource_cap_admin"},
		{"contributor with network allow", alice(t), map[string]any{"network": "allow"},
			"content.resource_caps.network", `network "allow" reaches beyond the sandbox: only an admin registers a tool with network allow or specific`, "resource_cap_admin"},
		{"reviewer with network allow", apitestToken(t, "rita", "reviewer"), map[string]any{"network": "allow"},
			"content.resource_caps.network", `only an admin registers`, "resource_cap_admin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := "caps." + strings.ReplaceAll(tt.name, " ", "-")
			m, fs := shTool(name, `echo '{}'`, tt.caps)
			r := registerWithFiles(t, e, tt.token, m, fs).RegisterTool
			c, msg, ok := problemAt(r.Problems, tt.path)
			if r.Typename != "ValidationFailed" || !ok || c != tt.constraint || !strings.Contains(msg, tt.want) {
				t.Fatalf("registration answered %+v; want a %s problem at %s saying %q", r, tt.constraint, tt.path, tt.want)
			}
			if n := toolVersion(t, e, name); n != 0 {
				t.Errorf("a refused registration stored version %d", n)
			}
		})
	}

	// Within the defaults a contributor registers; an admin registers more,
	// within the maxima.
	m, fs := shTool("caps.small", `echo '{}'`, map[string]any{"memory_gb": 0.5, "cpu_count": 1, "wall_time_min": 1, "network": "deny"})
	if r := registerWithFiles(t, e, alice(t), m, fs).RegisterTool; r.Typename != "WriteSuccess" {
		t.Fatalf("a contributor within the defaults: %+v", r)
	}
	// (network: allow needs the egress shim, which this test's runtime has not
	// got; the e2e test gives an admin's tool the network.)
	big, bigFiles := shTool("caps.big", `echo '{}'`, map[string]any{"memory_gb": 2, "cpu_count": 2, "wall_time_min": 10})
	r := registerWithFiles(t, e, admin(t), big, bigFiles).RegisterTool
	if r.Typename != "WriteSuccess" || r.Artifact.LifecycleState != "draft" {
		t.Fatalf("an admin within the maxima: %+v", r)
	}
	// A reviewer's lifecycle move of the admin's tool keeps working: its
	// content is what the admin wrote.
	rita := apitestToken(t, "rita", "reviewer")
	setState(t, e, rita, r.Ref, "active")
	before := toolVersion(t, e, "caps.big")
	// Changing its content, though, is a new version a non-admin may not give
	// the admin's grant to.
	var cur struct{ Artifact struct{ ContentHash string } }
	e.OK(t, rita, `{ artifact(ref: "tool:caps.big") { contentHash } }`, nil, &cur)
	var up struct {
		UpdateArtifact struct {
			Typename string `json:"__typename"`
			Problems []struct{ Path, Constraint, Message string }
		}
	}
	e.OK(t, rita, `mutation($h: String!) { updateArtifact(input: {ref: "tool:caps.big", baseContentHash: $h,
	  patch: [{op: "add", path: "/summary", value: "now mine"}]}) { __typename ... on ValidationFailed { problems { path constraint message } } } }`,
		map[string]any{"h": cur.Artifact.ContentHash}, &up)
	for _, p := range []string{"content.resource_caps.cpu_count", "content.resource_caps.memory_gb", "content.resource_caps.wall_time_min"} {
		if c, _, ok := problemAt(up.UpdateArtifact.Problems, p); up.UpdateArtifact.Typename != "ValidationFailed" || !ok || c != "resource_cap_admin" {
			t.Errorf("a reviewer's content change of the admin's tool answered %+v; want resource_cap_admin at %s", up.UpdateArtifact, p)
		}
	}
	if n := toolVersion(t, e, "caps.big"); n != before {
		t.Errorf("the refused update stored a version: version %d, was %d", n, before)
	}

	// createArtifact is a write of a tool too.
	var cr struct {
		CreateArtifact struct {
			Typename string `json:"__typename"`
			Problems []struct{ Path, Constraint, Message string }
		}
	}
	sk := skillTool()
	sk["name"] = "caps.created"
	sk["resource_caps"] = map[string]any{"cpu_count": 3}
	e.OK(t, alice(t), `mutation($c: JSON!) { createArtifact(input: {type: "tool", id: "caps.created", title: "caps.created", content: $c}) {
	  __typename ... on ValidationFailed { problems { path constraint message } } } }`, map[string]any{"c": sk}, &cr)
	if c, msg, ok := problemAt(cr.CreateArtifact.Problems, "content.resource_caps.cpu_count"); !ok || c != "resource_cap_max" || !strings.Contains(msg, "maximum of 2 CPUs") {
		t.Errorf("createArtifact over the cpu maximum answered %+v", cr.CreateArtifact)
	}
	// A skill_call's wall time is an agent's deadline: only its maximum applies.
	sk = skillTool()
	sk["name"] = "caps.agent"
	sk["resource_caps"] = map[string]any{"wall_time_min": 10}
	if r := register(t, e, alice(t), sk).RegisterTool; r.Typename != "WriteSuccess" {
		t.Errorf("a contributor's skill_call tool with a 10 minute deadline: %+v", r)
	}
}

// A tool declaring no caps runs with the operator's defaults, not the
// sandbox's own (512 MiB and a minute): with a default of 64 MiB, 200 MB is
// a memory_limit naming the cap; with a default wall time of 2s, a tool
// sleeping longer is killed at it.
func TestDefaultCapsAtRun(t *testing.T) {
	max := toolspec.CapSet{WallTime: 20 * time.Minute, MemoryGB: 2, CPUs: 2}
	for _, tt := range []struct {
		name, script, code, says string
		defaults                 toolspec.CapSet
	}{
		// The memory case has a wall time that a loaded machine cannot reach
		// first: only the memory default is under test.
		{"caps.hog", `dd if=/dev/zero of=/dev/null bs=200M count=1 2>/dev/null; echo '{}'`, runtimes.CodeMemoryLimit, "64 MiB",
			toolspec.CapSet{WallTime: time.Minute, MemoryGB: 1.0 / 16, CPUs: 1}},
		{"caps.sleeper", `sleep 30; echo '{}'`, runtimes.CodeWallTimeout, "wall time of 2s",
			toolspec.CapSet{WallTime: 2 * time.Second, MemoryGB: 1.0 / 16, CPUs: 1}},
	} {
		e := capsEnv(t, toolspec.CapLimits{Default: tt.defaults, Max: max})
		m, fs := shTool(tt.name, tt.script, nil)
		r := registerWithFiles(t, e, alice(t), m, fs).RegisterTool
		if r.Typename != "WriteSuccess" {
			t.Fatalf("register %s: %+v", tt.name, r)
		}
		setState(t, e, admin(t), r.Ref, "active")
		c := invoke(t, e, alice(t), tt.name, map[string]any{})
		if c.Status != "FAILED" || c.Error == nil || c.Error.Code != tt.code || !strings.Contains(c.Error.Message, tt.says) {
			t.Errorf("%s: %+v (error %+v); want FAILED %s saying %q", tt.name, c, c.Error, tt.code, tt.says)
		}
	}
}
