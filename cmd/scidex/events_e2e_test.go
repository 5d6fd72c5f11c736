package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// liveServer is the scidex process the clients talk to; it changes when the test
// restarts it.
type liveServer struct {
	mu sync.Mutex
	p  *e2e.Proc
}

func (s *liveServer) url() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.URL
}

// gql posts one request; an error means the server could not be reached or
// answered with errors (the clients retry).
func gql(ctx context.Context, url, token, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, r.Errors[0].Message)
	}
	return json.Unmarshal(r.Data, out)
}

// retry runs f until it succeeds or ctx ends: the client side of a server
// that may be down for a moment.
func retry(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// received collects the refs a consumer got, in order, duplicates included.
type received struct {
	mu   sync.Mutex
	refs []string
	seen map[string]bool
}

func (r *received) add(refs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	for _, ref := range refs {
		r.refs = append(r.refs, ref)
		r.seen[ref] = true
	}
}

func (r *received) unique() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// firsts is the sequence with each ref kept at its first occurrence.
func (r *received) firsts() (out []string, dups int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, ref := range r.refs {
		if seen[ref] {
			dups++
			continue
		}
		seen[ref] = true
		out = append(out, ref)
	}
	return out, dups
}

// docs/targets.md R3: 8 writers × 1,000 creates while a durable poller and a websocket
// subscriber consume; the server is SIGKILLed mid-stream and restarted. Every
// committed event reaches both consumers, in the log's order, and each resumes
// from the cursor the server kept for it.
func TestEventsSurviveAKilledServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const writers, perWriter = 8, 1000
	total := writers * perWriter
	dataDir := e2e.DataDir(t)
	srv := &liveServer{p: e2e.Start(t, e2e.Opts{DataDir: dataDir, Args: []string{"--write-rate", "0"}})}
	reader := e2e.Token(t, dataDir, "r3-reader", "contributor")
	tokens := make([]string, writers)
	for i := range tokens {
		tokens[i] = e2e.Token(t, dataDir, fmt.Sprintf("r3-writer-%d", i), "contributor")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	var start struct{ Poll struct{ Cursor string } }
	if err := gql(ctx, srv.url(), reader, `{ poll(limit: 1) { cursor } }`, nil, &start); err != nil {
		t.Fatal(err)
	}

	// midStream closes once a third is written and each consumer has a fifth.
	var (
		written     atomic.Int64
		polled      received
		pushed      received
		midStream   = make(chan struct{})
		midStreamOn sync.Once
	)
	progress := func() {
		if written.Load() >= int64(total)/3 && polled.unique() >= total/5 && pushed.unique() >= total/5 {
			midStreamOn.Do(func() { close(midStream) })
		}
	}

	// Writers: each create carries an idempotency key, so a write whose answer was
	// lost in the crash is retried and answered with the same artifact.
	expected := make([][]string, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range perWriter {
				var out struct {
					R struct{ Typename, Ref string } `json:"r"`
				}
				in := map[string]any{"type": "hypothesis", "title": fmt.Sprintf("R3 writer %d item %d", w, n), "content": map[string]any{},
					"idempotencyKey": fmt.Sprintf("r3-%d-%d", w, n)}
				err := retry(ctx, func() error {
					if err := gql(ctx, srv.url(), tokens[w], `mutation($in: CreateArtifactInput!) { r: createArtifact(input: $in) { typename: __typename ... on WriteSuccess { ref } } }`,
						map[string]any{"in": in}, &out); err != nil {
						return err
					}
					if out.R.Typename != "WriteSuccess" {
						return fmt.Errorf("create: %s", out.R.Typename)
					}
					return nil
				})
				if err != nil {
					t.Errorf("writer %d item %d: %v", w, n, err)
					return
				}
				expected[w] = append(expected[w], out.R.Ref)
				written.Add(1)
				progress()
			}
		}()
	}

	// The durable poller confirms what it processed by passing it as since; when
	// the server goes away it forgets its place and resumes from the server's.
	pollDone := make(chan error, 1)
	go func() {
		since := start.Poll.Cursor
		for polled.unique() < total && ctx.Err() == nil {
			var out struct {
				Poll struct {
					Events []struct{ Ref string }
					Cursor string
				}
			}
			vars := map[string]any{}
			if since != "" {
				vars["s"] = since
			}
			err := gql(ctx, srv.url(), reader, `query($s: Cursor) { poll(consumerId: "r3-poller", types: ["hypothesis.created"], since: $s, limit: 500, autoAdvance: false) { events { ref } cursor } }`, vars, &out)
			if err != nil {
				since = ""
				select {
				case <-ctx.Done():
				case <-time.After(20 * time.Millisecond):
				}
				continue
			}
			for _, e := range out.Poll.Events {
				polled.add(e.Ref)
			}
			progress()
			since = out.Poll.Cursor
		}
		pollDone <- ctx.Err()
	}()

	// The websocket subscriber: a consumerId keeps its cursor on the server; after
	// a disconnect it reconnects with the consumerId alone.
	pushDone := make(chan error, 1)
	go func() {
		first := true
		for pushed.unique() < total && ctx.Err() == nil {
			vars := map[string]any{}
			if first {
				vars["s"] = start.Poll.Cursor
			}
			if err := subscribeUntilClosed(ctx, srv.url(), reader, vars, &pushed, total, progress); err == nil {
				first = false
			}
			if pushed.unique() < total {
				select {
				case <-ctx.Done():
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		pushDone <- ctx.Err()
	}()

	// Kill the server hard mid-stream, then start it again on the same data.
	select {
	case <-midStream:
	case <-ctx.Done():
		t.Fatalf("no progress before the kill: %d written, %d polled, %d pushed", written.Load(), polled.unique(), pushed.unique())
	}
	srv.mu.Lock()
	old := srv.p
	srv.mu.Unlock()
	old.Kill()
	killedAt := written.Load()
	t.Logf("SIGKILL after %d writes; poller had %d, subscriber %d", killedAt, polled.unique(), pushed.unique())
	p2 := e2e.Start(t, e2e.Opts{DataDir: dataDir, Args: []string{"--write-rate", "0"}})
	srv.mu.Lock()
	srv.p = p2
	srv.mu.Unlock()

	wg.Wait()
	if err := <-pollDone; err != nil {
		t.Fatalf("poller: %v (has %d of %d)", err, polled.unique(), total)
	}
	if err := <-pushDone; err != nil {
		t.Fatalf("subscriber: %v (has %d of %d)", err, pushed.unique(), total)
	}

	// The log's order, read once more from the start.
	var canon []string
	since := start.Poll.Cursor
	for {
		var out struct {
			Poll struct {
				Events  []struct{ Ref string }
				Cursor  string
				HasMore bool
			}
		}
		if err := gql(ctx, srv.url(), reader, `query($s: Cursor) { poll(types: ["hypothesis.created"], since: $s, limit: 1000) { events { ref } cursor hasMore } }`,
			map[string]any{"s": since}, &out); err != nil {
			t.Fatal(err)
		}
		for _, e := range out.Poll.Events {
			canon = append(canon, e.Ref)
		}
		since = out.Poll.Cursor
		if !out.Poll.HasMore {
			break
		}
	}
	want := map[string]bool{}
	for _, refs := range expected {
		for _, r := range refs {
			want[r] = true
		}
	}
	if len(want) != total || len(canon) != total {
		t.Fatalf("%d distinct artifacts written, %d events in the log; want %d of each", len(want), len(canon), total)
	}
	for _, r := range canon {
		if !want[r] {
			t.Fatalf("the log holds an event for %s, which no writer wrote", r)
		}
	}
	for name, r := range map[string]*received{"poller": &polled, "subscriber": &pushed} {
		got, dups := r.firsts()
		t.Logf("%s: %d events, %d delivered twice", name, len(got), dups)
		if len(got) != total {
			t.Errorf("%s received %d distinct events, want %d", name, len(got), total)
			continue
		}
		for i := range got {
			if got[i] != canon[i] {
				t.Errorf("%s: event %d is %s, the log has %s", name, i, got[i], canon[i])
				break
			}
		}
	}
}

// subscribeUntilClosed runs one websocket subscription until the connection
// ends or every event has arrived. It returns nil once the subscription was
// acknowledged.
func subscribeUntilClosed(ctx context.Context, url, token string, vars map[string]any, into *received, total int, progress func()) error {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
	c, _, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(url, "http")+"/graphql", nil)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	if err := c.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}}); err != nil {
		return err
	}
	var ack struct{ Type string }
	if err := c.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		return fmt.Errorf("no ack: %v %s", err, ack.Type)
	}
	q := `subscription($s: Cursor) { events(types: ["hypothesis.created"], consumerId: "r3-subscriber", since: $s) { ref } }`
	if err := c.WriteJSON(map[string]any{"type": "subscribe", "id": "1", "payload": map[string]any{"query": q, "variables": vars}}); err != nil {
		return err
	}
	for into.unique() < total {
		var m struct {
			Type    string
			Payload struct {
				Data struct{ Events struct{ Ref string } }
			}
		}
		if err := c.ReadJSON(&m); err != nil {
			return nil
		}
		switch m.Type {
		case "next":
			into.add(m.Payload.Data.Events.Ref)
			progress()
		case "ping":
			_ = c.WriteJSON(map[string]any{"type": "pong"})
		case "error", "complete":
			return errors.New("subscription ended: " + m.Type)
		}
	}
	return nil
}

