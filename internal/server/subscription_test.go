package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
)

const eventFields = `id cursor type ref actor { id } payload`

type gotEvent struct {
	ID       string
	Cursor   string
	Type     string
	Ref      *string
	Actor    struct{ ID string }
	Payload  map[string]any
	Artifact *struct {
		ID    string
		Title string
	}
}

// tail is the cursor of the end of the log now: subscribing since it cannot
// miss a write made after this call, however long the subscription takes to start.
func tail(t *testing.T, env *apitest.Env, tok string) string {
	t.Helper()
	var out struct{ Poll struct{ Cursor string } }
	env.OK(t, tok, `{ poll(limit: 1) { cursor } }`, nil, &out)
	if out.Poll.Cursor == "" {
		t.Fatal("poll returned no cursor")
	}
	return out.Poll.Cursor
}

func nextEvent(t *testing.T, ws *apitest.WS, id, field string) gotEvent {
	t.Helper()
	m := ws.Next(id)
	var data map[string]gotEvent
	m.Data(t, &data)
	return data[field]
}

func TestSubscriptionDeliversCommittedEventsLive(t *testing.T) {
	env := apitest.New(t)
	ada, bob := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob")
	since := tail(t, env, ada)
	ws := env.WS(t, ada)
	ws.Subscribe("hyp", `subscription($since: Cursor) { events(types: ["hypothesis.*"], since: $since) { `+eventFields+` artifact { id title } } }`, map[string]any{"since": since})
	ws.Subscribe("bob", `subscription($since: Cursor, $f: JSON) { events(filter: $f, since: $since) { `+eventFields+` } }`,
		map[string]any{"since": since, "f": map[string]any{"==": []any{map[string]any{"var": "actor.id"}, "bob"}}})

	h1 := createH(t, env, ada, map[string]any{"title": "TREM2 variants raise microglial lipid load", "content": map[string]any{}})
	mustWrite(t, env, ada, "createArtifact", "CreateArtifactInput", map[string]any{"type": "knowledge_gap", "title": "gap", "content": map[string]any{"description": "unknown"}})
	h2 := createH(t, env, bob, map[string]any{"title": "APOE4 impairs clearance", "content": map[string]any{}})
	var up result
	want := []struct{ typ, ref, actor, title string }{
		{"hypothesis.created", h1.Ref, "ada", "TREM2 variants raise microglial lipid load"},
		{"hypothesis.created", h2.Ref, "bob", "APOE4 impairs clearance"},
		{"hypothesis.updated", "", "ada", "TREM2 variants raise lipid load"},
	}
	var prev string
	for i, w := range want {
		if i == 2 {
			up = update(t, env, ada, map[string]any{"ref": h1.Ref, "baseContentHash": h1.ContentHash, "title": "TREM2 variants raise lipid load"})
			if up.Typename != "WriteSuccess" {
				t.Fatalf("update: %s %s", up.Typename, up.Message)
			}
			w.ref = up.Ref
		}
		e := nextEvent(t, ws, "hyp", "events")
		if e.Type != w.typ || e.Ref == nil || *e.Ref != w.ref || e.Actor.ID != w.actor || e.Artifact == nil || e.Artifact.Title != w.title {
			t.Fatalf("event %d: %+v, want %+v", i, e, w)
		}
		if e.Cursor == "" || e.Cursor == prev {
			t.Errorf("event %d cursor %q after %q", i, e.Cursor, prev)
		}
		prev = e.Cursor
	}
	// The filtered subscription saw bob's write only.
	if e := nextEvent(t, ws, "bob", "events"); e.Type != "hypothesis.created" || *e.Ref != h2.Ref {
		t.Fatalf("bob's events: %+v", e)
	}
	// Nothing more: a final public write by bob arrives next, proving nothing else was queued before it.
	h3 := createH(t, env, bob, map[string]any{"title": "marker", "content": map[string]any{}})
	if e := nextEvent(t, ws, "bob", "events"); *e.Ref != h3.Ref {
		t.Fatalf("bob's filter let through %+v", e)
	}

	// complete ends one subscription; the other goes on.
	ws.Complete("bob")
	h4 := createH(t, env, bob, map[string]any{"title": "after complete", "content": map[string]any{}})
	if e := nextEvent(t, ws, "hyp", "events"); *e.Ref != h3.Ref {
		t.Fatalf("hyp: %+v", e)
	}
	if e := nextEvent(t, ws, "hyp", "events"); *e.Ref != h4.Ref {
		t.Fatalf("hyp after complete: %+v", e)
	}
	if m, ok := ws.TryNext("bob", 0); ok {
		t.Errorf("a completed subscription sent %s %s", m.Type, m.Payload)
	}
}

