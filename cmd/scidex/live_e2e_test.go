package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// The live artifact page in headless Chromium, against the real binary:
//
//  1. a person opens /artifacts/<ref>, pastes a token, and the page logs in
//     (the scidex_jwt cookie, HttpOnly: the page's script cannot read it)
//     and shows the artifact, a hostile title as text;
//  2. the only SSE stream the actor may hold (--max-event-streams 1) is
//     taken by another client, so the page's stream is refused: it polls,
//     and an edit made over /graphql by another client appears through the
//     polls; once the other stream closes, the page's stream opens (live);
//  3. an edit appears through the stream, without a reload;
//  4. the server is SIGKILLed mid-view; two edits land through a second
//     server on the same database while it is down; the server restarts on
//     the same port, the browser's EventSource reconnects by itself with
//     Last-Event-ID, and the page catches up: every event of the artifact
//     in the log is applied exactly once (the stream's URL still says the
//     old since: a server that ignored Last-Event-ID would repeat events).
func TestLivePage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and Chromium")
	}
	exe := e2e.FindChromium(t)
	secret := "live-page-secret-0123456789abcdef-0123456789"
	db := dbtest.URL(t)
	port := e2e.FreePort(t)
	env := []string{"DATABASE_URL=" + db, "SCIDEX_JWT_SECRET=" + secret}
	args := []string{"--addr", fmt.Sprintf("127.0.0.1:%d", port), "--max-event-streams", "1"}
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env, Args: args})
	ada := mint(t, secret, "ada", auth.PermContributor)
	grace := mint(t, secret, "grace", auth.PermContributor)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	hostile := `TREM2 <img src=x onerror="window.pwned=1">`
	var created struct {
		CreateArtifact struct{ Ref, ContentHash string }
	}
	if err := gql(ctx, srv.URL, ada, `mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { ... on WriteSuccess { ref contentHash } } }`,
		map[string]any{"in": map[string]any{"type": "hypothesis", "title": hostile, "content": map[string]any{"target_gene": "TREM2"}}}, &created); err != nil {
		t.Fatal(err)
	}
	ref, _, _ := strings.Cut(created.CreateArtifact.Ref, "@")
	hash := created.CreateArtifact.ContentHash
	var head struct{ Poll struct{ Cursor string } }
	if err := gql(ctx, srv.URL, ada, `{ poll(from: NOW, limit: 1) { cursor } }`, nil, &head); err != nil {
		t.Fatal(err)
	}
	edit := func(url, title string) {
		t.Helper()
		var out struct {
			UpdateArtifact struct {
				Typename    string `json:"__typename"`
				ContentHash string
			}
		}
		if err := gql(ctx, url, grace, `mutation($in: UpdateArtifactInput!) { updateArtifact(input: $in) { __typename ... on WriteSuccess { contentHash } } }`,
			map[string]any{"in": map[string]any{"ref": ref, "baseContentHash": hash, "title": title}}, &out); err != nil || out.UpdateArtifact.Typename != "WriteSuccess" {
			t.Fatalf("edit %q: %+v %v", title, out, err)
		}
		hash = out.UpdateArtifact.ContentHash
	}

	// Another client of ada's holds the one stream she may open.
	holder, resp := apitest.StartSSE(t, apitest.SSERequestURL(t, srv.URL, http.MethodPost, ada,
		`subscription { events(types: ["nothing.ever"]) { id } }`, nil))
	if resp != nil {
		t.Fatalf("the holder's stream: %+v", resp)
	}

	b := e2e.NewBrowser(t, exe)
	wait := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(b, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(45*time.Second))); err != nil {
			state, _ := chromedp.Run(b, chromedp.Evaluate[string](`JSON.stringify(window.scidexLive)`))
			t.Fatalf("%s: %v\npage state: %s\nserver log:\n%s", what, err, state, srv.Log())
		}
	}
	if err := chromedp.Do(b, chromedp.Navigate(srv.URL+"/artifacts/"+ref)); err != nil {
		t.Fatal(err)
	}
	wait("the login form", `window.scidexLive && window.scidexLive.mode === 'logged out' && !document.getElementById('login').hidden`)
	if err := chromedp.Do(b, chromedp.SendKeys("#token", ada), chromedp.Click("#login-button")); err != nil {
		t.Fatal(err)
	}

	// 1. Logged in, the artifact shown; the hostile title is text.
	wait("the artifact", `window.scidexLive.renders > 0`)
	page, err := chromedp.Run(b, chromedp.Evaluate[map[string]any](`({title: document.getElementById('title').textContent,
		imgs: document.querySelectorAll('img').length, pwned: window.pwned === 1, cookie: document.cookie})`))
	if err != nil {
		t.Fatal(err)
	}
	if page["title"] != hostile || page["imgs"] != float64(0) || page["pwned"] != false {
		t.Fatalf("the hostile title is not shown as text: %v", page)
	}
	if c, _ := page["cookie"].(string); !strings.Contains(c, "scidex_csrf=") || strings.Contains(c, "scidex_jwt") {
		t.Errorf("the page's cookies: %q (want scidex_csrf readable, scidex_jwt HttpOnly)", c)
	}
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.marker = 'no reload'; true`)); err != nil {
		t.Fatal(err)
	}

	// 2. The stream refused (the cap): the page polls, and an edit appears.
	wait("polling", `window.scidexLive.mode === 'polling' && window.scidexLive.polls > 0 && /too many subscriptions/.test(window.scidexLive.error)`)
	edit(srv.URL, "v2 through the polls")
	wait("the edit through the polls", `window.scidexLive.title === 'v2 through the polls'`)
	holder.Close()
	wait("the stream", `window.scidexLive.mode === 'live'`)

	// 3. An edit through the stream.
	edit(srv.URL, "v3 through the stream")
	wait("the edit through the stream", `window.scidexLive.title === 'v3 through the stream' && window.scidexLive.mode === 'live'`)

	// 4. SIGKILL; two edits through another server; the server back on its port.
	other := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env})
	streamsBefore, _ := chromedp.Run(b, chromedp.Evaluate[float64](`window.scidexLive.streams`))
	srv.Kill()
	wait("the page sees the server gone", `window.scidexLive.mode !== 'live'`)
	edit(other.URL, "v4 while the server was down")
	edit(other.URL, "v5 while the server was down")
	srv = e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env, Args: args})
	wait("the catch-up", `window.scidexLive.title === 'v5 while the server was down' && window.scidexLive.mode === 'live'`)

	state, err := chromedp.Run(b, chromedp.Evaluate[struct {
		Events []struct {
			ID  float64
			Via string
		}
		Duplicates, StreamRepeats int
		Streams                   float64
		Marker                    string
	}](`({events: window.scidexLive.events, duplicates: window.scidexLive.duplicates, streamRepeats: window.scidexLive.streamRepeats,
		streams: window.scidexLive.streams, marker: window.marker})`))
	if err != nil {
		t.Fatal(err)
	}
	if state.Marker != "no reload" {
		t.Errorf("the page reloaded")
	}
	// The log's events of the artifact after the page's start, each applied once.
	var log struct {
		Poll struct{ Events []struct{ ID string } }
	}
	filter := map[string]any{"or": []any{map[string]any{"==": []any{map[string]any{"var": "ref"}, ref}},
		map[string]any{"in": []any{ref + "@", map[string]any{"var": "ref"}}}}}
	if err := gql(ctx, srv.URL, ada, `query($s: Cursor, $f: JSON) { poll(since: $s, filter: $f, limit: 100) { events { id } } }`,
		map[string]any{"s": head.Poll.Cursor, "f": filter}, &log); err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, e := range log.Poll.Events {
		want = append(want, e.ID)
	}
	for _, e := range state.Events {
		got = append(got, fmt.Sprint(int64(e.ID)))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || len(want) != 4 {
		t.Errorf("the page applied events %v; the log has %v (4 edits)", got, want)
	}
	// The stream never repeats what it brought itself: it resumed right after
	// Last-Event-ID. It may repeat what a poll brought while the server was
	// down (on a loaded machine the restart outlasts the page's 4 s before it
	// polls, and the poll and the browser's reconnect race); only those are
	// duplicates the page may recognise.
	polled := 0
	for _, e := range state.Events {
		if e.Via == "poll" {
			polled++
		}
	}
	if state.StreamRepeats != 0 {
		t.Errorf("the stream repeated %d of its own events: it did not resume after Last-Event-ID", state.StreamRepeats)
	}
	if state.Duplicates > polled {
		t.Errorf("%d events came twice, %d were brought by polls: the stream did not resume after Last-Event-ID", state.Duplicates, polled)
	}
	if state.Streams != streamsBefore {
		t.Errorf("the page opened %v streams, %v before the kill: the catch-up was not the browser's own reconnect", state.Streams, streamsBefore)
	}
}

// EventSource with the cookie from a listed origin (withCredentials): the
// page of another origin logs in with CORS and follows events; a page of an
// unlisted origin can do neither.
func TestEventSourceFromAListedOrigin(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and Chromium")
	}
	exe := e2e.FindChromium(t)
	secret := "listed-origin-secret-0123456789abcdef-012345"
	page := `<!doctype html><meta charset="utf-8"><title>elsewhere</title><script>
