package inprocess_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/inprocess"
	"github.com/scidex/substrate/runtimes/runtimetest"
)

func tool(fn string) *runtimes.Tool {
	return &runtimes.Tool{Name: fn, Version: "1.0.0", Runtime: inprocess.Name, Config: json.RawMessage(`{"function":"` + fn + `"}`)}
}

func TestConformance(t *testing.T) {
	rt := inprocess.New(map[string]inprocess.Func{
		"echo": func(_ context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
			return args, nil
		},
		"bad": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
			return json.RawMessage(`{"value":"not a number"}`), nil
		},
		"sleep": func(ctx context.Context, _ json.RawMessage, progress func(runtimes.Progress)) (json.RawMessage, error) {
			progress(runtimes.Progress{Message: "sleeping"})
			<-ctx.Done()
			return nil, ctx.Err()
		},
		"huge": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
			return json.RawMessage(`"` + strings.Repeat("x", runtimes.MaxOutputBytes) + `"`), nil
		},
	})
	runtimetest.Run(t, runtimetest.Fixture{Runtime: rt, Echo: tool("echo"), BadOutput: tool("bad"), Sleep: tool("sleep"), Huge: tool("huge")})
}

// A runtime_config that names anything but a registered function is refused
// when the tool is checked and when it is run.
func TestUnregisteredFunctionRefused(t *testing.T) {
	rt := inprocess.New(map[string]inprocess.Func{"echo": nil})
	for _, cfg := range []string{`{"function":"os.exec"}`, `{}`, `{"function":"echo","path":"/bin/sh"}`, `[1]`} {
		tl := &runtimes.Tool{Name: "x", Runtime: inprocess.Name, Config: json.RawMessage(cfg)}
		if ps := rt.Check(tl); len(ps) == 0 {
			t.Errorf("Check accepted runtime_config %s", cfg)
		}
		_, err := rt.Run(context.Background(), &runtimes.Call{Tool: tl, Args: json.RawMessage(`{}`)})
		if e := runtimes.AsError(err); err == nil || e.Code != runtimes.CodeRefused {
			t.Errorf("Run with runtime_config %s: %v, want refused", cfg, err)
		}
	}
}

// No internals reach the caller: a panic, a driver error or an error naming
// a host path fails the call with internal_error and a generic message that
// holds none of them; the cause is logged once, with the call id and the
// request id, and without the stack. A *runtimes.Error is the caller's.
func TestInternalFailuresAreLoggedNotShown(t *testing.T) {
	var logBuf syncBuffer
	rt := inprocess.New(map[string]inprocess.Func{
		"boom": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
			panic("kaboom at /home/operator/secret-dir")
		},
		"driver": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
			return nil, fmt.Errorf("record it: %w", &pgconn.PgError{Severity: "ERROR", Code: "23505",
				Message: `duplicate key value violates unique constraint "artifacts_pkey"`})
		},
		"path": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
			_, err := os.Open("/srv/scidex/data/datasets/missing.csv")
			return nil, err
		},
		"refused": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
			return nil, fmt.Errorf("read the target: %w", problem.New(problem.NotFound, "no artifact hypothesis:h1"))
		},
		"told": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
			return nil, runtimes.Errorf(runtimes.CodeToolError, false, "the input file has no header row")
		},
	}).WithLogger(slog.New(slog.NewJSONHandler(&logBuf, nil)))
	rc := request.System("test", time.Now())
	rc.RequestID = "req_testinternal00001"
	ctx := request.With(context.Background(), rc)
	for fn, leak := range map[string]string{"boom": "kaboom", "driver": "duplicate key", "path": "/srv/scidex"} {
		logBuf.Reset()
		_, err := rt.Run(ctx, &runtimes.Call{Tool: tool(fn), Args: json.RawMessage(`{}`), ID: "call-" + fn})
		e := runtimes.AsError(err)
		if e.Code != runtimes.CodeInternal || e.Setup || !strings.Contains(e.Message, "call-"+fn) {
			t.Errorf("%s: got %+v, want an internal_error naming the call", fn, e)
		}
		shown, _ := json.Marshal(e)
		for _, s := range []string{leak, "goroutine", ".go:", "pgconn", "/"} {
			if strings.Contains(string(shown), s) {
				t.Errorf("%s: the caller's error %s holds %q", fn, shown, s)
			}
		}
		lines := strings.Split(strings.TrimSpace(logBuf.String()), "\n")
		if len(lines) != 1 {
			t.Fatalf("%s: %d log lines, want 1: %s", fn, len(lines), logBuf.String())
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["call_id"] != "call-"+fn || rec["request_id"] != rc.RequestID || !strings.Contains(lines[0], leak) {
			t.Errorf("%s: the log line does not name the call, the request and the cause: %s", fn, lines[0])
		}
		if strings.Contains(lines[0], "goroutine ") || strings.Contains(lines[0], ".go:") {
			t.Errorf("%s: the log line holds a stack: %s", fn, lines[0])
		}
	}
	// The panic's log line says where it happened, as function and line.
	logBuf.Reset()
	_, _ = rt.Run(ctx, &runtimes.Call{Tool: tool("boom"), Args: json.RawMessage(`{}`), ID: "call-boom"})
	if !strings.Contains(logBuf.String(), `"at":"github.com/scidex/substrate/runtimes/inprocess_test.TestInternalFailuresAreLoggedNotShown.func1:`) {
		t.Errorf("the panic's log line does not say where: %s", logBuf.String())
	}
	logBuf.Reset()
	_, err := rt.Run(ctx, &runtimes.Call{Tool: tool("told"), Args: json.RawMessage(`{}`), ID: "call-told"})
	if e := runtimes.AsError(err); e.Code != runtimes.CodeToolError || e.Message != "the input file has no header row" || logBuf.Len() != 0 {
		t.Errorf("a *runtimes.Error: got %+v (log %q), want it as the tool gave it, not logged", e, logBuf.String())
	}
	// A store's refusal is written for clients: the caller reads it.
	_, err = rt.Run(ctx, &runtimes.Call{Tool: tool("refused"), Args: json.RawMessage(`{}`), ID: "call-refused"})
	if e := runtimes.AsError(err); e.Code != runtimes.CodeToolError || e.Message != "NOT_FOUND: no artifact hypothesis:h1" || logBuf.Len() != 0 {
		t.Errorf("a store refusal: got %+v (log %q), want its message, not logged", e, logBuf.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the runtime's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
func (s *syncBuffer) Len() int       { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Len() }
func (s *syncBuffer) Reset()         { s.mu.Lock(); defer s.mu.Unlock(); s.b.Reset() }
