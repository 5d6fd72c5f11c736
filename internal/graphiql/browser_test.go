package graphiql

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gorilla/websocket"

	"github.com/scidex/substrate/internal/e2e"
)

// fakeGraphQL stands in for the substrate's /graphql: it records what the
// page sends and answers fixed responses. The real server is tested
// elsewhere; this is a test of the page.
type fakeGraphQL struct {
	mu       sync.Mutex
	requests []gqlRequest // POSTs other than introspection, in order
	inits    []string     // connection_init payloads, in order
	seq      int          // numbers the answers, so the test can tell them apart
	wsInit   chan string  // connection_init payloads, as they arrive
	upgrader websocket.Upgrader
}

type gqlRequest struct {
	Authorization []string
	Query         string
	OperationName string
	Seq           int
}

func newFakeGraphQL() *fakeGraphQL {
	return &fakeGraphQL{
		wsInit:   make(chan string, 16),
		upgrader: websocket.Upgrader{Subprotocols: []string{"graphql-transport-ws"}},
	}
}

func (f *fakeGraphQL) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if websocket.IsWebSocketUpgrade(r) {
		f.serveWebsocket(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var body struct {
		Query         string `json:"query"`
		OperationName string `json:"operationName"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if body.OperationName == "IntrospectionQuery" {
		_ = json.NewEncoder(w).Encode(introspection())
		return
	}
	f.mu.Lock()
	f.seq++
	seq := f.seq
	f.requests = append(f.requests, gqlRequest{
		Authorization: r.Header.Values("Authorization"),
		Query:         body.Query,
		OperationName: body.OperationName,
		Seq:           seq,
	})
	f.mu.Unlock()
	fmt.Fprintf(w, `{"data":{"me":{"id":"actor-test-42","kind":"human","permissions":["viewer","contributor"]}},"extensions":{"seq":%d}}`, seq)
}

// serveWebsocket speaks just enough graphql-transport-ws: ack the
// connection_init, answer each subscribe with one "next" and "complete".
func (f *fakeGraphQL) serveWebsocket(w http.ResponseWriter, r *http.Request) {
	conn, err := f.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	var init struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := conn.ReadJSON(&init); err != nil || init.Type != "connection_init" {
		return
	}
	f.mu.Lock()
	f.inits = append(f.inits, string(init.Payload))
	n := len(f.inits)
	f.mu.Unlock()
	select {
	case f.wsInit <- string(init.Payload):
	default: // nobody is waiting for more; the test fails on its own
	}
	if err := conn.WriteJSON(map[string]string{"type": "connection_ack"}); err != nil {
		return
	}
	for {
		var msg struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		if err := conn.ReadJSON(&msg); err != nil {
			return
		}
		switch msg.Type {
		case "ping":
			_ = conn.WriteJSON(map[string]string{"type": "pong"})
		case "subscribe":
			_ = conn.WriteJSON(map[string]any{"id": msg.ID, "type": "next", "payload": map[string]any{"data": map[string]any{"ticks": 100 + n}}})
			_ = conn.WriteJSON(map[string]any{"id": msg.ID, "type": "complete"})
		}
	}
}

func (f *fakeGraphQL) request(seq int) (gqlRequest, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.requests {
		if r.Seq == seq {
			return r, true
		}
	}
	return gqlRequest{}, false
}

// introspection is the answer to GraphiQL's introspection query: a tiny
// schema with Query.me, the Actor type and Subscription.ticks.
func introspection() any {
	named := func(kind, name string) map[string]any {
		return map[string]any{"kind": kind, "name": name, "ofType": nil}
	}
	nonNull := func(of map[string]any) map[string]any {
		return map[string]any{"kind": "NON_NULL", "name": nil, "ofType": of}
	}
	list := func(of map[string]any) map[string]any {
		return map[string]any{"kind": "LIST", "name": nil, "ofType": of}
	}
	field := func(name, desc string, typ map[string]any) map[string]any {
		return map[string]any{"name": name, "description": desc, "args": []any{}, "type": typ, "isDeprecated": false, "deprecationReason": nil}
	}
	object := func(name string, fields ...any) map[string]any {
		return map[string]any{"kind": "OBJECT", "name": name, "description": nil, "fields": fields,
			"inputFields": nil, "interfaces": []any{}, "enumValues": nil, "possibleTypes": nil}
	}
	scalar := func(name string) map[string]any {
		return map[string]any{"kind": "SCALAR", "name": name, "description": nil, "fields": nil,
			"inputFields": nil, "interfaces": nil, "enumValues": nil, "possibleTypes": nil}
	}
	return map[string]any{"data": map[string]any{"__schema": map[string]any{
		"queryType":        map[string]any{"name": "Query"},
		"mutationType":     nil,
		"subscriptionType": map[string]any{"name": "Subscription"},
		"types": []any{
			object("Query", field("me", "The actor making the request.", nonNull(named("OBJECT", "Actor")))),
			object("Subscription", field("ticks", "A counter.", nonNull(named("SCALAR", "Int")))),
			object("Actor",
				field("id", "", nonNull(named("SCALAR", "ID"))),
				field("kind", "", nonNull(named("SCALAR", "String"))),
				field("permissions", "", nonNull(list(nonNull(named("SCALAR", "String")))))),
			scalar("ID"), scalar("String"), scalar("Int"), scalar("Boolean"),
		},
		"directives": []any{},
	}}}
}

// browserLog collects, from the page's target, every URL it loads and every
// problem it reports.
type browserLog struct {
	mu         sync.Mutex
	urls       []string
	exceptions []string
	errors     []string
}

func (l *browserLog) listen(ev any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		l.urls = append(l.urls, ev.Request.URL)
	case *network.EventWebSocketCreated:
		l.urls = append(l.urls, ev.URL)
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		l.exceptions = append(l.exceptions, fmt.Sprintf("%s at %s:%d", text, d.URL, d.LineNumber))
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			l.errors = append(l.errors, fmt.Sprintf("[%s] %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	}
}

// cspRecorder runs before the page's own scripts on every load and keeps
// the page's CSP violations, for cspViolations to read.
const cspRecorder = `window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__cspViolations.push(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' in ' + e.sourceFile + ':' + e.lineNumber);
});`

func TestBrowser(t *testing.T) {
	exe := e2e.FindChromium(t)

	fake := newFakeGraphQL()
	mux := http.NewServeMux()
	Mount(mux, "/graphiql", Options{Endpoint: "/graphql", SubscriptionEndpoint: "/graphql"})
	mux.Handle("/graphql", fake)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	origin, _ := url.Parse(srv.URL)

	ctx := e2e.NewBrowser(t, exe) // cleaned up before srv: t.Cleanup runs last-in first-out

	var blog browserLog
	if err := chromedp.Listen(ctx, blog.listen); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspRecorder}); err != nil {
		t.Fatal(err)
	}

	const (
		token        = "tok.en-123_XYZ"
		editorToken  = "Bearer from-headers-editor"
		pollTimeout  = 30 * time.Second
		pollInterval = 25 * time.Millisecond
	)
	const (
		queryEditor   = ".graphiql-query-editor .CodeMirror"
		headersEditor = ".graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror"
		runButton     = ".graphiql-execute-button"
	)
	// state describes the page for a failure message.
	state := func() string {
		v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('.graphiql-response') || {innerText: '(no result pane)'}).innerText`))
		return "result pane: " + v + "\n" + blog.summary()
	}
	poll := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr,
			chromedp.WithPollingTimeout(pollTimeout), chromedp.WithPollingInterval(pollInterval))); err != nil {
			t.Fatalf("waiting for %s (%s): %v\n%s", what, expr, err, state())
		}
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, pollTimeout)
		defer cancel()
		if err := chromedp.Do(stepCtx, steps...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, state())
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	resultHas := func(s string) string {
		return `(document.querySelector('.graphiql-response') || {innerText: ''}).innerText.includes(` + js(s) + `)`
	}
	setEditor := func(selector, value string) {
		t.Helper()
		eval(`(function () {
			var el = document.querySelector(` + js(selector) + `);
			if (!el || !el.CodeMirror) { throw new Error('no editor at ' + ` + js(selector) + `); }
			el.CodeMirror.setValue(` + js(value) + `);
			return '';
		})()`)
	}
	// setQuery replaces the query and waits until GraphiQL has parsed it
	// (it does so on a short debounce, and decides from the parsed document
	// whether an operation is a subscription).
	setQuery := func(q string) {
		t.Helper()
		setEditor(queryEditor, q)
		poll("GraphiQL to parse the new query", `(function () {
			var cm = document.querySelector(`+js(queryEditor)+`).CodeMirror;
			return !!(cm.documentAST && cm.documentAST.loc && cm.documentAST.loc.source.body === `+js(q)+`);
		})()`)
	}
	checkCSP := func() {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__cspViolations || ['recorder missing']`))
		if err != nil {
			t.Fatal(err)
		}
		if len(v) > 0 {
			t.Errorf("CSP violations: %q", v)
		}
	}

	// 1. The page renders GraphiQL, reached through the /graphiql redirect.
	do("open /graphiql",
		chromedp.Navigate(srv.URL+"/graphiql"),
		chromedp.WaitVisible(chromedp.CSS(".graphiql-container")),
		chromedp.WaitVisible(chromedp.CSS(queryEditor)),
		chromedp.WaitVisible(chromedp.ID("scidex-token")),
	)
	if loc := eval(`location.pathname`); loc != "/graphiql/" {
		t.Errorf("page at %s, want /graphiql/", loc)
	}
	if title := eval(`document.title`); title != DefaultTitle {
		t.Errorf("title %q", title)
	}
	if q := eval(`document.querySelector(` + js(queryEditor) + `).CodeMirror.getValue()`); !strings.Contains(q, "me {") || !strings.Contains(q, "Token") {
		t.Errorf("default query does not show `me` and the token bar:\n%s", q)
	}
	// The schema arrived through introspection: the docs explorer (the
	// first sidebar plugin) lists its root types.
	do("open the docs explorer",
		chromedp.Click(chromedp.CSS(`.graphiql-sidebar button[data-index="0"]`)),
		chromedp.WaitVisible(chromedp.CSS(".graphiql-doc-explorer")),
	)
	poll("the schema in the docs explorer", `(function () {
		var t = document.querySelector('.graphiql-doc-explorer').innerText;
		return t.includes('Query') && t.includes('Subscription');
	})()`)
	do("close the docs explorer",
		chromedp.Click(chromedp.CSS(`.graphiql-sidebar button[data-index="0"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(".graphiql-doc-explorer")),
	)
	if t.Failed() {
		t.FailNow()
	}

	// 2. Token bar: type a token, run the query with the run button.
	do("type the token", chromedp.SendKeys(chromedp.ID("scidex-token"), token))
	poll("the token to be stored", `localStorage.getItem('scidex:graphiql:token') === `+js(token))
	poll("the token state", `document.getElementById('scidex-token-state').textContent === 'token set'`)
	do("run the query", chromedp.Click(chromedp.CSS(runButton)))
	poll("the first answer in the result pane", resultHas(`"seq": 1`)+` && `+resultHas("actor-test-42"))
	req, ok := fake.request(1)
	if !ok {
		t.Fatal("the server recorded no query")
	}
	if !reflect.DeepEqual(req.Authorization, []string{"Bearer " + token}) {
		t.Errorf("query 1 carried Authorization %q, want [Bearer %s]", req.Authorization, token)
	}
	if !strings.Contains(req.Query, "me {") {
		t.Errorf("query 1 was %q", req.Query)
	}
	if shot := os.Getenv("SCIDEX_GRAPHIQL_SCREENSHOT"); shot != "" {
		buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err == nil {
			err = os.WriteFile(shot, buf, 0o644)
		}
		if err != nil {
			t.Logf("screenshot: %v", err)
		}
	}

	// 3. Show/Hide flips the field between password and text.
	if typ := eval(`document.getElementById('scidex-token').type`); typ != "password" {
		t.Errorf("token field type %q, want password", typ)
	}
	do("show the token", chromedp.Click(chromedp.ID("scidex-token-show")))
	if typ := eval(`document.getElementById('scidex-token').type`); typ != "text" {
		t.Errorf("after Show: token field type %q, want text", typ)
	}
	do("hide the token", chromedp.Click(chromedp.ID("scidex-token-show")))
	if typ := eval(`document.getElementById('scidex-token').type`); typ != "password" {
		t.Errorf("after Hide: token field type %q, want password", typ)
	}

	// 4. GraphiQL's dialogs insert a <style>; the nonce lets it through.
	do("open the settings dialog",
		chromedp.Click(chromedp.CSS(`button[aria-label="Open settings dialog"]`)),
		chromedp.WaitVisible(chromedp.CSS(".graphiql-dialog")),
	)
	poll("a nonce-tagged style element", `Array.from(document.querySelectorAll('style')).some(function (s) { return s.nonce !== ''; })`)
	do("close the settings dialog",
		chromedp.KeyEvent(kb.Escape),
		chromedp.WaitNotPresent(chromedp.CSS(".graphiql-dialog")),
	)
	checkCSP()

	// 5. The token survives a reload.
	do("reload",
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(queryEditor)),
		chromedp.WaitVisible(chromedp.ID("scidex-token")),
	)
	if v := eval(`document.getElementById('scidex-token').value`); v != token {
		t.Errorf("after reload the token field holds %q, want %q", v, token)
	}

	// 6. An Authorization header in GraphiQL's Headers editor wins, in any
	// letter case, and is the only one sent.
	do("open the Headers tab", chromedp.Click(chromedp.Search(`//button[normalize-space(.)="Headers"]`)))
	poll("the headers editor", `!!document.querySelector(`+js(headersEditor)+`)`)
	setEditor(headersEditor, `{"authorization": "`+editorToken+`"}`)
	setQuery("{ me { id kind } }")
	do("run with an editor header", chromedp.Click(chromedp.CSS(runButton)))
	poll("the second answer", resultHas(`"seq": 2`))
	if req, _ := fake.request(2); !reflect.DeepEqual(req.Authorization, []string{editorToken}) {
		t.Errorf("query 2 carried Authorization %q, want only the Headers editor's %q", req.Authorization, editorToken)
	}

	// 7. Subscriptions go over the websocket; connection_init carries the
	// token, and the answer shows in the result pane.
	setEditor(headersEditor, "")
	setQuery("subscription { ticks }")
	do("run a subscription", chromedp.Click(chromedp.CSS(runButton)))
	select {
	case payload := <-fake.wsInit:
		var got map[string]any
		if err := json.Unmarshal([]byte(payload), &got); err != nil {
			t.Fatalf("connection_init payload %q: %v", payload, err)
		}
		if want := map[string]any{"Authorization": "Bearer " + token}; !reflect.DeepEqual(got, want) {
			t.Errorf("connection_init payload %s, want %s", payload, js(want))
		}
	case <-time.After(pollTimeout):
		t.Fatalf("no websocket connection_init\n%s", state())
	}
	poll("the subscription's event", resultHas(`"ticks": 101`))

	// ... and there too a header from the editor wins.
	setEditor(headersEditor, `{"Authorization": "Bearer ws-editor", "X-Trace": "t1"}`)
	do("run the subscription again", chromedp.Click(chromedp.CSS(runButton)))
	select {
	case payload := <-fake.wsInit:
		var got map[string]any
		_ = json.Unmarshal([]byte(payload), &got)
		if want := map[string]any{"Authorization": "Bearer ws-editor", "X-Trace": "t1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("second connection_init payload %s, want %s", payload, js(want))
		}
	case <-time.After(pollTimeout):
		t.Fatalf("no second websocket connection_init\n%s", state())
	}
	poll("the second subscription's event", resultHas(`"ticks": 102`))

	// 8. Clear removes the token: no Authorization header any more.
	setEditor(headersEditor, "")
	do("clear the token", chromedp.Click(chromedp.ID("scidex-token-clear")))
	poll("the cleared state", `document.getElementById('scidex-token-state').textContent === 'no token' && localStorage.getItem('scidex:graphiql:token') === null`)
	setQuery("{ me { id } }")
	do("run without a token", chromedp.Click(chromedp.CSS(runButton)))
	poll("the third answer", resultHas(`"seq": 3`))
	if req, _ := fake.request(3); len(req.Authorization) != 0 {
		t.Errorf("query 3 carried Authorization %q after Clear", req.Authorization)
	}
	checkCSP()

	// 9. Nothing left the origin, and nothing went wrong on the page.
	blog.mu.Lock()
	defer blog.mu.Unlock()
	var sawPage, sawWS bool
	assets := map[string]bool{}
	for _, raw := range blog.urls {
		u, err := url.Parse(raw)
		if err != nil {
			t.Errorf("browser loaded an unparsable URL %q", raw)
			continue
		}
		switch u.Scheme {
		case "data", "about", "blob":
			continue
		case "http", "ws":
			if u.Host != origin.Host {
				t.Errorf("browser contacted another origin: %s", raw)
			}
		default:
			t.Errorf("browser loaded %s", raw)
		}
		sawPage = sawPage || u.Path == "/graphiql/"
		sawWS = sawWS || u.Scheme == "ws"
		if strings.HasPrefix(u.Path, "/graphiql/assets/") {
			assets[u.Path[strings.LastIndex(u.Path, "/")+1:]] = true
		}
	}
	for _, name := range []string{"react.production.min.js", "react-dom.production.min.js", "graphql-ws.min.js",
		"graphiql.min.js", "graphiql.min.css", "scidex-graphiql.js", "scidex-graphiql.css"} {
		if !assets[name] {
			t.Errorf("the browser never loaded %s", name)
		}
	}
	if !sawPage || !sawWS {
		t.Errorf("the network log looks incomplete (page %v, websocket %v, assets %v): %q", sawPage, sawWS, assets, blog.urls)
	}
	for _, e := range blog.exceptions {
		t.Errorf("uncaught exception on the page: %s", e)
	}
	for _, e := range blog.errors {
		if strings.Contains(e, "Content Security Policy") || strings.Contains(e, "Refused to") {
			t.Errorf("CSP error: %s", e)
		} else {
			t.Logf("browser error log: %s", e)
		}
	}
}

func (l *browserLog) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	urls := make([]string, len(l.urls))
	for i, u := range l.urls {
		if len(u) > 80 {
			u = u[:80] + "…"
		}
		urls[i] = u
	}
	return fmt.Sprintf("urls: %q\nexceptions: %q\nerrors: %q", urls, l.exceptions, l.errors)
}
