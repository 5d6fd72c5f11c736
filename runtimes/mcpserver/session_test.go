package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/mcpserver"
)

type whoami struct {
	PID        int   `json:"pid"`
	Handshakes int64 `json:"handshakes"`
}

func askWho(t testing.TB, rt runtimes.Runtime, server string) whoami {
	t.Helper()
	w, err := who(t, rt, server)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// who calls whoami; unlike askWho it returns its failure, so it can run on a
// goroutine other than the test's.
func who(t testing.TB, rt runtimes.Runtime, server string) (whoami, error) {
	var w whoami
	out, e := call(t, rt, server, "whoami", `{}`)
	if e != nil {
		return w, fmt.Errorf("whoami on %s: %w", server, e)
	}
	if err := json.Unmarshal(out, &w); err != nil {
		return w, fmt.Errorf("whoami on %s: %w", server, err)
	}
	return w, nil
}

// concurrently makes n calls of whoami at once and returns the answers of
// those that succeeded. Each failed call is reported with t.Errorf once all
// are done (t.Fatal must not be called from the calls' goroutines).
func concurrently(t testing.TB, rt runtimes.Runtime, server string, n int) []whoami {
	t.Helper()
	answers := make([]whoami, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i], errs[i] = who(t, rt, server) })
	}
	wg.Wait()
	var out []whoami
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent call %d of %d: %v", i, n, err)
			continue
		}
		out = append(out, answers[i])
	}
	return out
}

func lines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// waitFor polls cond until it holds or patience runs out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Sixteen concurrent calls on a cold runtime start one stdio server and
// share its one session.
func TestConcurrentCallsShareOneStdioSession(t *testing.T) {
	srv, starts := stdioServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"test": srv})
	got := concurrently(t, rt, "test", 16)
	if len(got) == 0 {
		t.FailNow() // each failed call was reported
	}
	for i, w := range got {
		if w.PID != got[0].PID || w.Handshakes != 1 {
			t.Errorf("call %d answered by pid %d after %d handshakes; want pid %d after 1", i, w.PID, w.Handshakes, got[0].PID)
		}
	}
	// A later call still uses that session.
	if w := askWho(t, rt, "test"); w.PID != got[0].PID || w.Handshakes != 1 {
		t.Errorf("a later call was answered by pid %d after %d handshakes; want pid %d after 1", w.PID, w.Handshakes, got[0].PID)
	}
	if n := lines(t, starts); n != 1 {
		t.Errorf("the runtime started %d server processes for 17 calls, want 1", n)
	}
}

func TestConcurrentCallsShareOneHTTPSession(t *testing.T) {
	h := newHTTPServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"test": {URL: h.URL}})
	concurrently(t, rt, "test", 16)
	askWho(t, rt, "test")
	if n := h.st.handshakes.Load(); n != 1 {
		t.Errorf("16 concurrent calls and one after them made %d MCP handshakes, want 1", n)
	}
}

// A stdio server killed between calls is replaced: the next call succeeds
// on a new process, and the dead one is reaped. Killed five times, so that a
// runtime relying on noticing the closed pipe in time would be caught.
func TestReconnectAfterStdioServerKilled(t *testing.T) {
	srv, starts := stdioServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"test": srv})
	prev := askWho(t, rt, "test")
	const kills = 5
	for range kills {
		if err := syscall.Kill(prev.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the killed server to exit", func() bool { return exitedChild(prev.PID) })
		next := askWho(t, rt, "test")
		if next.PID == prev.PID {
			t.Fatalf("the call after the kill was answered by the killed pid %d", prev.PID)
		}
		waitFor(t, "the killed server to be reaped", func() bool { return !exists(prev.PID) })
		// The new session is shared again.
		if again := askWho(t, rt, "test"); again.PID != next.PID {
			t.Fatalf("the call after that went to pid %d, want the reconnected %d", again.PID, next.PID)
		}
		prev = next
	}
	if n := lines(t, starts); n != kills+1 {
		t.Errorf("%d server starts, want %d (the first and one per kill)", n, kills+1)
	}
}

