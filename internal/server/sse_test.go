package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/server"
)

// sseEvent decodes the next event of a stream: a next with data and no errors.
func sseEvent(t *testing.T, st *apitest.SSE, field string) gotEvent {
	t.Helper()
	r := st.Next().Result(t)
	if len(r.Errors) > 0 {
		t.Fatalf("sse: want data, got %s", r.Raw)
	}
	var data map[string]gotEvent
	if err := json.Unmarshal(r.Data, &data); err != nil {
		t.Fatalf("sse data: %v: %s", err, r.Data)
	}
	return data[field]
}

// sseEnded reads the rest of a stream and checks that it is what ends every
// stream the server ends: one next with one error, then complete, then the
// end of the response. It returns the error.
func sseEnded(t *testing.T, st *apitest.SSE) apitest.GQLError {
	t.Helper()
	rest := st.Rest()
	if len(rest) != 2 || rest[1].Event != "complete" {
		t.Fatalf("sse: the stream ended with %+v, want a next with an error and complete", rest)
	}
	r := rest[0].Result(t)
	if len(r.Errors) != 1 || r.Data != nil {
		t.Fatalf("sse: the last next is %s, want one error and no data", r.Raw)
	}
	return r.Errors[0]
}

// The three subscriptions over SSE, each its own POST with Accept:
// text/event-stream, deliver what is written over HTTP.
func TestSSESubscriptionsDeliverEvents(t *testing.T) {
	env := provEnv(t, apitest.Opts{App: func(c *app.Config) { c.Queue.Workers = 0 }})
	ada := apitest.Contributor(t, "ada")

	since := tail(t, env, ada)
	st := env.SSE(t, ada, `subscription($s: Cursor) { events(types: ["hypothesis.*"], since: $s) { `+eventFields+` artifact { id title } } }`,
		map[string]any{"s": since})
	if ct := st.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if st.Header.Get("X-Request-Id") == "" || st.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("headers %v", st.Header)
	}
	h := createH(t, env, ada, map[string]any{"title": "TREM2 over SSE", "content": map[string]any{}})
	if e := sseEvent(t, st, "events"); e.Type != "hypothesis.created" || e.Ref == nil || *e.Ref != h.Ref || e.Actor.ID != "ada" ||
		e.Artifact == nil || e.Artifact.Title != "TREM2 over SSE" || e.Cursor == "" {
		t.Fatalf("events: %+v", e)
	}
	st.Close()

	// artifactEvents has no since: wait until the hub counts the subscriber.
	other := createH(t, env, ada, map[string]any{"title": "other", "content": map[string]any{}})
	base := env.Hub.Subscribers()
	st = env.SSE(t, ada, `subscription($r: Ref!) { artifactEvents(ref: $r) { `+eventFields+` } }`, map[string]any{"r": h.Ref})
	waitFor(t, func() bool { return env.Hub.Subscribers() == base+1 })
	update(t, env, ada, map[string]any{"ref": other.Ref, "baseContentHash": other.ContentHash, "title": "other 2"})
	up := update(t, env, ada, map[string]any{"ref": h.Ref, "baseContentHash": h.ContentHash, "title": "TREM2 over SSE, 2"})
	if e := sseEvent(t, st, "artifactEvents"); e.Type != "hypothesis.updated" || e.Ref == nil || *e.Ref != up.Ref {
		t.Fatalf("artifactEvents: %+v", e)
	}
	st.Close()
	waitFor(t, func() bool { return env.Hub.Subscribers() == base })

	// toolCallUpdates: a queued call (no worker runs it), cancelled by its caller.
	var inv struct {
		InvokeTool struct{ ArtifactID, Status string }
	}
	env.OK(t, ada, `mutation { invokeTool(input: {name: "checksum.sha256", args: {text: "abc"}, async: true}) { ... on ToolCall { artifactId status } } }`, nil, &inv)
	id := inv.InvokeTool.ArtifactID
	st = env.SSE(t, ada, `subscription($id: ID!) { toolCallUpdates(id: $id) { type toolCall { id status } } }`, map[string]any{"id": id})
	waitFor(t, func() bool { return env.Hub.Subscribers() == base+1 })
	var cancelled struct {
		CancelToolCall struct{ Typename string } `json:"cancelToolCall"`
	}
	env.OK(t, ada, `mutation($id: ID!) { cancelToolCall(input: {id: $id}) { typename: __typename } }`, map[string]any{"id": id}, &cancelled)
	r := st.Next().Result(t)
	var tc struct {
		ToolCallUpdates struct {
			Type     string
			ToolCall struct{ ID, Status string }
		}
	}
	if err := json.Unmarshal(r.Data, &tc); err != nil || len(r.Errors) > 0 || tc.ToolCallUpdates.Type != "tool_call.cancelled" ||
		tc.ToolCallUpdates.ToolCall.ID != "tool_call:"+id || tc.ToolCallUpdates.ToolCall.Status != "CANCELLED" {
		t.Fatalf("toolCallUpdates after cancelToolCall (%s): %s", cancelled.CancelToolCall.Typename, r.Raw)
	}
}

