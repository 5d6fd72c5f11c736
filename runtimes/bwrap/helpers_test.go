package bwrap_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
)

// patience bounds how long a test waits for a call to end: a liveness bound
// that fails a hung runtime, not a timing target.
const patience = 60 * time.Second

// memBundle is a bundle held in memory; a test may change a file's bytes
// after the tool was "registered" with their hash.
type memBundle struct {
	mu    sync.Mutex
	files map[string][]byte
}

func (b *memBundle) Open(_ context.Context, f runtimes.File) (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.files[f.Path]
	if !ok {
		return nil, fmt.Errorf("no file %q", f.Path)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (b *memBundle) set(path string, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.files[path] = data
}

// bundleTool makes a tool of files, registered with their current hashes,
// whose runtime_config is config.
func bundleTool(name string, files map[string]string, config string) (*runtimes.Tool, *memBundle) {
	b := &memBundle{files: map[string][]byte{}}
	var fs []runtimes.File
	for p, body := range files {
		b.files[p] = []byte(body)
		sum := sha256.Sum256([]byte(body))
		fs = append(fs, runtimes.File{Path: p, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(body))})
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
	return &runtimes.Tool{Ref: "tool:" + name + "@1.0.0", Name: name, Version: "1.0.0", Runtime: bwrap.Name,
		Config: json.RawMessage(config), Files: fs, Bundle: b,
		Caps: runtimes.Caps{WallTime: 30 * time.Second, MemoryBytes: 256 << 20, Network: "deny"}}, b
}

// shTool is a tool whose program is the POSIX sh script body; args are the
// command's arguments after the program.
func shTool(name, body string, args ...string) *runtimes.Tool {
	cmd, _ := json.Marshal(append([]string{"run.sh"}, args...))
	t, _ := bundleTool(name, map[string]string{"run.sh": "#!/bin/sh\n" + body + "\n"}, `{"command":`+string(cmd)+`}`)
	return t
}

// newRuntime returns a runtime over a fresh cache dir the sandbox uid can
// reach, with opts applied.
func newRuntime(t *testing.T, opts ...func(*bwrap.Options)) *bwrap.Runtime {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatal("bwrap is not installed: run scripts/deps test (Debian package bubblewrap)")
	}
	dir, err := os.MkdirTemp("", "bwrap-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	o := bwrap.Options{CacheDir: filepath.Join(dir, "cache"), TmpBytes: 16 << 20, Pids: 64, EgressShim: shimBin,
		Logger: slog.New(slog.NewTextHandler(testLog{t}, nil))}
	for _, f := range opts {
		f(&o)
	}
	rt, err := bwrap.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// call runs tool with args within patience.
func call(t *testing.T, rt *bwrap.Runtime, tool *runtimes.Tool, args string) (*runtimes.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	type outcome struct {
		res *runtimes.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := rt.Run(ctx, &runtimes.Call{Tool: tool, Args: json.RawMessage(args), ID: t.Name()})
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if ctx.Err() != nil {
			t.Fatalf("the call did not end within %s", patience)
		}
		return o.res, o.err
	case <-time.After(patience + 10*time.Second):
		t.Fatalf("the runtime did not return within %s of the call's deadline", patience)
		return nil, nil
	}
}

// wantError asserts err is a *runtimes.Error with code and returns it.
func wantError(t *testing.T, err error, code string) *runtimes.Error {
	t.Helper()
	var e *runtimes.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a *runtimes.Error with code %s", err, code)
	}
	if e.Code != code {
		t.Fatalf("got %s: %s (details %v), want code %s", e.Code, e.Message, e.Details, code)
	}
	return e
}

// marker is a string unique to one test, put in a sandboxed process's argv
// so the test can look for survivors.
func marker() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d", 100000+int(b[0])<<16|int(b[1])<<8|int(b[2]))
}

// survivors lists the host processes whose command line contains s.
func survivors(s string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, s) && !strings.Contains(cmd, "go test") {
			out = append(out, e.Name()+": "+cmd)
		}
	}
	return out
}

// testLog sends the runtime's log to the test's output.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
