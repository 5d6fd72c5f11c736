package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/e2e"
)

// SIGTERM with subscriptions open and a write in flight, on the embedded
// default (internal/app documents the order): the write completes and is
// answered, the websocket gets a close frame (1001), an SSE stream its last
// event (the server is shutting down) and its end, an MCP resource
// subscription's listen stream (a request that would otherwise never end)
// is closed so the requests drain, the background work stops before the pool
// closes, and the embedded cluster stops last.
func TestShutdownDrainsInOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dataDir := e2e.DataDir(t)
	p := e2e.Start(t, e2e.Opts{DataDir: dataDir})
	tok := e2e.Token(t, dataDir, "ada", "contributor")
	data, errs := p.GraphQL(t, tok, `mutation { createArtifact(input: {type: "hypothesis", title: "held", content: {}}) {
	  ... on WriteSuccess { ref contentHash artifact { id } } } }`, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	created := data["createArtifact"].(map[string]any)
	id := created["artifact"].(map[string]any)["id"].(string)

	ws := apitest.DialURL(t, p.URL, nil)
	if err := ws.Init(map[string]any{"Authorization": "Bearer " + tok}); err != nil {
		t.Fatal(err)
	}
	ws.Subscribe("s", `subscription($r: Ref!) { artifactEvents(ref: $r) { type } }`, map[string]any{"r": id})
	listenMCP(t, p.URL, tok, "scidex://"+strings.Replace(id, ":", "/", 1))
	stream, resp := apitest.StartSSE(t, apitest.SSERequestURL(t, p.URL, http.MethodPost, tok,
		`subscription($r: Ref!) { artifactEvents(ref: $r) { type } }`, map[string]any{"r": id}))
	if stream == nil {
		t.Fatalf("no SSE stream (%d): %s", resp.Status, resp.Raw)
	}

	// Hold the artifact's row, so the update below is in flight (waiting on the
	// lock) when SIGTERM arrives.
	ctx := context.Background()
	db, err := pgx.Connect(ctx, "host="+filepath.Join(dataDir, "postgres", "run")+" port=5432 user=scidex dbname=scidex sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	lock, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(ctx, "SELECT 1 FROM artifacts WHERE type = 'hypothesis' AND id = $1 FOR UPDATE", strings.TrimPrefix(id, "hypothesis:")); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		body   []byte
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		body, _ := json.Marshal(map[string]any{"query": `mutation($r: Ref!, $h: String!) { updateArtifact(input: {ref: $r, baseContentHash: $h, title: "held, then written"}) { __typename } }`,
			"variables": map[string]any{"r": id, "h": created["contentHash"]}})
		req, _ := http.NewRequest(http.MethodPost, p.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- answer{status: resp.StatusCode, body: b, err: err}
	}()
	waitFor(t, "the update to wait on the row lock", func() bool {
		var n int
		_ = db.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()").Scan(&n)
		return n > 0
	})

	pm := postmasterPID(t, filepath.Join(dataDir, "postgres", "data", "postmaster.pid"))
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The socket is told at once, while the write still waits.
	if code, reason := ws.WaitClosed(); code != 1001 || !strings.Contains(reason, "shutting down") {
		t.Errorf("websocket closed with %d %q, want 1001", code, reason)
	}
	// So is the SSE stream: a last next with the reason, then complete.
	if rest := stream.Rest(); len(rest) != 2 || rest[1].Event != "complete" ||
		!strings.Contains(string(rest[0].Data), `"reason":"SHUTTING_DOWN"`) {
		t.Errorf("the SSE stream ended with %+v", rest)
	}
	select {
	case a := <-answered:
		t.Fatalf("the write was answered before its lock was released: %d %s %v", a.status, a.body, a.err)
	default:
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	_ = db.Close(ctx) // the cluster's shutdown waits for no client of ours
	a := <-answered
	if a.err != nil || a.status != http.StatusOK || !bytes.Contains(a.body, []byte(`"WriteSuccess"`)) {
		t.Errorf("the write in flight: %d %s %v", a.status, a.body, a.err)
	}
	if err := p.Wait(t, 60*time.Second); err != nil {
		t.Fatalf("scidex exited with %v\n%s", err, p.Log())
	}
	if err := syscall.Kill(pm, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("postmaster %d still running after scidex exited", pm)
	}
	log := p.Log()
	at := -1
	for _, line := range []string{"shutting down", "websockets closed", "event streams closed", "requests drained", "background work stopped",
		"database pool closed", "embedded PostgreSQL stopped"} {
		i := strings.Index(log, line)
		if i < 0 || i < at {
			t.Errorf("%q is missing or out of order in the log:\n%s", line, log)
			break
		}
		at = i
	}
	if _, err := os.Stat(filepath.Join(dataDir, "postgres", "data", "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("postmaster.pid still there: %v", err)
	}
}

// listenMCP subscribes to an MCP resource over /mcp and returns once the
// server acknowledged it: a subscriptions/listen request is open.
func listenMCP(t *testing.T, base, token, uri string) {
	t.Helper()
	acked := make(chan struct{}, 1)
	c := sdk.NewClient(&sdk.Implementation{Name: "shutdown-test", Version: "1"}, nil)
	c.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				select { // never block the client's receive loop
				case acked <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	hc := &http.Client{Transport: bearerTransport{token}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-acked:
	case <-ctx.Done():
		t.Fatal("the MCP subscription was not acknowledged")
	}
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