// A query, a mutation and a document that does not validate, sent with
// Accept: text/event-stream: one next, then complete, then the end (the
// protocol's way for every operation); GET runs queries and subscriptions,
// and refuses mutations as GET without SSE does.
func TestSSEQueriesAndMutations(t *testing.T) {
	env := apitest.New(t)
	ada := apitest.Contributor(t, "ada")
	h := createH(t, env, ada, map[string]any{"title": "read over SSE", "content": map[string]any{}})
	one := func(name string, req *http.Request) apitest.Response {
		t.Helper()
		st, resp := apitest.StartSSE(t, req)
		if st == nil {
			t.Fatalf("%s: no stream (%d): %s", name, resp.Status, resp.Raw)
		}
		rest := st.Rest()
		if len(rest) != 2 || rest[1].Event != "complete" {
			t.Fatalf("%s: %+v, want next and complete", name, rest)
		}
		return rest[0].Result(t)
	}
	q := `query($r: Ref!) { artifact(ref: $r) { title } }`
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		r := one(method+" query", env.SSERequest(t, method, ada, q, map[string]any{"r": h.Ref}))
		if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"title":"read over SSE"`) {
			t.Errorf("%s query: %s", method, r.Raw)
		}
	}
	r := one("mutation", env.SSERequest(t, http.MethodPost, ada,
		`mutation { createArtifact(input: {type: "hypothesis", title: "written over SSE", content: {}}) { __typename } }`, nil))
	if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"WriteSuccess"`) {
		t.Errorf("mutation: %s", r.Raw)
	}
	r = one("unknown field", env.SSERequest(t, http.MethodPost, ada, `{ artifact(ref: "hypothesis:x") { nope } }`, nil))
	if len(r.Errors) == 0 || !strings.Contains(r.Errors[0].Message, "nope") || r.Errors[0].Code() == "" {
		t.Errorf("unknown field: %s", r.Raw)
	}

	// GET with a mutation: 405, as without SSE, and nothing written.
	before := env.Count(t, "artifacts")
	st, resp := apitest.StartSSE(t, env.SSERequest(t, http.MethodGet, ada,
		`mutation { createArtifact(input: {type: "hypothesis", title: "over GET", content: {}}) { __typename } }`, nil))
	if st != nil {
		t.Fatalf("GET mutation: a stream opened: %+v", st.Rest())
	}
	if resp.Status != http.StatusMethodNotAllowed || len(resp.Errors) != 1 || env.Count(t, "artifacts") != before {
		t.Errorf("GET mutation: %d %s", resp.Status, resp.Raw)
	}
	// A body that is not a GraphQL request: the 400 a POST gets.
	req := env.SSERequest(t, http.MethodPost, ada, "", nil)
	req.Body, req.ContentLength = http.NoBody, 0
	if st, resp := apitest.StartSSE(t, req); st != nil {
		t.Errorf("empty body: a stream opened: %+v", st.Rest())
	} else if resp.Status != http.StatusBadRequest || len(resp.Errors) != 1 {
		t.Errorf("empty body: %d %s", resp.Status, resp.Raw)
	}
	// A client that lists JSON first gets JSON.
	req = env.SSERequest(t, http.MethodPost, ada, q, map[string]any{"r": h.Ref})
	req.Header.Set("Accept", "application/json, text/event-stream")
	if st, resp := apitest.StartSSE(t, req); st != nil {
		t.Errorf("Accept: application/json first: a stream opened: %+v", st.Rest())
	} else if resp.Status != http.StatusOK || !strings.Contains(string(resp.Data), "read over SSE") {
		t.Errorf("Accept: application/json first: %d %s", resp.Status, resp.Raw)
	}
}