func TestSubscriptionSinceReplaysThenGoesLive(t *testing.T) {
	env := apitest.New(t)
	ada := apitest.Contributor(t, "ada")
	start := tail(t, env, ada)
	var refs []string
	for i := range 5 {
		refs = append(refs, createH(t, env, ada, map[string]any{"title": fmt.Sprintf("backlog %d", i), "content": map[string]any{}}).Ref)
	}
	// The cursor of the second event, from poll: the subscription starts after it.
	var p struct {
		Poll struct {
			Events []struct{ Cursor, Ref string }
		}
	}
	env.OK(t, ada, `query($s: Cursor) { poll(since: $s, types: ["hypothesis.created"], limit: 2) { events { cursor ref } } }`, map[string]any{"s": start}, &p)
	if len(p.Poll.Events) != 2 || p.Poll.Events[1].Ref != refs[1] {
		t.Fatalf("poll: %+v", p.Poll)
	}
	ws := env.WS(t, ada)
	ws.Subscribe("s", `subscription($s: Cursor) { events(types: ["hypothesis.created"], since: $s) { `+eventFields+` } }`, map[string]any{"s": p.Poll.Events[1].Cursor})

	// Writers keep writing while the backlog replays: every event arrives once, in order.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := make(chan string, 100)
	go func() {
		defer close(live)
		for i := range 30 {
			if ctx.Err() != nil {
				return
			}
			var out struct {
				R struct{ Ref string }
			}
			r := env.Post(t, ada, `mutation($in: CreateArtifactInput!) { r: createArtifact(input: $in) { ... on WriteSuccess { ref } } }`,
				map[string]any{"in": map[string]any{"type": "hypothesis", "title": fmt.Sprintf("live %d", i), "content": map[string]any{}}})
			if err := jsonUnmarshal(r.Data, &out); err != nil || out.R.Ref == "" {
				t.Errorf("live write %d: %s", i, r.Raw)
				return
			}
			live <- out.R.Ref
		}
	}()
	for r := range live {
		refs = append(refs, r)
	}
	for i, want := range refs[2:] {
		if e := nextEvent(t, ws, "s", "events"); e.Ref == nil || *e.Ref != want {
			t.Fatalf("event %d after the cursor: %+v, want %s", i, e, want)
		}
	}
	if m, ok := ws.TryNext("s", 200*time.Millisecond); ok {
		t.Errorf("an extra event after the last write: %s", m.Payload)
	}
}

