package main

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// Issue 15, attacks 7 and 9, against the real binary started with operator
// maxima: a contributor asking for more than the operator grants is refused
// with the field and the limit named, and nothing is stored; an admin within
// the maxima registers; `scidex tool register` uploads no symlink. Before,
// memory_gb 64, cpu_count 64 and network allow were taken from anyone, and
// the registrar followed a symlink and uploaded its target.
func TestAttackResourceCapsAndBundleSymlinks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := "attack-caps-secret-0123456789abcdef-0123456789"
	env := []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + secret, "SCIDEX_TOOL_MAX_CPUS=2"}
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env,
		Args: []string{"--tool-workers", "0", "--tool-max-memory-gb", "2", "--tool-max-wall-time", "30m", "--tool-default-cpus", "1"}})
	admin := mint(t, secret, "ada", auth.PermAdmin)
	mallory := mint(t, secret, "mallory", auth.PermContributor)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	script := base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\necho '{}'\n"))
	type answer struct {
		RegisterTool struct {
			Typename string `json:"__typename"`
			Ref      string
			Message  string
			Problems []struct{ Path, Constraint, Message string }
		}
	}
	registerAs := func(token, name string, caps map[string]any) answer {
		t.Helper()
		m := map[string]any{"name": name, "version": "1.0.0", "runtime": "bwrap",
			"runtime_config": map[string]any{"command": []any{"run.sh"}},
			"input_schema":   map[string]any{"type": "object"}, "output_schema": map[string]any{"type": "object"},
			"resource_caps": caps}
		var a answer
		if err := gql(ctx, srv.URL, token, `mutation($m: JSON!, $f: [ToolFileInput!]) { registerTool(input: {manifest: $m, files: $f}) {
		  __typename ... on WriteSuccess { ref } ... on ValidationFailed { message problems { path constraint message } } ... on Problem { message } } }`,
			map[string]any{"m": m, "f": []any{map[string]any{"path": "run.sh", "contentBase64": script}}}, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	stored := func(name string) bool {
		t.Helper()
		var got struct{ Artifact *struct{ ID string } }
		if err := gql(ctx, srv.URL, admin, `query($r: Ref!) { artifact(ref: $r) { id } }`, map[string]any{"r": "tool:" + name}, &got); err != nil {
			t.Fatal(err)
		}
		return got.Artifact != nil
	}

	for _, tt := range []struct {
		name  string
		caps  map[string]any
		path  string
		wants []string
	}{
		{"attack.memory", map[string]any{"memory_gb": 64}, "content.resource_caps.memory_gb",
			[]string{"memory_gb 64 is above this server's maximum of 2 GB"}},
		{"attack.cpus", map[string]any{"cpu_count": 2}, "content.resource_caps.cpu_count",
			[]string{"cpu_count 2 is above this server's default of 1 CPUs", "only an admin registers a tool asking for more than the default"}},
		{"attack.network", map[string]any{"network": "allow"}, "content.resource_caps.network",
			[]string{`network "allow"`, "only an admin registers a tool with network allow"}},
	} {
		a := registerAs(mallory, tt.name, tt.caps).RegisterTool
		var said string
		for _, p := range a.Problems {
			if p.Path == tt.path {
				said = p.Message
			}
		}
		if a.Typename != "ValidationFailed" || said == "" {
			t.Errorf("%s: registration answered %+v, want a problem at %s", tt.name, a, tt.path)
		}
		for _, w := range tt.wants {
			if !strings.Contains(said, w) {
				t.Errorf("%s: the problem says %q, want it to say %q", tt.name, said, w)
			}
		}
		if stored(tt.name) {
			t.Errorf("%s: the refused tool was stored", tt.name)
		}
	}
	if a := registerAs(admin, "attack.granted", map[string]any{"memory_gb": 2, "cpu_count": 2, "wall_time_min": 30, "network": "allow"}).RegisterTool; a.Typename != "WriteSuccess" || !stored("attack.granted") {
		t.Errorf("an admin within the maxima: %+v", a)
	}
	if a := registerAs(admin, "attack.admin-over", map[string]any{"cpu_count": 3}).RegisterTool; a.Typename != "ValidationFailed" ||
		len(a.Problems) == 0 || !strings.Contains(a.Problems[0].Message, "cpu_count 3 is above this server's maximum of 2 CPUs") {
		t.Errorf("an admin over the maxima: %+v", a)
	}

	// A bundle whose directory holds a symlink to a file standing for
	// /etc/shadow, outside it; one with a symlinked directory; one with a
	// symlink pointing inside. Each is refused naming the file, and the
	// server holds no new tool.
	root := t.TempDir()
	shadow := filepath.Join(root, "shadow")
	if err := os.WriteFile(shadow, []byte("root:$6$the-registrars-own-secret:19000:0:99999:7:::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const sandboxed = `"runtime": "bwrap", "runtime_config": {"command": ["run.sh"]}`
	// A runtime that uploads the files its manifest lists, not the whole
	// directory: the registrar opened the listed path, following the symlink.
	const listed = `"runtime": "skill_call", "runtime_config": {"skill": "literature.evidence_review", "persona": "skeptic",
	  "instructions": "Read the notes."}, "files": [{"path": "notes/data.txt"}]`
	for _, b := range []struct {
		name, runtime, link, target, says string
	}{
		{"attack.symlink-out", sandboxed, "data.txt", shadow, "data.txt: is a symlink"},
		{"attack.symlink-dir", sandboxed, "etc", root, "etc: is a symlink"},
		{"attack.symlink-in", sandboxed, "alias.sh", "run.sh", "alias.sh: is a symlink"},
		{"attack.listed-symlink", listed, "notes/data.txt", shadow, "notes/data.txt: is a symlink"},
		{"attack.listed-symlink-dir", listed, "notes", root, "notes/data.txt: notes is a symlink"},
	} {
		dir := filepath.Join(root, b.name)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, b.link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if b.link == "notes" {
			// notes → root: notes/data.txt would be root/data.txt, the secret.
			if err := os.WriteFile(filepath.Join(root, "data.txt"), []byte("root:$6$the-registrars-own-secret\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		manifest := `{"name": "` + b.name + `", "version": "1.0.0", ` + b.runtime + `,
		  "input_schema": {"type": "object"}, "output_schema": {"type": "object"}}`
		if err := os.WriteFile(filepath.Join(dir, "tool.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\ncat data.txt\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(b.target, filepath.Join(dir, b.link)); err != nil {
			t.Fatal(err)
		}
		cmd := e2e.Command(t, "tool", "register", dir, "--url", srv.URL+"/graphql")
		cmd.Env = append(cmd.Env, "SCIDEX_TOKEN="+mallory)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s: scidex tool register succeeded:\n%s", b.name, out)
		}
		if !strings.Contains(string(out), filepath.Join(dir, b.link)) || !strings.Contains(string(out), b.says) {
			t.Errorf("%s: scidex tool register said %q, want it to name %s and say %q", b.name, out, filepath.Join(dir, b.link), b.says)
		}
		if strings.Contains(string(out), "the-registrars-own-secret") {
			t.Errorf("%s: the output shows the secret: %s", b.name, out)
		}
		if stored(b.name) {
			t.Errorf("%s: the server holds the tool", b.name)
		}
	}
	// The same bundle without the symlink registers: the refusal was the
	// symlink's.
	dir := filepath.Join(root, "attack.symlink-in")
	if err := os.Remove(filepath.Join(dir, "alias.sh")); err != nil {
		t.Fatal(err)
	}
	cmd := e2e.Command(t, "tool", "register", dir, "--url", srv.URL+"/graphql")
	cmd.Env = append(cmd.Env, "SCIDEX_TOKEN="+mallory)
	if out, err := cmd.CombinedOutput(); err != nil || !stored("attack.symlink-in") {
		t.Errorf("the bundle without its symlink: %v\n%s", err, out)
	}
}

// Resource caps that make no sense stop the real binary at start: exit
// status 2 and one line naming the flag, its variable, the value and what is
// wanted; nothing started.
func TestServeRefusesBadToolCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, tt := range []struct {
		env, args []string
		want      string
	}{
		{nil, []string{"--tool-max-memory-gb=0.25"},
			"--tool-max-memory-gb=0.25 (SCIDEX_TOOL_MAX_MEMORY_GB): want at least --tool-default-memory-gb (SCIDEX_TOOL_DEFAULT_MEMORY_GB), which is 0.5"},
		{[]string{"SCIDEX_TOOL_MAX_CPUS=-2"}, nil, `SCIDEX_TOOL_MAX_CPUS="-2" (--tool-max-cpus): want more than 0`},
		{nil, []string{"--tool-max-wall-time", "2h"},
			"--tool-rescue-after=1h0m0s (SCIDEX_TOOL_RESCUE_AFTER): want at least --tool-max-wall-time (SCIDEX_TOOL_MAX_WALL_TIME), which is 2h0m0s"},
	} {
		dataDir := e2e.DataDir(t)
		status, stderr := runServe(t, tt.env, append([]string{"--addr", "127.0.0.1:0", "--data-dir", dataDir}, tt.args...))
		if status != 2 || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v %v: exit %d\n%s\nwant status 2 and one line saying %q", tt.env, tt.args, status, stderr, tt.want)
		}
		if _, err := os.Stat(dataDir); err == nil {
			t.Errorf("%v %v: the data dir was created: something started", tt.env, tt.args)
		}
	}
}