// An HTTP server that forgot the session (a restart) gets a new one, and
// the call that found out succeeds.
func TestReconnectAfterHTTPSessionGone(t *testing.T) {
	h := newHTTPServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"test": {URL: h.URL}})
	askWho(t, rt, "test")
	h.restart()
	askWho(t, rt, "test")
	if n := h.st.handshakes.Load(); n != 2 {
		t.Errorf("%d MCP handshakes, want 2 (the first and one after the restart)", n)
	}
}

// Close cancels running calls, ends the server and the helpers it forked,
// leaves no goroutine behind, and refuses later calls.
func TestCloseLeavesNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	srv, _ := stdioServer(t)
	h := newHTTPServer(t)
	rt, err := mcpserver.New(mcpserver.Options{
		Servers:        map[string]mcpserver.Server{"stdio": srv, "http": {URL: h.URL}},
		TerminateGrace: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	server := askWho(t, rt, "stdio")
	var helper struct{ PID int }
	if err := json.Unmarshal(mustCall(t, rt, "stdio", "spawn", `{}`), &helper); err != nil {
		t.Fatal(err)
	}
	mustCall(t, rt, "http", "echo", `{}`)

	// Two calls still running when Close comes.
	var running sync.WaitGroup
	errs := make(chan error, 2)
	for _, name := range []string{"stdio", "http"} {
		running.Add(1)
		go func() {
			var once sync.Once
			_, err := rt.Run(context.Background(), &runtimes.Call{Tool: tool(name, "sleep"), Args: json.RawMessage(`{}`),
				Progress: func(runtimes.Progress) { once.Do(running.Done) }})
			errs <- err
		}()
	}
	running.Wait()
	start := time.Now()
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Close took %s", time.Since(start))
	for range 2 {
		if e := runtimes.AsError(<-errs); e.Code != runtimes.CodeCancelled {
			t.Errorf("a call running at Close ended with %v, want cancelled", e)
		}
	}
	if exists(server.PID) {
		t.Errorf("the stdio server (pid %d) is still in the process table after Close", server.PID)
	}
	// SIGKILL is delivered asynchronously: the helper dies just after.
	waitFor(t, "the helper the stdio server forked to die", func() bool { return !alive(helper.PID) })
	_, err = rt.Run(context.Background(), &runtimes.Call{Tool: tool("stdio", "echo"), Args: json.RawMessage(`{}`)})
	if e := runtimes.AsError(err); err == nil || e.Code != runtimes.CodeRefused {
		t.Errorf("a call after Close: %v, want refused", err)
	}
	// The SDK sends notifications/cancelled in the background and may
	// lose it to the session's close; the SDK's server does not cancel a
	// handler when its session is deleted either. So the HTTP server's
	// sleep is ended here, as its own shutdown would end it.
	h.st.releaseSleeps()
	h.Close()
	waitFor(t, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

// The stdio server's environment is clean: the substrate's own variables
// do not reach it, the server's Env does.
func TestStdioEnvironmentIsClean(t *testing.T) {
	t.Setenv("SCIDEX_TEST_SECRET", "hunter2")
	srv, _ := stdioServer(t)
	srv.Env["TEXT_FOR_SERVER"] = "given"
	rt := newRuntime(t, map[string]mcpserver.Server{"test": srv})
	for name, want := range map[string]string{"SCIDEX_TEST_SECRET": `{"set":false,"value":""}`, "TEXT_FOR_SERVER": `{"set":true,"value":"given"}`} {
		out := mustCall(t, rt, "test", "env", `{"name":"`+name+`"}`)
		if !sameJSON(out, want) {
			t.Errorf("the server sees %s as %s, want %s", name, out, want)
		}
	}
}

func sameJSON(a json.RawMessage, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// A call that stops waiting for a slow handshake returns at once; the
// handshake goes on, and the next call uses the session it made.
func TestSlowConnectOutlivesTheCallThatStartedIt(t *testing.T) {
	h := newHTTPServer(t)
	arrived := make(chan struct{}, 16)
	gate := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-gate
		h.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { closeOnce(gate) })
	rt := newRuntime(t, map[string]mcpserver.Server{"slow": {URL: slow.URL}})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := rt.Run(ctx, &runtimes.Call{Tool: tool("slow", "echo"), Args: json.RawMessage(`{}`)})
		done <- err
	}()
	<-arrived
	cancel()
	if e := runtimes.AsError(<-done); e.Code != runtimes.CodeCancelled {
		t.Fatalf("the cancelled call ended with %v, want cancelled", e)
	}
	closeOnce(gate)
	askWho(t, rt, "slow")
	if n := h.st.handshakes.Load(); n != 1 {
		t.Errorf("%d handshakes, want 1: the second call should use the first call's connect", n)
	}
}

// A server that accepts and never answers fails the handshake after
// ConnectTimeout, as unreachable.
func TestConnectTimeout(t *testing.T) {
	gate := make(chan struct{})
	mute := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(mute.Close)
	t.Cleanup(func() { closeOnce(gate) })
	rt, err := mcpserver.New(mcpserver.Options{Servers: map[string]mcpserver.Server{"mute": {URL: mute.URL}}, ConnectTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	_, e := call(t, rt, "mute", "echo", `{}`)
	if e == nil || e.Code != runtimes.CodeUnreachable || !e.Setup || !strings.Contains(e.Message, "did not complete the MCP handshake in time") {
		t.Fatalf("got %+v, want an unreachable setup failure saying the handshake timed out", e)
	}
}

var gateMu sync.Mutex

func closeOnce(c chan struct{}) {
	gateMu.Lock()
	defer gateMu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// concurrently runs its calls on goroutines of its own, where t.Fatal must
// not be called (it would end only that goroutine, and leave a zero answer
// behind): a failed call is reported with t.Errorf once they are all done,
// and left out of the answers.
func TestConcurrentlyReportsFailedCalls(t *testing.T) {
	rt := &halfFailing{}
	rec := &recordingTB{TB: t}
	got := concurrently(rec, rt, "test", 16)
	if rec.fatal {
		t.Errorf("concurrently called t.Fatal or t.FailNow (from a goroutine it started)")
	}
	if len(rec.errors) != 8 {
		t.Errorf("concurrently reported %d failures, want 8: %q", len(rec.errors), rec.errors)
	}
	if len(got) != 8 {
		t.Errorf("concurrently returned %d answers, want the 8 of the calls that succeeded", len(got))
	}
	for i, w := range got {
		if w.PID != 1 {
			t.Errorf("answer %d is %+v, not one a call gave", i, w)
		}
	}
}

// halfFailing is a runtime whose every second call fails.
type halfFailing struct{ n atomic.Int64 }

func (*halfFailing) Name() string                            { return mcpserver.Name }
func (*halfFailing) Check(*runtimes.Tool) []runtimes.Problem { return nil }
func (h *halfFailing) Run(context.Context, *runtimes.Call) (*runtimes.Result, error) {
	if h.n.Add(1)%2 == 0 {
		return nil, runtimes.Errorf(runtimes.CodeToolError, false, "call failed")
	}
	return &runtimes.Result{Output: json.RawMessage(`{"pid":1,"handshakes":1}`)}, nil
}

// recordingTB records the failures reported to it instead of failing the
// test; Fatal and FailNow end the calling goroutine, as testing.T's do.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	fatal  bool
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.FailNow()
}
func (r *recordingTB) Fatal(args ...any) { r.Error(args...); r.FailNow() }
func (r *recordingTB) FailNow() {
	r.mu.Lock()
	r.fatal = true
	r.mu.Unlock()
	runtime.Goexit()
}