func TestSubscriptionsSeeOnlyWhatTheirActorMay(t *testing.T) {
	env := apitest.New(t)
	ada, bob, carol := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob"), apitest.Contributor(t, "carol")
	admin := apitest.Token(t, "root", auth.PermAdmin)
	since := tail(t, env, ada)
	q := `subscription($s: Cursor) { events(since: $s) { ` + eventFields + ` } }`
	subs := map[string]*apitest.WS{}
	for name, tok := range map[string]string{"bob": bob, "carol": carol, "admin": admin} {
		subs[name] = env.WS(t, tok)
		subs[name].Subscribe("all", q, map[string]any{"s": since})
	}
	msg := send(t, env, ada, map[string]any{"recipient": "actor:bob", "body": "private"})
	if msg.Typename != "WriteSuccess" {
		t.Fatalf("send: %s", msg.Typename)
	}
	if _, err := env.Pool.Exec(context.Background(), `WITH e AS (INSERT INTO events (event_type, occurred_at, source, actor_id, actor_kind, payload)
		VALUES ('system.maintenance', now(), 'scidex', 'system', 'system', '{"note": "vacuum"}') RETURNING id)
		SELECT pg_notify('scidex_events', id::text) FROM e`); err != nil {
		t.Fatal(err)
	}
	marker := createH(t, env, ada, map[string]any{"title": "public marker", "content": map[string]any{}})

	types := func(name string) []string {
		var out []string
		for {
			e := nextEvent(t, subs[name], "all", "events")
			out = append(out, e.Type)
			if e.Ref != nil && *e.Ref == marker.Ref {
				return out
			}
		}
	}
	if got := strings.Join(types("carol"), ","); got != "hypothesis.created" {
		t.Errorf("carol saw %s", got)
	}
	if got := strings.Join(types("bob"), ","); got != "message.created,hypothesis.created" {
		t.Errorf("bob saw %s", got)
	}
	if got := strings.Join(types("admin"), ","); got != "message.created,system.maintenance,hypothesis.created" {
		t.Errorf("admin saw %s", got)
	}
	// poll applies the same rule.
	var p struct {
		Poll struct{ Events []struct{ Type string } }
	}
	env.OK(t, carol, `query($s: Cursor) { poll(since: $s) { events { type } } }`, map[string]any{"s": since}, &p)
	if len(p.Poll.Events) != 1 || p.Poll.Events[0].Type != "hypothesis.created" {
		t.Errorf("carol polled %+v", p.Poll.Events)
	}
}

func TestArtifactEventsFollowOneArtifact(t *testing.T) {
	env := apitest.New(t)
	ada := apitest.Contributor(t, "ada")
	h := createH(t, env, ada, map[string]any{"title": "followed", "content": map[string]any{}})
	other := createH(t, env, ada, map[string]any{"title": "other", "content": map[string]any{}})
	ws := env.WS(t, ada)
	// The server's own subscribers (its cancel watch, its MCP catalog) count too.
	base := env.Hub.Subscribers()
	ws.Subscribe("a", `subscription($r: Ref!) { artifactEvents(ref: $r) { `+eventFields+` } }`, map[string]any{"r": h.Ref})
	// The subscription has no since: wait until the hub counts it, then write.
	waitFor(t, func() bool { return env.Hub.Subscribers() == base+1 })
	update(t, env, ada, map[string]any{"ref": other.Ref, "baseContentHash": other.ContentHash, "title": "other 2"})
	mutate(t, env, ada, "addComment", "AddCommentInput", map[string]any{"ref": unpinned(h.Ref), "body": "looks right"})
	up := update(t, env, ada, map[string]any{"ref": h.Ref, "baseContentHash": h.ContentHash, "title": "followed 2"})
	e := nextEvent(t, ws, "a", "artifactEvents")
	if e.Type != "hypothesis.updated" || *e.Ref != up.Ref {
		t.Fatalf("artifactEvents: %+v", e)
	}
}

func TestSubscriptionRefusals(t *testing.T) {
	env := apitest.New(t)
	ada := apitest.Contributor(t, "ada")
	ws := env.WS(t, ada)
	ws.Subscribe("bad filter", `subscription($f: JSON) { events(filter: $f) { id } }`, map[string]any{"f": map[string]any{"frobnicate": []int{1}}})
	if m := ws.Next("bad filter"); m.Type != "error" && m.Type != "next" || !strings.Contains(string(m.Payload), "frobnicate") {
		t.Errorf("bad filter: %s %s", m.Type, m.Payload)
	}
	for name, c := range map[string]struct{ q, want string }{
		"bad cursor":    {`subscription { events(since: "not-a-cursor") { id } }`, "since"},
		"bad ref":       {`subscription { artifactEvents(ref: "no ref") { id } }`, "ref"},
		"bad consumer":  {`subscription { events(consumerId: "") { id } }`, "consumerId"},
		"unknown field": {`subscription { events { nope } }`, "nope"},
	} {
		ws.Subscribe(name, c.q, nil)
		m := ws.Next(name)
		if m.Type != "error" && m.Type != "next" || !strings.Contains(string(m.Payload), c.want) {
			t.Errorf("%s: %s %s", name, m.Type, m.Payload)
		}
	}
	// Still usable afterwards.
	since := tail(t, env, ada)
	ws.Subscribe("ok", `subscription($s: Cursor) { events(since: $s) { type } }`, map[string]any{"s": since})
	createH(t, env, ada, map[string]any{"title": "after refusals", "content": map[string]any{}})
	if m := ws.Next("ok"); m.Type != "next" {
		t.Fatalf("after refusals: %s %s", m.Type, m.Payload)
	}
}

