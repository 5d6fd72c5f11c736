package bwrap_test

import (
	"encoding/json"
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

// Nothing but /tmp, /work and /dev/shm is writable: a write to the root,
// /etc, /dev, /usr or the bundle fails as a read-only file system, so 200
// MB written to / lands nowhere, in either enforcement mode.
func TestEscapeWriteRoot(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			rt := newRuntime(t, mode.opts)
			for _, dir := range []string{"/", "/etc", "/dev", "/usr", "/bundle"} {
				_, err := call(t, rt, shTool("write", "head -c 200000000 /dev/zero > "+dir+"/fill"), `{}`)
				e := wantError(t, err, runtimes.CodeToolError)
				stderr, _ := e.Details["stderr"].(string)
				if !strings.Contains(stderr, "Read-only file system") {
					t.Errorf("%s: stderr %q, want the write refused", dir, stderr)
				}
			}
			// mkdir and a new name in /etc fail the same way.
			_, err := call(t, rt, shTool("mkdir", "mkdir /etc/cron.d.x"), `{}`)
			if e := wantError(t, err, runtimes.CodeToolError); !strings.Contains(e.Details["stderr"].(string), "Read-only file system") {
				t.Errorf("mkdir in /etc: %v", e.Details["stderr"])
			}
		})
	}
}

// Writing past the tmpfs size fails with no space, reported as disk_limit,
// in /tmp, the run dir and /dev/shm alike, in either enforcement mode: where
// no memory cgroup counts tmpfs pages, the sizes alone bound what a tool can
// fill.
func TestEscapeDiskFull(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			rt := newRuntime(t, mode.opts)
			for _, dir := range []string{"/tmp", "/work", "/dev/shm"} {
				_, err := call(t, rt, shTool("fill", "head -c 40000000 /dev/zero > "+dir+"/fill"), `{}`)
				e := wantError(t, err, runtimes.CodeDiskLimit)
				if !strings.Contains(e.Message, "16 MiB") {
					t.Errorf("%s: message %q, want it to name the size", dir, e.Message)
				}
			}
			// Every tmpfs at once, each to its cap: the tool sees three
			// filled mounts and nothing more.
			res, err := call(t, rt, shTool("fillall", `for d in /tmp /work /dev/shm; do head -c 40000000 /dev/zero > $d/fill 2>/dev/null; done
echo "{\"kb\": $(du -sk /tmp /work /dev/shm | awk '{s+=$1} END {print s}')}"`), `{}`)
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ KB int64 }
			if err := json.Unmarshal(res.Output, &got); err != nil || got.KB > 3*16<<10 {
				t.Fatalf("output %s: the tool filled more than 3 × 16 MiB", res.Output)
			}
		})
	}
}
