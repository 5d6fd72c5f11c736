package bwrap_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
)

// TARGETS.md R6: escape attempts from inside a bwrap tool. Each is refused
// or killed, and the error says which and why.

// Host files are not there: /etc/shadow, the host's Postgres socket (a real
// listening socket the test makes in the host's /tmp, the directory where a
// dev Postgres puts its socket) and a server data dir with a secret in it,
// readable by anyone on the host.
func TestEscapeReadHostFiles(t *testing.T) {
	rt := newRuntime(t)
	sock := filepath.Join(os.TempDir(), ".s.PGSQL."+marker())
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	data, err := os.MkdirTemp("", "scidex-data-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(data)
	secret := filepath.Join(data, "secret")
	if err := os.WriteFile(secret, []byte("the database password"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"shadow":          "cat /etc/shadow",
		"postgres socket": "ls -l " + sock,
		"server data dir": "cat " + secret,
		"host /etc":       "cat /etc/hostname",
	}
	if _, err := os.Stat("/var/run/postgresql"); err == nil {
		cases["postgres run dir"] = "ls /var/run/postgresql"
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := call(t, rt, shTool("read", script), `{}`)
			e := wantError(t, err, runtimes.CodeToolError)
			if stderr, _ := e.Details["stderr"].(string); !strings.Contains(stderr, "No such file or directory") {
				t.Fatalf("stderr %q, want the path not to exist inside the sandbox", stderr)
			}
		})
	}
	// The control: the same kind of read of a file that is in the sandbox
	// works, so the refusals above are the sandbox's doing.
	if _, err := call(t, rt, shTool("read", `cat /bundle/run.sh >/dev/null && echo '{}'`), `{}`); err != nil {
		t.Fatalf("reading the tool's own bundle: %v", err)
	}
}

// With network=deny a tool cannot connect to a listener on the host's
// loopback; with network=allow the same tool can (the control).
func TestEscapeNetworkDenied(t *testing.T) {
	rt := newRuntime(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	tool, _ := bundleTool("connect", map[string]string{"run.sh": fmt.Sprintf(
		"#!/usr/bin/bash\nexec 7<>/dev/tcp/127.0.0.1/%d && echo '{\"connected\": true}'\n", port)}, `{"command":["run.sh"]}`)

	_, err = call(t, rt, tool, `{}`)
	e := wantError(t, err, runtimes.CodeToolError)
	if stderr, _ := e.Details["stderr"].(string); !strings.Contains(stderr, "Connection refused") {
		t.Fatalf("stderr %q, want the connection refused", stderr)
	}
	select {
	case <-accepted:
		t.Fatal("the listener accepted a connection from a network=deny sandbox")
	default:
	}

	allowed := *tool
	allowed.Caps.Network = "allow"
	res, err := call(t, rt, &allowed, `{}`)
	if err != nil {
		t.Fatalf("network=allow: %v", err)
	}
	if string(res.Output) != `{"connected": true}`+"\n" {
		t.Fatalf("network=allow output %s", res.Output)
	}
	select {
	case <-accepted:
	case <-time.After(patience):
		t.Fatal("the listener never saw the network=allow connection")
	}
}

// A fork bomb hits pids.max: the call ends, says so, and leaves nothing.
func TestEscapeForkBomb(t *testing.T) {
	rt := newRuntime(t)
	m := marker()
	// The top shell stays (each bomb returns at once, its copies detached):
	// were it to exit, its pid namespace would end with it before the copies
	// reach the cap, and the call would end as a tool that printed nothing.
	tool := shTool("forkbomb", `bomb() { bomb | bomb & }; bomb; sleep 30`, "bomb-"+m)
	tool.Caps.WallTime = 3 * time.Second
	_, err := call(t, rt, tool, `{}`)
	e := wantError(t, err, runtimes.CodePidsLimit)
	if !strings.Contains(e.Message, "64 processes") {
		t.Errorf("message %q, want it to name the cap", e.Message)
	}
	if s := survivors("bomb-" + m); len(s) > 0 {
		t.Fatalf("%d processes of the fork bomb survived the call: %v", len(s), s[:min(len(s), 5)])
	}
}

// A memory hog is OOM-killed at its cap; the peak is recorded.
func TestEscapeMemoryHog(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts func(*bwrap.Options)
		want string
	}{
		{"cgroup", func(*bwrap.Options) {}, "cgroup"},
		{"rlimit", func(o *bwrap.Options) { o.NoCgroups = true }, "rlimit"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			rt := newRuntime(t, mode.opts)
			tool := shTool("memhog", `dd if=/dev/zero of=/dev/null bs=200M count=1`)
			tool.Caps.MemoryBytes = 64 << 20
			_, err := call(t, rt, tool, `{}`)
			e := wantError(t, err, runtimes.CodeMemoryLimit)
			if !strings.Contains(e.Message, "64 MiB") {
				t.Errorf("message %q, want it to name the cap", e.Message)
			}
			if enf := e.Details["enforcement"].(map[string]any); enf["memory"] != mode.want {
				t.Errorf("memory enforced by %v, want %s", enf["memory"], mode.want)
			}
			if mode.want == "cgroup" {
				if peak, _ := e.Details["peak_memory_bytes"].(int64); peak < 32<<20 {
					t.Errorf("peak memory %d, want the cgroup's peak near the 64 MiB cap", peak)
				}
			}
		})
	}
}

// A tool sleeping past its wall time is killed at it.
func TestEscapeWallTime(t *testing.T) {
	rt := newRuntime(t)
	m := marker()
	tool := shTool("sleeper", "sleep 1000."+m)
	tool.Caps.WallTime = 500 * time.Millisecond
	_, err := call(t, rt, tool, `{}`)
	e := wantError(t, err, runtimes.CodeWallTimeout)
	if !strings.Contains(e.Message, "500ms") {
		t.Errorf("message %q, want it to name the wall time", e.Message)
	}
	if s := survivors("1000." + m); len(s) > 0 {
		t.Fatalf("the sleeper survived: %v", s)
	}
}

// A grandchild in its own session, left behind by a tool that exits at once
// (and holding its stdout), dies with the sandbox: by the pid namespace
// alone when there are no cgroups to empty.
func TestEscapeGrandchild(t *testing.T) {
	for name, noCgroups := range map[string]bool{"cgroup": false, "rlimit": true} {
		t.Run(name, func(t *testing.T) {
			rt := newRuntime(t, func(o *bwrap.Options) { o.NoCgroups = noCgroups })
			m := marker()
			res, err := call(t, rt, shTool("orphan", "setsid sleep 1000."+m+" &\necho '{\"left\": true}'"), `{}`)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(res.Output), "left") {
				t.Fatalf("output %s", res.Output)
			}
			if s := survivors("1000." + m); len(s) > 0 {
				t.Fatalf("the grandchild survived the call: %v", s)
			}
		})
	}
}

// Writing past the tmpfs size fails with no space, reported as disk_limit,
// in /tmp and in the run dir alike.
func TestEscapeDiskFull(t *testing.T) {
	rt := newRuntime(t)
	for _, dir := range []string{"/tmp", "/work"} {
		_, err := call(t, rt, shTool("fill", "head -c 40000000 /dev/zero > "+dir+"/fill"), `{}`)
		e := wantError(t, err, runtimes.CodeDiskLimit)
		if !strings.Contains(e.Message, "16 MiB") {
			t.Errorf("%s: message %q, want it to name the size", dir, e.Message)
		}
	}
}
