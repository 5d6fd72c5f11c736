// Package apitest runs the real GraphQL server in process on a real database for
// tests: requests go through HTTP, token verification and the gqlgen executor
// exactly as a client's would.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/server"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/skillcall"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

// Secret is the HS256 secret test servers accept.
var Secret = []byte("apitest-secret-0123456789abcdef-0123456789")

// Env is one test server on its own database.
type Env struct {
	Pool   *pgxpool.Pool
	Store  *store.Store
	Hub    *event.Hub
	Server *httptest.Server
	Log    *LogBuffer
	App    *app.App
}

// Opts adjusts the test server.
type Opts struct {
	Server func(*server.Opts)
	Store  func(*store.Opts)
	// App adjusts the rest of the composition (the tool dispatcher, its
	// runtimes).
	App func(*app.Config)
}

// New starts a server on a fresh database, wired by the same constructor as
// `scidex serve` (internal/app).
func New(t testing.TB, opts ...Opts) *Env {
	t.Helper()
	pool := dbtest.Pool(t)
	logBuf := &LogBuffer{}
	log := slog.New(slog.NewTextHandler(logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	v, err := auth.NewVerifier(auth.VerifierOpts{Issuer: "scidex", Audience: "scidex", HS256Secret: Secret})
	if err != nil {
		t.Fatal(err)
	}
	cfg := app.Config{Pool: pool, Logger: log, Server: server.Opts{Verifier: v, Introspection: true},
		Queue:   queue.Opts{Workers: 4},
		Tools:   dispatch.Opts{OnFinish: skills.StoreQueued},
		OnStart: []func(context.Context, *app.App) error{app.InstallSkills},
		Runtimes: func(st *store.Store) (*runtimes.Registry, error) {
			return runtimes.NewRegistry(tools.Runtime(skills.Deps{Store: st}).WithLogger(log), skillcall.New(workpacket.Writer(st)))
		}}
	for _, o := range opts {
		if o.App != nil {
			o.App(&cfg)
		}
		if o.Store != nil {
			o.Store(&cfg.Store)
		}
		if o.Server != nil {
			o.Server(&cfg.Server)
		}
	}
	a, err := app.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler)
	// Cleanups run last-registered first: the SSE streams, the HTTP server, then the websockets
	// it hijacked, then the background work, and the pool (dbtest's) after.
	t.Cleanup(func() {
		if err := a.Stop(); err != nil {
			t.Errorf("background work: %v", err)
		}
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = a.Handler.CloseWebsockets(ctx)
	})
	t.Cleanup(srv.Close)
	// httptest's Close waits for every request: end the SSE streams first.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = a.Handler.CloseEventStreams(ctx)
	})
	return &Env{Pool: pool, Store: a.Store, Hub: a.Hub, Server: srv, Log: logBuf, App: a}
}

// Token mints a token for an actor with the given permissions.
func Token(t testing.TB, sub string, perms ...auth.Permission) string {
	t.Helper()
	tok, err := auth.Mint(auth.MintOpts{Secret: Secret, Issuer: "scidex", Audience: "scidex", Subject: sub,
		Kind: auth.KindHuman, Permissions: perms, TTL: time.Hour, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Contributor is a token for a contributor named sub.
func Contributor(t testing.TB, sub string) string { return Token(t, sub, auth.PermContributor) }

// client keeps connections to the test servers open for concurrent tests.
var client = &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second}}

// Response is a decoded GraphQL response with its HTTP status.
type Response struct {
	Status     int
	Data       json.RawMessage
	Errors     []GQLError
	Extensions map[string]any
	Raw        []byte
}

// GQLError is one entry of a response's errors.
type GQLError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code is the error's extensions.code.
func (e GQLError) Code() string { s, _ := e.Extensions["code"].(string); return s }

// Post sends a GraphQL request with a bearer token ("" for none).
func (e *Env) Post(t testing.TB, token, query string, vars map[string]any) *Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return e.Raw(t, token, "application/json", body)
}

// Raw sends a request body as is.
func (e *Env) Raw(t testing.TB, token, contentType string, body []byte) *Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, e.Server.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := &Response{Status: resp.StatusCode, Raw: raw}
	var env struct {
		Data       json.RawMessage `json:"data"`
		Errors     []GQLError      `json:"errors"`
		Extensions map[string]any  `json:"extensions"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("response is not JSON (%d): %s", resp.StatusCode, raw)
	}
	out.Data, out.Errors, out.Extensions = env.Data, env.Errors, env.Extensions
	return out
}

// OK sends a request and fails the test on any GraphQL error; it decodes data into v.
func (e *Env) OK(t testing.TB, token, query string, vars map[string]any, v any) {
	t.Helper()
	r := e.Post(t, token, query, vars)
	if len(r.Errors) > 0 || r.Status != http.StatusOK {
		t.Fatalf("request failed (%d): %s", r.Status, r.Raw)
	}
	if v != nil {
		if err := json.Unmarshal(r.Data, v); err != nil {
			t.Fatalf("decode %s: %v", r.Data, err)
		}
	}
}

// Count returns a count(*) from the database, to check what was (not) written.
func (e *Env) Count(t testing.TB, table string) int {
	t.Helper()
	var n int
	if err := e.Pool.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Counts snapshots the tables a write touches.
func (e *Env) Counts(t testing.TB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tbl := range []string{"artifacts", "artifact_versions", "write_journal", "events", "links", "signals", "idempotency_keys"} {
		out[tbl] = e.Count(t, tbl)
	}
	return out
}

// LogBuffer collects the server's log lines for assertions.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns everything logged so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Contains reports whether any log line contains s.
func (l *LogBuffer) Contains(s string) bool { return strings.Contains(l.String(), s) }
