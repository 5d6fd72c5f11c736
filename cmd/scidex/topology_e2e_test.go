package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// R10: two `scidex serve` replicas on one database, behind a real load
// balancer (haproxy: HTTP and websockets, round-robin, health-checked) and a
// real connection pooler (PgBouncer in transaction mode). Every query of both
// replicas goes through PgBouncer (DATABASE_URL); only their LISTEN
// connections, the event hub's and the job queue's, go straight to
// PostgreSQL (--listen-url), since a transaction pooler loses a LISTEN.
//
//   - replicas starting at once through the pooler migrate without leaving
//     the migration lock held;
//   - an async tool call queued through replica a (which works no jobs) is
//     worked by replica b, and a websocket subscriber on a sees its events;
//   - an event written through either replica reaches websocket subscribers
//     on the other and on the load balancer;
//   - killing a replica (SIGKILL) mid-stream loses no acknowledged write and
//     no event for a durable consumer polling through the load balancer.
func TestTopology(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary, haproxy and pgbouncer")
	}
	direct := dbtest.URL(t)
	pool := e2e.StartPgBouncer(t, e2e.PgBouncerOpts{Upstream: direct})
	addrA := "127.0.0.1:" + strconv.Itoa(e2e.FreePort(t))
	addrB := "127.0.0.1:" + strconv.Itoa(e2e.FreePort(t))
	lb := e2e.StartHAProxy(t, e2e.Backend{Name: "a", Addr: addrA}, e2e.Backend{Name: "b", Addr: addrB})
	secret := "r10-topology-secret-0123456789abcdef-012345"
	env := []string{"DATABASE_URL=" + pool.URL, "SCIDEX_JWT_SECRET=" + secret}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a failure bound
	defer cancel()
	db, err := pgx.Connect(ctx, direct) // the test's own look at the database, bypassing the pooler
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	before := pool.Stats(t)

	t.Run("concurrent starts leave no migration lock", func(t *testing.T) {
		concurrentMigrations(ctx, t, env, db)
	})

	// The replicas' direct connections say so, for the test to count them.
	listenURL := withParam(direct, "application_name", directApp)
	start := func(addr string, args ...string) *e2e.Proc {
		args = append([]string{"--addr", addr, "--listen-url", listenURL}, args...)
		return e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env, Args: args})
	}
	var replicas []*e2e.Proc
	t.Cleanup(func() {
		if t.Failed() {
			for i, p := range replicas {
				t.Logf("replica %c logged:\n%s", 'a'+i, p.Log())
			}
			t.Logf("pgbouncer logged:\n%s\nhaproxy logged:\n%s", pool.Log(), lb.Log())
		}
	})
	a := start(addrA, "--tool-workers", "0")
	replicas = append(replicas, a)
	lb.WaitServing(t, time.Minute, "a")
	admin := mint(t, secret, "ada", auth.PermAdmin)
	alice := mint(t, secret, "alice", auth.PermContributor)

	var b *e2e.Proc
	if !t.Run("a call queued by one replica is worked by the other", func(t *testing.T) {
		b = queuedElsewhere(ctx, t, lb, a, db, admin, alice, func() *e2e.Proc {
			replicas = append(replicas, start(addrB))
			return replicas[1]
		})
	}) || b == nil {
		return
	}
	lb.WaitServing(t, time.Minute, "a", "b")

	t.Run("events cross replicas", func(t *testing.T) {
		eventsCross(ctx, t, lb, map[string]*e2e.Proc{"a": a, "b": b}, alice)
	})

	var writes int
	t.Run("killing a replica loses nothing acknowledged", func(t *testing.T) {
		writes = killReplica(ctx, t, lb, b, db, alice)
	})

	// Each acknowledged create was at least one transaction through PgBouncer.
	after := pool.Stats(t)
	stat := func(s map[string]string, k string) int { n, _ := strconv.Atoi(s[k]); return n }
	xacts := stat(after, "total_xact_count") - stat(before, "total_xact_count")
	t.Logf("PgBouncer carried %d transactions, %d queries of the two replicas",
		xacts, stat(after, "total_query_count")-stat(before, "total_query_count"))
	if xacts < writes {
		t.Errorf("%d transactions went through PgBouncer, fewer than the %d creates acknowledged", xacts, writes)
	}
}

// directApp is the application_name of the replicas' direct connections.
const directApp = "r10-direct"

// withParam adds a connection parameter to a URL or keyword/value
// connection string.
func withParam(conn, key, value string) string {
	if strings.HasPrefix(conn, "postgres://") || strings.HasPrefix(conn, "postgresql://") {
		sep := "?"
		if strings.Contains(conn, "?") {
			sep = "&"
		}
		return conn + sep + key + "=" + value
	}
	return conn + " " + key + "=" + value
}