func TestWebsocketAuthentication(t *testing.T) {
	env := apitest.New(t)
	ada := apitest.Contributor(t, "ada")
	for name, payload := range map[string]map[string]any{
		"no token":    {},
		"bad token":   {"Authorization": "Bearer not.a.jwt"},
		"wrong key":   {"Authorization": "Bearer " + mintWith(t, []byte("another-secret-0123456789abcdef-0123456789"), time.Hour)},
		"expired":     {"Authorization": "Bearer " + mintAt(t, apitest.Secret, time.Now().Add(-2*time.Hour), time.Hour)},
		"bare scheme": {"Authorization": "Basic Zm9vOmJhcg=="},
	} {
		ws := env.DialWS(t, nil)
		err := ws.Init(payload)
		code, reason := ws.Closed()
		if err == nil || code != 4403 || !strings.HasPrefix(reason, "Forbidden") {
			t.Errorf("%s: %v, closed %d %q", name, err, code, reason)
		}
		if strings.Contains(reason, "eyJ") {
			t.Errorf("%s: the close reason echoes the token: %q", name, reason)
		}
	}
	// The token may also be given bare, as "token".
	ws := env.DialWS(t, nil)
	if err := ws.Init(map[string]any{"token": ada}); err != nil {
		t.Errorf("token member: %v", err)
	}
	// Or carried by the upgrade request itself.
	ws = env.DialWS(t, http.Header{"Authorization": {"Bearer " + ada}})
	if err := ws.Init(nil); err != nil {
		t.Errorf("Authorization header on the upgrade: %v", err)
	}
	// A cookie only from this server's own pages.
	ws = env.DialWS(t, http.Header{"Cookie": {auth.CookieName + "=" + ada}, "Origin": {env.Server.URL}})
	if err := ws.Init(nil); err != nil {
		t.Errorf("same-origin cookie: %v", err)
	}

	// A connection closes with 4401 when its token expires.
	short := mintWith(t, apitest.Secret, 1500*time.Millisecond)
	ws = env.WS(t, short)
	ws.Subscribe("s", `subscription { events { id } }`, nil)
	code, reason := ws.WaitClosed()
	if code != 4401 || !strings.Contains(reason, "expired") {
		t.Errorf("expired token: closed %d %q", code, reason)
	}
}

func TestWebsocketOriginAllowList(t *testing.T) {
	env := apitest.New(t)
	url := "ws" + strings.TrimPrefix(env.Server.URL, "http") + "/graphql"
	for origin, ok := range map[string]bool{env.Server.URL: true, "https://evil.example": false} {
		resp, err := http.DefaultClient.Do(wsUpgrade(t, url, origin))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.StatusCode == http.StatusSwitchingProtocols; got != ok {
			t.Errorf("origin %s: HTTP %d", origin, resp.StatusCode)
		}
	}
}

func wsUpgrade(t *testing.T, url, origin string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, "http"+strings.TrimPrefix(url, "ws"), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	req.Header.Set("Sec-WebSocket-Protocol", "graphql-transport-ws")
	req.Header.Set("Origin", origin)
	return req
}

func mintWith(t *testing.T, secret []byte, ttl time.Duration) string {
	t.Helper()
	return mintAt(t, secret, time.Now(), ttl)
}

func mintAt(t *testing.T, secret []byte, now time.Time, ttl time.Duration) string {
	t.Helper()
	tok, err := auth.Mint(auth.MintOpts{Secret: secret, Issuer: "scidex", Audience: "scidex", Subject: "ada",
		Kind: auth.KindHuman, Permissions: []auth.Permission{auth.PermContributor}, TTL: ttl, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// waitFor waits for a condition the test cannot be told about directly, with a
// failure bound.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(apitest.WSTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