// The request middleware runs first: a bad or expired token is refused before
// any stream opens, with the status and body a POST gets; without a token a
// subscription is refused on the stream, as over a websocket.
func TestSSEAuthentication(t *testing.T) {
	env := apitest.New(t)
	q := `subscription { events { id } }`
	for name, tok := range map[string]string{
		"bad token": "not.a.jwt",
		"expired":   mintAt(t, apitest.Secret, time.Now().Add(-2*time.Hour), time.Hour),
		"wrong key": mintWith(t, []byte("another-secret-0123456789abcdef-0123456789"), time.Hour),
	} {
		post := env.Post(t, tok, q, nil)
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			st, resp := apitest.StartSSE(t, env.SSERequest(t, method, tok, q, nil))
			if st != nil {
				t.Fatalf("%s %s: a stream opened", name, method)
			}
			if resp.Status != http.StatusUnauthorized || resp.Status != post.Status || len(resp.Errors) != 1 ||
				resp.Errors[0].Code() != "UNAUTHENTICATED" || resp.Errors[0].Message != post.Errors[0].Message {
				t.Errorf("%s %s: %d %s; a POST gets %d %s", name, method, resp.Status, resp.Raw, post.Status, post.Raw)
			}
		}
	}
	st := env.SSE(t, "", q, nil)
	if e := sseEnded(t, st); e.Code() != "UNAUTHENTICATED" {
		t.Errorf("no token: %+v", e)
	}
	// A stream ends when its token expires.
	st = env.SSE(t, mintWith(t, apitest.Secret, 1500*time.Millisecond), q, nil)
	if e := sseEnded(t, st); e.Code() != "UNAUTHENTICATED" || e.Extensions["reason"] != "TOKEN_EXPIRED" {
		t.Errorf("expired token: %+v", e)
	}
}

// CloseEventStreams (what Serve runs on shutdown) ends every open stream with
// a last next saying the server is shutting down, then complete, and returns
// once their requests have returned; a stream opened after it ends at once.
func TestSSEShutdownEndsStreams(t *testing.T) {
	env := apitest.New(t)
	ada := apitest.Contributor(t, "ada")
	since := tail(t, env, ada)
	streams := []*apitest.SSE{
		env.SSE(t, ada, `subscription($s: Cursor) { events(since: $s) { id } }`, map[string]any{"s": since}),
		env.SSE(t, ada, `subscription($s: Cursor) { events(since: $s) { id } }`, map[string]any{"s": since}),
	}
	// Both are open: an event reaches the first.
	createH(t, env, ada, map[string]any{"title": "before shutdown", "content": map[string]any{}})
	sseEvent(t, streams[0], "events")
	sseEvent(t, streams[1], "events")
	ctx, cancel := context.WithTimeout(context.Background(), apitest.WSTimeout)
	defer cancel()
	n, err := env.App.Handler.CloseEventStreams(ctx)
	if n != 2 || err != nil {
		t.Errorf("CloseEventStreams: %d %v", n, err)
	}
	for i, st := range streams {
		e := sseEnded(t, st)
		if e.Extensions["reason"] != "SHUTTING_DOWN" || !strings.Contains(e.Message, "shutting down") || !strings.Contains(e.Message, "cursor") {
			t.Errorf("stream %d: %+v", i, e)
		}
	}
	st := env.SSE(t, ada, `subscription { events { id } }`, nil)
	if e := sseEnded(t, st); e.Extensions["reason"] != "SHUTTING_DOWN" {
		t.Errorf("a stream opened after the shutdown: %+v", e)
	}
}

