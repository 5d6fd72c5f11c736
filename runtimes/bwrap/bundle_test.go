package bwrap_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
)

// A bundle file whose bytes changed after the tool was registered is
// refused at dispatch, before anything runs.
func TestBundleAlteredAtSource(t *testing.T) {
	rt := newRuntime(t)
	tool, b := bundleTool("altered", map[string]string{"run.sh": "#!/bin/sh\necho '{\"honest\": true}'\n"}, `{"command":["run.sh"]}`)
	b.set("run.sh", []byte("#!/bin/sh\ncat /etc/shadow\n"))
	_, err := call(t, rt, tool, `{}`)
	e := wantError(t, err, runtimes.CodeBundleAltered)
	if !e.Setup || !strings.Contains(e.Message, `"run.sh" no longer matches`) {
		t.Fatalf("got %+v", e)
	}
}

// A file altered in the runtime's own copy, after it was verified and run,
// is refused at the next dispatch; the call after that starts again from
// the stored bundle and runs.
func TestBundleAlteredInCache(t *testing.T) {
	var cacheDir string
	rt := newRuntime(t, func(o *bwrap.Options) { cacheDir = o.CacheDir })
	tool, _ := bundleTool("cached", map[string]string{"run.sh": "#!/bin/sh\necho '{\"honest\": true}'\n"}, `{"command":["run.sh"]}`)
	if _, err := call(t, rt, tool, `{}`); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(cacheDir, "cached@1.0.0-*", "run.sh"))
	if len(matches) != 1 {
		t.Fatalf("cached copies of the program: %v, want one", matches)
	}
	cacheRoot := matches[0]
	if err := os.WriteFile(cacheRoot, []byte("#!/bin/sh\necho '{\"honest\": false}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := call(t, rt, tool, `{}`)
	wantError(t, err, runtimes.CodeBundleAltered)
	res, err := call(t, rt, tool, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Output), `"honest": true`) {
		t.Fatalf("output %s, want the registered program's", res.Output)
	}
}

// The cached bundle is not writable by the sandbox: a tool cannot alter
// its own program for the next call.
func TestBundleReadOnly(t *testing.T) {
	rt := newRuntime(t)
	tool := shTool("selfmod", `echo 'echo pwned' >> /bundle/run.sh 2>/dev/null && echo '{"wrote": true}' || echo '{"wrote": false}'`)
	for range 2 {
		res, err := call(t, rt, tool, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(res.Output), `"wrote": false`) {
			t.Fatalf("output %s: the tool wrote its bundle", res.Output)
		}
	}
}

// The bundle cache is an LRU under Options.CacheBytes: past the cap the
// least recently used bundle goes (and comes back from the store when next
// called), and a bundle a running call holds is never the one to go.
func TestBundleCacheLRU(t *testing.T) {
	var cacheDir string
	rt := newRuntime(t, func(o *bwrap.Options) { cacheDir = o.CacheDir; o.CacheBytes = 2500 })
	pad := "#" + strings.Repeat("x", 1000) + "\n"
	mk := func(name, body string) *runtimes.Tool {
		tool, _ := bundleTool(name, map[string]string{"run.sh": "#!/bin/sh\n" + pad + body + "\n"}, `{"command":["run.sh"]}`)
		return tool
	}
	cached := func(name string) bool {
		m, _ := filepath.Glob(filepath.Join(cacheDir, name+"@1.0.0-*"))
		return len(m) == 1
	}
	a, b, c := mk("lru-a", "echo '{}'"), mk("lru-b", "echo '{}'"), mk("lru-c", "echo '{}'")
	for _, tool := range []*runtimes.Tool{a, b, a, c} {
		if _, err := call(t, rt, tool, `{}`); err != nil {
			t.Fatal(err)
		}
	}
	if !cached("lru-a") || cached("lru-b") || !cached("lru-c") {
		t.Fatalf("cached a %v b %v c %v, want b (least recently used) evicted", cached("lru-a"), cached("lru-b"), cached("lru-c"))
	}
	if _, err := call(t, rt, b, `{}`); err != nil {
		t.Fatalf("an evicted bundle is materialized again: %v", err)
	}

	// A running call holds its bundle through any number of evictions.
	hold := mk("lru-hold", `echo '{"message": "up"}' >&3; exec sleep 60`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		_, err := rt.Run(ctx, &runtimes.Call{Tool: hold, Args: json.RawMessage(`{}`), ID: "hold",
			Progress: func(runtimes.Progress) { up <- struct{}{} }})
		done <- err
	}()
	select {
	case <-up:
	case <-time.After(patience):
		t.Fatal("the holding call never started")
	}
	for _, tool := range []*runtimes.Tool{a, c, b, a} {
		if _, err := call(t, rt, tool, `{}`); err != nil {
			t.Fatal(err)
		}
	}
	if !cached("lru-hold") {
		t.Fatal("the bundle of a running call was evicted")
	}
	cancel()
	wantError(t, <-done, runtimes.CodeCancelled)
	if _, err := call(t, rt, c, `{}`); err != nil {
		t.Fatal(err)
	}
	if cached("lru-hold") {
		t.Fatal("the released, least recently used bundle was kept past the cap")
	}
}

// Two servers sharing a cache dir (serve and a worker on one data dir): a
// bundle one of them is running a call from is not evicted by the other,
// which found it in the cache when it started.
func TestBundleCacheSharedAcrossProcesses(t *testing.T) {
	var cacheDir string
	b := newRuntime(t, func(o *bwrap.Options) { cacheDir = o.CacheDir; o.CacheBytes = 2500 })
	pad := "#" + strings.Repeat("x", 1000) + "\n"
	mk := func(name, body string) *runtimes.Tool {
		tool, _ := bundleTool(name, map[string]string{"run.sh": "#!/bin/sh\n" + pad + body + "\n"}, `{"command":["run.sh"]}`)
		return tool
	}
	held := mk("shared-held", `echo '{"message": "up"}' >&3; exec sleep 60`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		_, err := b.Run(ctx, &runtimes.Call{Tool: held, Args: json.RawMessage(`{}`), ID: "held",
			Progress: func(runtimes.Progress) { up <- struct{}{} }})
		done <- err
	}()
	select {
	case <-up:
	case <-time.After(patience):
		t.Fatal("the holding call never started")
	}
	// The other server starts on the same cache, where the held bundle is
	// its least recently used entry, and fills it past the cap.
	a := newRuntime(t, func(o *bwrap.Options) { o.CacheDir = cacheDir; o.CacheBytes = 2500 })
	for _, name := range []string{"shared-1", "shared-2", "shared-3"} {
		if _, err := call(t, a, mk(name, "echo '{}'"), `{}`); err != nil {
			t.Fatal(err)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(cacheDir, "shared-held@1.0.0-*")); len(m) != 1 {
		t.Fatal("the other server's cache evicted the bundle of a running call")
	}
	if m, _ := filepath.Glob(filepath.Join(cacheDir, "shared-[0-9]@1.0.0-*")); len(m) != 1 {
		t.Fatalf("the other server's cache holds %v, want its own entries evicted in the held one's place", m)
	}
	cancel()
	wantError(t, <-done, runtimes.CodeCancelled)
}