// concurrentMigrations runs `scidex migrate` three times at once through the
// pooler: each must finish, and none may leave the migration lock held by a
// pooled server connection (where the next start would wait for it forever).
func concurrentMigrations(ctx context.Context, t *testing.T, env []string, db *pgx.Conn) {
	var wg sync.WaitGroup
	errs := make([]error, 3)
	outs := make([][]byte, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			cmd := e2e.CommandContext(cctx, t, "migrate", "--data-dir", e2e.DataDir(t))
			cmd.Env = append(cmd.Env, env...)
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("scidex migrate %d through PgBouncer: %v\n%s", i, err, outs[i])
		}
	}
	var held int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Errorf("%d advisory locks are still held after the migrations ended", held)
	}
}

// queuedElsewhere registers and activates checksum.sha256 through the load
// balancer, queues a call through replica a, which works no jobs, and only
// then starts replica b (returned): b works the call, a websocket subscriber
// on a sees it queued, started and completed, and the call names b's worker. Then it measures, without asserting, how fast b picks up calls
// queued through a.
func queuedElsewhere(ctx context.Context, t *testing.T, lb *e2e.HAProxy, a *e2e.Proc, db *pgx.Conn, admin, alice string, startB func() *e2e.Proc) *e2e.Proc {
	reg := e2e.Command(t, "tool", "register", "../../tools/checksum/", "--url", lb.URL+"/graphql")
	reg.Env = append(reg.Env, "SCIDEX_TOKEN="+admin)
	if out, err := reg.CombinedOutput(); err != nil {
		t.Fatalf("scidex tool register: %v\n%s", err, out)
	}
	var cur struct{ Artifact struct{ ContentHash string } }
	must(t, gql(ctx, lb.URL, admin, `{ artifact(ref: "tool:checksum.sha256") { contentHash } }`, nil, &cur))
	must(t, gql(ctx, lb.URL, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:checksum.sha256", baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"h": cur.Artifact.ContentHash}, &map[string]any{}))

	invoke := func(text string) string {
		var inv struct {
			InvokeTool struct{ ArtifactID, Status string }
		}
		must(t, gql(ctx, a.URL, alice, `mutation($t: String!) { invokeTool(input: {name: "checksum.sha256", args: {text: $t}, async: true}) { ... on ToolCall { artifactId status } } }`,
			map[string]any{"t": text}, &inv))
		if inv.InvokeTool.Status != "QUEUED" {
			t.Fatalf("async call is %q, want QUEUED", inv.InvokeTool.Status)
		}
		return inv.InvokeTool.ArtifactID
	}
	// The subscriber on a follows the log from before the call was queued
	// (since), so it cannot miss an event however fast b is.
	var tail struct{ Poll struct{ Cursor string } }
	must(t, gql(ctx, a.URL, alice, `{ poll(limit: 1) { cursor } }`, nil, &tail))
	id := invoke("abc")
	ws, _ := subscribe(ctx, t, a.URL, alice, `subscription($s: Cursor) { events(types: ["tool_call.*"], since: $s) { ref type } }`, map[string]any{"s": tail.Poll.Cursor})
	defer ws.Close()
	type call struct {
		Status, QueuedAt, StartedAt string
		Result                      map[string]any
		Content                     map[string]any
	}
	get := func(id string) call {
		var got struct{ ToolCall call }
		must(t, gql(ctx, a.URL, alice, `query($id: ID!) { toolCall(id: $id) { status queuedAt startedAt result content } }`, map[string]any{"id": id}, &got))
		return got.ToolCall
	}
	if s := get(id).Status; s != "QUEUED" {
		t.Fatalf("before replica b started, the call is %s: something else works the queue", s)
	}
	// Every process beats, a (which works no jobs) included: the processes
	// alive before b are not b.
	beating := func() []string {
		rows, err := db.Query(ctx, "SELECT id FROM tool_workers ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	beforeB := beating()

	b := startB()
	var types []string
	for len(types) == 0 || types[len(types)-1] != "tool_call.completed" {
		var m struct {
			Type    string
			Payload struct {
				Data struct{ Events struct{ Ref, Type string } }
			}
		}
		if err := ws.ReadJSON(&m); err != nil {
			t.Fatalf("the subscriber on a after %v: %v\nb's log:\n%s", types, err, b.Log())
		}
		e := m.Payload.Data.Events
		if m.Type != "next" || !strings.HasPrefix(e.Ref, "tool_call:"+id+"@") {
			continue
		}
		types = append(types, e.Type)
		if e.Type == "tool_call.failed" || e.Type == "tool_call.cancelled" {
			t.Fatalf("the call ended %s (events %v)\nb's log:\n%s", e.Type, types, b.Log())
		}
	}
	if want := []string{"tool_call.queued", "tool_call.started", "tool_call.completed"}; fmt.Sprint(types) != fmt.Sprint(want) {
		t.Errorf("the subscriber on a saw %v, want %v", types, want)
	}
	got := get(id)
	if got.Status != "SUCCEEDED" || got.Result["sha256"] != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" || fmt.Sprint(got.Result["bytes"]) != "3" {
		t.Fatalf("the call ended %s with %v", got.Status, got.Result)
	}
	workers := beating()
	worker, _ := got.Content["worker"].(string)
	if len(beforeB) != 1 || len(workers) != 2 || slices.Contains(beforeB, worker) || !slices.Contains(workers, worker) {
		t.Errorf("the call was worked by %q; before b the processes were %v (replica a), after %v", worker, beforeB, workers)
	}

	// Only LISTEN bypasses the pooler: a's event hub, b's, and b's job queue
	// (River listens for new jobs; a, working none, does not).
	var direct int
	dctx, dcancel := context.WithTimeout(ctx, 30*time.Second)
	defer dcancel()
	if err := pollFor(dctx, func() bool {
		must(t, db.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1", directApp).Scan(&direct))
		return direct == 3
	}); err != nil {
		t.Fatalf("%d direct connections to PostgreSQL, want 3 (two event hubs, one job queue)", direct)
	}

	// Pickup of calls queued through a while b is idle: queued → running.
	var pickups []time.Duration
	for i := range 5 {
		id := invoke("pickup " + strconv.Itoa(i))
		var c call
		if err := pollFor(ctx, func() bool { c = get(id); return c.Status == "SUCCEEDED" || c.Status == "FAILED" }); err != nil {
			t.Fatalf("call %s never finished (%s)", id, c.Status)
		}
		q, err1 := time.Parse(time.RFC3339Nano, c.QueuedAt)
		s, err2 := time.Parse(time.RFC3339Nano, c.StartedAt)
		if err1 != nil || err2 != nil {
			t.Fatalf("queuedAt %q startedAt %q", c.QueuedAt, c.StartedAt)
		}
		pickups = append(pickups, s.Sub(q))
	}
	sort.Slice(pickups, func(i, j int) bool { return pickups[i] < pickups[j] })
	t.Logf("pickup on b of calls queued through a (queued → running), sorted: %v", pickups)
	return b
}

// eventsCross opens a websocket subscriber on each replica and one through
// the load balancer, then writes through the load balancer until both
// replicas have taken a write: every subscriber sees every write, so each
// write reached the replica that did not take it.
func eventsCross(ctx context.Context, t *testing.T, lb *e2e.HAProxy, replicas map[string]*e2e.Proc, tok string) {
	var tail struct{ Poll struct{ Cursor string } }
	must(t, gql(ctx, lb.URL, tok, `{ poll(limit: 1) { cursor } }`, nil, &tail))
	const sub = `subscription($s: Cursor) { events(types: ["hypothesis.*"], since: $s) { ref type } }`
	vars := map[string]any{"s": tail.Poll.Cursor}
	subs := map[string]*websocket.Conn{}
	for name, p := range replicas {
		subs[name], _ = subscribe(ctx, t, p.URL, tok, sub, vars)
	}
	via, servedBy := subscribe(ctx, t, lb.URL, tok, sub, vars)
	subs["load balancer ("+servedBy+")"] = via
	for _, ws := range subs {
		defer ws.Close()
	}
	writtenBy := map[string]string{} // ref → replica that took the write
	taken := map[string]bool{}
	for i := 0; len(taken) < len(replicas); i++ {
		if i == 10 {
			t.Fatalf("ten writes through the load balancer all went to %v", taken)
		}
		var out struct{ R struct{ Ref string } }
		by, err := gqlVia(ctx, lb.URL, tok, `mutation($t: String!) { r: createArtifact(input: {type: "hypothesis", title: $t, content: {}}) { ... on WriteSuccess { ref } } }`,
			map[string]any{"t": "crossing " + strconv.Itoa(i)}, &out)
		must(t, err)
		if replicas[by] == nil || out.R.Ref == "" {
			t.Fatalf("write %d answered by %q: %+v", i, by, out)
		}
		writtenBy[out.R.Ref], taken[by] = by, true
	}
	for name, ws := range subs {
		seen := map[string]bool{}
		for len(seen) < len(writtenBy) {
			var m struct {
				Type    string
				Payload struct {
					Data struct{ Events struct{ Ref, Type string } }
				}
			}
			if err := ws.ReadJSON(&m); err != nil {
				t.Fatalf("subscriber on %s saw %d of %d writes: %v", name, len(seen), len(writtenBy), err)
			}
			if m.Type != "next" {
				continue
			}
			e := m.Payload.Data.Events
			if writtenBy[e.Ref] == "" || e.Type != "hypothesis.created" {
				t.Fatalf("subscriber on %s got %+v, not one of the writes %v", name, e, writtenBy)
			}
			if seen[e.Ref] {
				t.Fatalf("subscriber on %s got %s twice", name, e.Ref)
			}
			seen[e.Ref] = true
		}
	}
	t.Logf("%d writes through the load balancer (taken by %v) reached subscribers on %d replicas and the load balancer", len(writtenBy), taken, len(replicas))
}

// killReplica runs four writers creating artifacts through the load balancer,
// each create retried with its idempotency key until acknowledged, and a
// durable consumer polling through the load balancer at least once (it
// acknowledges a page by passing its cursor as since on the next poll).
// Replica b is killed (SIGKILL) mid-stream, and the consumer then loses its
// place (its last, unacknowledged page is dropped) and resumes from the
// cursor the server keeps for it. Every acknowledged create must be in the
// database exactly once and reach the consumer exactly once, nothing else.
// It returns how many creates were acknowledged.
func killReplica(ctx context.Context, t *testing.T, lb *e2e.HAProxy, b *e2e.Proc, db *pgx.Conn, tok string) int {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute) // a failure bound: a lost event never comes, however long; a loaded machine needs more than a minute
	defer cancel()
	const (
		consumer     = "r10-topology"
		killAfter    = 40 // acknowledged creates before the kill
		writeAfter   = 40 // and after it
		writers      = 4
		titlePrefix  = "kill-stream "
		pollPageSize = 25
	)
	type page struct {
		Poll struct {
			Events []struct{ ID, Ref, Type string }
			Cursor string
		}
	}
	poll := func(since string) (page, error) {
		var p page
		q := `query($c: String!, $s: Cursor, $n: Int!) { poll(consumerId: $c, types: ["hypothesis.created"], since: $s, limit: $n, autoAdvance: false) { events { id ref type } cursor } }`
		vars := map[string]any{"c": consumer, "n": pollPageSize}
		if since != "" {
			vars["s"] = since
		}
		err := gql(ctx, lb.URL, tok, q, vars, &p)
		return p, err
	}
	// A new consumer begins at the end of the log.
	first, err := poll("")
	must(t, err)
	if len(first.Poll.Events) != 0 || first.Poll.Cursor == "" {
		t.Fatalf("a new consumer's first page: %+v", first.Poll)
	}

	var (
		mu       sync.Mutex
		acked    = map[string]string{} // ref → idempotency key
		ackCount atomic.Int64
		failures atomic.Int64 // requests that failed and were retried
		stop     = make(chan struct{})
		killed   = make(chan struct{})
		wg       sync.WaitGroup
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("r10-kill-%d-%d", w, i)
				for {
					var out struct {
						R struct {
							Typename string `json:"__typename"`
							Ref      string
						}
					}
					err := gql(ctx, lb.URL, tok, `mutation($t: String!, $k: String!) { r: createArtifact(input: {type: "hypothesis", title: $t, content: {}, idempotencyKey: $k}) { __typename ... on WriteSuccess { ref } } }`,
						map[string]any{"t": titlePrefix + key, "k": key}, &out)
					if err == nil && out.R.Ref != "" {
						mu.Lock()
						acked[out.R.Ref] = key
						mu.Unlock()
						ackCount.Add(1)
						break
					}
					if ctx.Err() != nil {
						return
					}
					failures.Add(1) // the replica died under it, or it was refused: the same key again
				}
			}
		}()
	}

	// The consumer: pending is the page it holds, not yet acknowledged; the
	// next poll passes its cursor as since, which acknowledges it.
	var (
		committed = map[string]string{} // ref → event id, acknowledged to the server
		pending   page
		next      = first.Poll.Cursor
		resumed   bool
		stopped   bool
	)
	allSeen := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for ref := range acked {
			if committed[ref] == "" {
				return false
			}
		}
		return true
	}
	for {
		if !isClosed(killed) && ackCount.Load() >= killAfter {
			_ = b.Cmd.Process.Kill() // SIGKILL, with writes and polls in flight
			_ = b.Wait(t, 30*time.Second)
			close(killed)
		}
		if !stopped && isClosed(killed) && ackCount.Load() >= killAfter+writeAfter {
			close(stop)
			wg.Wait()
			stopped = true
		}
		// Once the replica is gone, the consumer loses its place once, while
		// it holds a page: it drops the page and polls without since,
		// resuming from the cursor the server keeps (before that page, which
		// was never acknowledged), so it must get the page again.
		resume := isClosed(killed) && !resumed && len(pending.Poll.Events) > 0
		since := next
		if resume {
			since, pending = "", page{}
		}
		p, err := poll(since)
		if err != nil {
			failures.Add(1) // the replica died under it: the same poll again
			if ctx.Err() != nil {
				t.Fatalf("the consumer could not poll: %v", err)
			}
			continue
		}
		if resume {
			resumed = true
			if p.Poll.Cursor == "" {
				t.Fatal("a resumed poll returned no cursor")
			}
		}
		for _, e := range pending.Poll.Events {
			if prev, dup := committed[e.Ref]; dup {
				t.Fatalf("the consumer got the create of %s twice (events %s and %s)", e.Ref, prev, e.ID)
			}
			committed[e.Ref] = e.ID
		}
		pending = p
		if p.Poll.Cursor != "" {
			next = p.Poll.Cursor
		}
		if len(p.Poll.Events) > 0 {
			continue
		}
		if stopped && allSeen() {
			break
		}
		select { // caught up: poll again shortly
		case <-ctx.Done():
			mu.Lock()
			n := len(acked)
			mu.Unlock()
			t.Fatalf("the consumer got %d of %d acknowledged creates", len(committed), n)
		case <-time.After(20 * time.Millisecond):
		}
	}

	if !resumed {
		t.Error("the consumer never held a page after the kill, so it never resumed from its stored cursor")
	}
	mu.Lock()
	defer mu.Unlock()
	for ref := range committed {
		if acked[ref] == "" {
			t.Errorf("the consumer got a create nobody was told of: %s", ref)
		}
	}
	rows, err := db.Query(ctx, "SELECT title, count(*) FROM artifacts WHERE type = 'hypothesis' AND title LIKE $1 GROUP BY title", titlePrefix+"%")
	must(t, err)
	inDB := map[string]int{}
	for rows.Next() {
		var title string
		var n int
		must(t, rows.Scan(&title, &n))
		inDB[strings.TrimPrefix(title, titlePrefix)] = n
	}
	must(t, rows.Err())
	for ref, key := range acked {
		if inDB[key] != 1 {
			t.Errorf("acknowledged create %s (%s) is in the database %d times", key, ref, inDB[key])
		}
	}
	if len(inDB) != len(acked) {
		t.Errorf("%d distinct creates in the database, %d acknowledged", len(inDB), len(acked))
	}
	t.Logf("%d creates acknowledged (%d before the kill), %d requests retried across it; the consumer got each once, resuming from its stored cursor",
		len(acked), killAfter, failures.Load())
	return len(acked)
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// subscribe opens a graphql-transport-ws websocket, subscribes with id "1"
// and returns the connection and which backend the load balancer tunnelled
// it to (empty when not through one).
func subscribe(ctx context.Context, t *testing.T, url, tok, query string, vars map[string]any) (*websocket.Conn, string) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	ws, resp, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(url, "http")+"/graphql", nil)
	if err != nil {
		t.Fatalf("websocket to %s: %v", url, err)
	}
	_ = ws.SetReadDeadline(time.Now().Add(time.Minute)) // a failure bound
	must(t, ws.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + tok}}))
	var ack struct{ Type string }
	must(t, ws.ReadJSON(&ack))
	if ack.Type != "connection_ack" {
		t.Fatalf("websocket to %s: got %q, want connection_ack", url, ack.Type)
	}
	must(t, ws.WriteJSON(map[string]any{"type": "subscribe", "id": "1", "payload": map[string]any{"query": query, "variables": vars}}))
	return ws, resp.Header.Get(e2e.ServedBy)
}

// gqlVia is gql that also says which backend the load balancer sent the
// request to.
func gqlVia(ctx context.Context, url, token, query string, vars map[string]any, out any) (string, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/graphql", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return "", fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	if len(r.Errors) > 0 {
		return "", fmt.Errorf("HTTP %d: %s", resp.StatusCode, r.Errors[0].Message)
	}
	return resp.Header.Get(e2e.ServedBy), json.Unmarshal(r.Data, out)
}

// pollFor checks cond every 20 ms until it holds or ctx ends.
func pollFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
