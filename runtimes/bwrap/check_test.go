package bwrap_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
)

// A manifest that tries to shape the sandbox itself (raw bwrap flags, host
// paths, .. escapes) or asks for what this server cannot give is refused by
// Check, each problem at its manifest path, and refused again by Run.
func TestCheckRefuses(t *testing.T) {
	rt := newRuntime(t)
	files := map[string]string{"run.sh": "#!/bin/sh\necho '{}'\n", "data/ref.txt": "ACGT"}
	cases := []struct {
		name, config string
		edit         func(*runtimes.Tool)
		path, msg    string
	}{
		{"raw flags field", `{"command":["run.sh"],"bwrap_args":["--bind","/","/"]}`, nil, "runtime_config", `unknown field "bwrap_args"`},
		{"raw flag in command", `{"command":["run.sh","--bind","/var/lib/postgresql","/data"]}`, nil, "runtime_config.command[1]", "raw bwrap flag"},
		{"share-net flag", `{"command":["run.sh","--share-net"]}`, nil, "runtime_config.command[1]", "raw bwrap flag"},
		{"absolute program", `{"command":["/bin/sh","-c","cat /etc/shadow"]}`, nil, "runtime_config.command[0]", "absolute path"},
		{"program escapes", `{"command":["../../usr/bin/env"]}`, nil, "runtime_config.command[0]", "escapes the bundle"},
		{"program not in bundle", `{"command":["other.sh"]}`, nil, "runtime_config.command[0]", "not one of the bundle's files"},
		{"host path argument", `{"command":["run.sh","/var/run/postgresql"]}`, nil, "runtime_config.command[1]", "host path"},
		{"dotdot argument", `{"command":["run.sh","/bundle/../etc/shadow"]}`, nil, "runtime_config.command[1]", ".. path element"},
		{"absolute data path", `{"command":["run.sh"],"data_paths":["/var/lib/postgresql"]}`, nil, "runtime_config.data_paths[0]", "absolute path"},
		{"data path escapes", `{"command":["run.sh"],"data_paths":["data/../.."]}`, nil, "runtime_config.data_paths[0]", "escapes the bundle"},
		{"data path not a dir", `{"command":["run.sh"],"data_paths":["nothing"]}`, nil, "runtime_config.data_paths[0]", "not a directory of the bundle"},
		{"not an object", `["run.sh"]`, nil, "runtime_config", "nothing else"},
		{"no command", `{}`, nil, "runtime_config.command", "names its program"},
		{"allowed host without port", `{"command":["run.sh"]}`, func(t *runtimes.Tool) { t.Caps.Network = "specific"; t.Caps.AllowedHosts = []string{"example.org"} },
			"resource_caps.allowed_hosts[0]", "want host:port"},
		{"specific without hosts", `{"command":["run.sh"]}`, func(t *runtimes.Tool) { t.Caps.Network = "specific" },
			"resource_caps.allowed_hosts", "names the host:port pairs"},
		{"vram without gpu", `{"command":["run.sh"]}`, func(t *runtimes.Tool) { t.Caps.VRAMGB = 16 }, "resource_caps.vram_gb", "has no GPU"},
		{"docker backend", `{"command":["run.sh"]}`, func(t *runtimes.Tool) { t.SandboxBackend = "docker"; t.SandboxImage = "alpine" },
			"sandbox_backend", "this server has no docker sandbox backend configured"},
		{"k8s backend", `{"command":["run.sh"]}`, func(t *runtimes.Tool) { t.SandboxBackend = "k8s" }, "sandbox_backend", "no k8s sandbox backend"},
		{"unknown backend", `{"command":["run.sh"]}`, func(t *runtimes.Tool) { t.SandboxBackend = "lxc" }, "sandbox_backend", `"lxc": want one of`},
		{"bad file hash", `{"command":["run.sh"]}`, func(t *runtimes.Tool) { t.Files[1].SHA256 = "abc" }, "files[1].sha256", "64 lowercase hex"},
		{"absolute file path", `{"command":["run.sh"]}`, func(t *runtimes.Tool) { t.Files[0].Path = "/etc/passwd" }, "files[0].path", "absolute path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool, _ := bundleTool("refused", files, c.config)
			if c.edit != nil {
				c.edit(tool)
			}
			ps := rt.Check(tool)
			found := false
			for _, p := range ps {
				if p.Path == c.path && strings.Contains(p.Message, c.msg) {
					found = true
				}
			}
			if !found {
				t.Fatalf("Check = %+v, want a problem at %s saying %q", ps, c.path, c.msg)
			}
			_, err := rt.Run(context.Background(), &runtimes.Call{Tool: tool, Args: json.RawMessage(`{}`)})
			if e := wantError(t, err, runtimes.CodeRefused); !strings.Contains(e.Message, c.msg) {
				t.Fatalf("Run refused with %q, want it to say %q", e.Message, c.msg)
			}
		})
	}
	// The accepted shape, data paths included, for contrast.
	ok, _ := bundleTool("ok", files, `{"command":["run.sh","--verbose","/data/data/ref.txt"],"data_paths":["data"]}`)
	ok.Caps.Network = "allow"
	if ps := rt.Check(ok); len(ps) > 0 {
		t.Fatalf("Check refused a valid tool: %+v", ps)
	}
}