// docs/targets.md R10: two server processes on one database. An event written through
// either reaches a subscriber on the other: each process has its own LISTEN.
func TestTwoServersShareEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := "r10-secret-0123456789abcdef-0123456789abcdef"
	env := []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + secret}
	a := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env})
	b := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env})
	tok, err := auth.Mint(auth.MintOpts{Secret: []byte(secret), Issuer: "scidex", Audience: "scidex", Subject: "ada",
		Kind: auth.KindHuman, Permissions: []auth.Permission{auth.PermContributor}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, c := range []struct {
		name      string
		sub, writ *e2e.Proc
	}{{"a to b", b, a}, {"b to a", a, b}} {
		var tail struct{ Poll struct{ Cursor string } }
		if err := gql(ctx, c.sub.URL, tok, `{ poll(limit: 1) { cursor } }`, nil, &tail); err != nil {
			t.Fatal(err)
		}
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
		ws, _, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(c.sub.URL, "http")+"/graphql", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		_ = ws.SetReadDeadline(time.Now().Add(time.Minute)) // a failure bound
		must := func(err error) {
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		must(ws.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + tok}}))
		var m struct {
			Type    string
			Payload struct {
				Data struct{ Events struct{ Ref, Type string } }
			}
		}
		must(ws.ReadJSON(&m))
		must(ws.WriteJSON(map[string]any{"type": "subscribe", "id": "1", "payload": map[string]any{
			"query":     `subscription($s: Cursor) { events(types: ["hypothesis.*"], since: $s) { ref type } }`,
			"variables": map[string]any{"s": tail.Poll.Cursor}}}))
		var out struct{ R struct{ Ref string } }
		must(gql(ctx, c.writ.URL, tok, `mutation { r: createArtifact(input: {type: "hypothesis", title: "written elsewhere", content: {}}) { ... on WriteSuccess { ref } } }`, nil, &out))
		for m.Type != "next" {
			must(ws.ReadJSON(&m))
		}
		if m.Payload.Data.Events.Ref != out.R.Ref || m.Payload.Data.Events.Type != "hypothesis.created" {
			t.Errorf("%s: got %+v, want hypothesis.created of %s", c.name, m.Payload.Data.Events, out.R.Ref)
		}
	}
}