// The response cap applies to each event, never to a stream's total; an idle
// stream gets keepalive comments; one actor's open subscriptions are capped.
func TestSSELimits(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) {
		o.MaxResponseBytes, o.SSEKeepAlive, o.MaxEventStreams = 1000, 20*time.Millisecond, 2
	}})
	ada, bob := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob")
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(env.Log.String())
		}
	})
	since := tail(t, env, ada)
	st := env.SSE(t, ada, `subscription($s: Cursor) { events(since: $s, types: ["hypothesis.created"]) { ref artifact { title content } } }`,
		map[string]any{"s": since})
	// Ten events of ~300 bytes each: 3 kB in all, three times the cap.
	for range 10 {
		createH(t, env, ada, map[string]any{"title": strings.Repeat("t", 200), "content": map[string]any{}})
	}
	for i := range 10 {
		if e := sseEvent(t, st, "events"); e.Ref == nil {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
	// One event over the cap is one error; the stream goes on.
	serverCreate(t, env, "ada", "invokeTool", map[string]any{"type": "hypothesis", "title": "large", "content": map[string]any{"text": strings.Repeat("x", 2000)}})
	createH(t, env, ada, map[string]any{"title": "small", "content": map[string]any{}})
	if r := st.Next().Result(t); len(r.Errors) != 1 || r.Errors[0].Extensions["reason"] != "RESPONSE_TOO_LARGE" {
		t.Errorf("an event over the cap: %s", r.Raw)
	}
	if e := sseEvent(t, st, "events"); e.Ref == nil {
		t.Errorf("after the large event: %+v", e)
	}

	// An idle stream gets a comment every interval.
	st.NextComment()
	st.NextComment()

	// ada holds one; a second fits and a third is refused; bob is not counted with her.
	second := env.SSE(t, ada, `subscription { events { id } }`, nil)
	if e := sseEnded(t, env.SSE(t, ada, `subscription { events { id } }`, nil)); e.Extensions["reason"] != "TOO_MANY_SUBSCRIPTIONS" {
		t.Errorf("a third subscription: %+v", e)
	}
	bobs := env.SSE(t, bob, `subscription { events { id } }`, nil)
	bobs.NextComment()
	// Queries are not counted.
	if r := env.SSE(t, ada, `{ __typename }`, nil).Next().Result(t); len(r.Errors) > 0 {
		t.Errorf("a query with two subscriptions open: %s", r.Raw)
	}
	// Closing one frees its place once the server has seen the client go.
	second.Close()
	waitFor(t, func() bool { return opened(t, env.SSE(t, ada, `subscription { events { id } }`, nil)) })
}

// opened reports whether a subscription's stream stays open: it gets
// keepalives (the opening comment and two more) before any event.
func opened(t *testing.T, st *apitest.SSE) bool {
	t.Helper()
	defer st.Close()
	for comments := 0; comments < 3; {
		ev, ok := st.Any()
		if !ok || !ev.Comment {
			return false
		}
		comments++
	}
	return true
}

// A subscriber that falls behind is dropped by the hub; its stream ends with
// the hub's reason, which names the cursor to resume from.
func TestSSEDroppedSubscriberEndsWithReason(t *testing.T) {
	env := apitest.New(t, apitest.Opts{App: func(c *app.Config) { c.HubBuffer = 1 }})
	admin := apitest.Token(t, "root", auth.PermAdmin)
	since := tail(t, env, admin)
	st := env.SSE(t, admin, `subscription($s: Cursor) { events(since: $s) { id payload } }`, map[string]any{"s": since})
	// 2000 events of 2 kB in one statement: the hub hands them out in pages of
	// 500, far faster than one subscriber writes them.
	if _, err := env.Pool.Exec(context.Background(), `WITH e AS (INSERT INTO events (event_type, occurred_at, source, actor_id, actor_kind, payload)
		SELECT 'system.maintenance', now(), 'scidex', 'system', 'system', jsonb_build_object('n', i, 'pad', repeat('x', 2000))
		FROM generate_series(1, 2000) i RETURNING id)
		SELECT pg_notify('scidex_events', max(id)::text) FROM e`); err != nil {
		t.Fatal(err)
	}
	var got int
	for {
		ev := st.Next()
		if ev.Event != "next" {
			t.Fatalf("after %d events: %q before the reason", got, ev.Event)
		}
		r := ev.Result(t)
		if len(r.Errors) == 0 {
			got++
			continue
		}
		e := r.Errors[0]
		if e.Extensions["reason"] != "SUBSCRIPTION_DROPPED" || !strings.Contains(e.Message, "fell 1 events behind") || !strings.Contains(e.Message, "since") {
			t.Errorf("the drop: %+v", e)
		}
		break
	}
	if rest := st.Rest(); len(rest) != 1 || rest[0].Event != "complete" {
		t.Errorf("after the reason: %+v", rest)
	}
	if got >= 2000 {
		t.Errorf("all %d events arrived: the subscriber was not dropped", got)
	}
}

// An EventSource resumes: each event's message carries its cursor as its id,
// and a GET that sends the last id it received back (Last-Event-ID, which
// EventSource does by itself on reconnect) gets every event after it — none
// missed while it was away, none twice — and then the live ones.
func TestSSEResumesFromLastEventID(t *testing.T) {
	env := provEnv(t, apitest.Opts{App: func(c *app.Config) { c.Queue.Workers = 0 }})
	ada := apitest.Contributor(t, "ada")
	sub := `subscription($s: Cursor) { events(types: ["hypothesis.*"], since: $s) { cursor type artifact { title } } }`
	since := tail(t, env, ada)
	st, resp := apitest.StartSSE(t, env.SSERequest(t, http.MethodGet, ada, sub, map[string]any{"s": since}))
	if st == nil {
		t.Fatalf("no stream: %d %s", resp.Status, resp.Raw)
	}
	titles := func(n int, s *apitest.SSE) (got []string, ids []string) {
		t.Helper()
		for range n {
			ev := s.Next()
			var data struct {
				Events struct {
					Cursor   string
					Artifact struct{ Title string }
				}
			}
			if err := json.Unmarshal(ev.Result(t).Data, &data); err != nil {
				t.Fatal(err)
			}
			if ev.ID == "" || ev.ID != data.Events.Cursor {
				t.Fatalf("a next's id %q, its event's cursor %q", ev.ID, data.Events.Cursor)
			}
			got, ids = append(got, data.Events.Artifact.Title), append(ids, ev.ID)
		}
		return got, ids
	}
	createH(t, env, ada, map[string]any{"title": "one", "content": map[string]any{}})
	got, ids := titles(1, st)
	st.Close() // the connection drops after "one"
	createH(t, env, ada, map[string]any{"title": "two", "content": map[string]any{}})
	createH(t, env, ada, map[string]any{"title": "three", "content": map[string]any{}})

	// The reconnect: the same request, with the id of the last event received
	// (its since would replay "one" again).
	req := env.SSERequest(t, http.MethodGet, ada, sub, map[string]any{"s": since})
	req.Header.Set("Last-Event-ID", ids[0])
	again, resp := apitest.StartSSE(t, req)
	if again == nil {
		t.Fatalf("no stream on reconnect: %d %s", resp.Status, resp.Raw)
	}
	more, _ := titles(2, again)
	createH(t, env, ada, map[string]any{"title": "four", "content": map[string]any{}})
	live, _ := titles(1, again)
	if all := strings.Join(append(append(got, more...), live...), ","); all != "one,two,three,four" {
		t.Fatalf("received %s, want one,two,three,four: each event once, in order", all)
	}

	// A Last-Event-ID that is not a cursor is refused on the stream, naming it.
	req = env.SSERequest(t, http.MethodGet, ada, sub, nil)
	req.Header.Set("Last-Event-ID", "not-a-cursor")
	bad, _ := apitest.StartSSE(t, req)
	if bad == nil {
		t.Fatal("no stream for a bad Last-Event-ID")
	}
	if r := bad.Next().Result(t); len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "Last-Event-ID") {
		t.Fatalf("a bad Last-Event-ID: %s", r.Raw)
	}
}