// A data path is readable at /data/<path>, and the bundle at /bundle.
func TestDataPaths(t *testing.T) {
	rt := newRuntime(t)
	tool, _ := bundleTool("data", map[string]string{
		"run.sh":         "#!/bin/sh\nprintf '{\"ref\": \"%s\", \"same\": \"%s\"}' \"$(cat /data/ref/genome.txt)\" \"$(cat /bundle/ref/genome.txt)\"\n",
		"ref/genome.txt": "ACGT",
	}, `{"command":["run.sh"],"data_paths":["ref"]}`)
	res, err := call(t, rt, tool, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Output) != `{"ref": "ACGT", "same": "ACGT"}` {
		t.Fatalf("output %s", res.Output)
	}
}

// A backend the operator configured takes the tools that ask for it.
func TestConfiguredBackend(t *testing.T) {
	be := &fakeBackend{}
	rt := newRuntime(t, func(o *bwrap.Options) { o.Backends = []bwrap.Backend{be} })
	tool := shTool("on-docker", "exit 1", "--x")
	tool.Config = json.RawMessage(`{"command":["run.sh","x"]}`)
	tool.SandboxBackend, tool.SandboxImage = "docker", "alpine:3"
	if ps := rt.Check(tool); len(ps) > 0 {
		t.Fatalf("Check: %+v", ps)
	}
	res, err := call(t, rt, tool, `{"n": 1}`)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Output) != `{"image": "alpine:3"}` || be.got == nil || string(be.got.Stdin) != `{"n": 1}` || be.got.Command[1] != "x" {
		t.Fatalf("output %s, sandbox %+v", res.Output, be.got)
	}
	if _, err := os.Stat(filepath.Join(be.got.BundleDir, "run.sh")); err != nil {
		t.Fatalf("the backend was not given the verified bundle: %v", err)
	}
}

type fakeBackend struct{ got *bwrap.Sandbox }

func (f *fakeBackend) Name() string                              { return "docker" }
func (f *fakeBackend) Check(t *runtimes.Tool) []runtimes.Problem { return nil }
func (f *fakeBackend) Run(_ context.Context, s *bwrap.Sandbox) (*runtimes.Result, error) {
	f.got = s
	return &runtimes.Result{Output: json.RawMessage(`{"image": "` + s.Image + `"}`)}, nil
}

// Bad options are refused, naming the option.
func TestOptionsValidated(t *testing.T) {
	closed, err := os.MkdirTemp("", "bwrap-closed-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(closed)
	cases := []struct {
		o    bwrap.Options
		want string
	}{
		{bwrap.Options{}, "Options.CacheDir is required"},
		{bwrap.Options{CacheDir: "cache"}, "absolute path"},
		{bwrap.Options{CacheDir: closed, Bwrap: "/nonexistent/bwrap"}, "Options.Bwrap"},
		{bwrap.Options{CacheDir: closed, UID: -1}, "Options.UID/GID"},
		{bwrap.Options{CacheDir: closed, Pids: -1}, "must not be negative"},
		{bwrap.Options{CacheDir: closed, Backends: []bwrap.Backend{&fakeBackend{}, &fakeBackend{}}}, `backend "docker" given twice`},
	}
	if os.Geteuid() == 0 {
		// MkdirTemp makes a 0700 directory: the sandbox uid cannot reach
		// a cache inside it.
		cases = append(cases, struct {
			o    bwrap.Options
			want string
		}{bwrap.Options{CacheDir: filepath.Join(closed, "cache")}, "not reachable by the sandbox uid"})
	}
	for _, c := range cases {
		_, err := bwrap.New(c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error saying %q", c.o, err, c.want)
		}
	}
}