window.got = []; window.state = 'idle';
window.follow = async (api, token) => {
  try {
    const r = await fetch(api + '/auth/session', {method: 'POST', credentials: 'include', headers: {Authorization: 'Bearer ' + token}});
    if (!r.ok) { window.state = 'login ' + r.status; return; }
  } catch (e) { window.state = 'login blocked'; return; }
  const q = 'subscription { events(types: ["hypothesis.created"]) { id ref } }';
  const es = new EventSource(api + '/graphql?query=' + encodeURIComponent(q), {withCredentials: true});
  es.onopen = () => { window.state = 'open'; };
  es.onerror = () => { if (es.readyState === EventSource.CLOSED) window.state = 'stream blocked'; };
  es.addEventListener('next', (m) => { const d = JSON.parse(m.data); if (d.data) window.got.push(d.data.events.ref); });
};
</script>`
	serve := func() *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(page))
		}))
		t.Cleanup(s.Close)
		return s
	}
	listed, unlisted := serve(), serve()
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + secret},
		Args: []string{"--allowed-origins", listed.URL}})
	ada := mint(t, secret, "ada", auth.PermContributor)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	for _, c := range []struct {
		name, url, want string
	}{{"listed", listed.URL, "open"}, {"unlisted", unlisted.URL, "login blocked"}} {
		t.Run(c.name, func(t *testing.T) {
			b := e2e.NewBrowser(t, exe)
			if err := chromedp.Do(b, chromedp.Navigate(c.url)); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(b, chromedp.Evaluate[any](fmt.Sprintf(`window.follow(%q, %q), true`, srv.URL, ada))); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(b, chromedp.Poll[bool](`window.state !== 'idle'`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
				t.Fatal(err)
			}
			if st, _ := chromedp.Run(b, chromedp.Evaluate[string](`window.state`)); st != c.want {
				t.Fatalf("the page of %s: %q, want %q\n%s", c.url, st, c.want, srv.Log())
			}
			if c.want != "open" {
				return
			}
			var created struct{ CreateArtifact struct{ Ref string } }
			if err := gql(ctx, srv.URL, ada, `mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { ... on WriteSuccess { ref } } }`,
				map[string]any{"in": map[string]any{"type": "hypothesis", "title": "seen from elsewhere", "content": map[string]any{}}}, &created); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(b, chromedp.Poll[bool](fmt.Sprintf(`window.got.includes(%q)`, created.CreateArtifact.Ref), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
				got, _ := chromedp.Run(b, chromedp.Evaluate[[]string](`window.got`))
				t.Fatalf("the listed origin's EventSource did not get %s: %v (%v)", created.CreateArtifact.Ref, got, err)
			}
		})
	}
}
