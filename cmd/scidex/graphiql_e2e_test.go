package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/scidex/substrate/internal/e2e"
)

// The README's tour in a real browser against the real binary on the embedded
// default: paste a token into GraphiQL, create a hypothesis, read it back, see a
// validation failure.
func TestTourInGraphiQL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and a browser")
	}
	exe := e2e.FindChromium(t)
	dataDir := e2e.DataDir(t)
	p := e2e.Start(t, e2e.Opts{DataDir: dataDir})
	tok := e2e.Token(t, dataDir, "ada", "contributor")
	ctx := e2e.NewBrowser(t, exe)

	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	const editor = ".graphiql-query-editor .CodeMirror"
	pane := `(document.querySelector('.graphiql-response') || {innerText: ''}).innerText`
	state := func() string {
		v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](pane))
		return "result pane: " + v
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(c, steps...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, state())
		}
	}
	waitFor := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second),
			chromedp.WithPollingInterval(25*time.Millisecond))); err != nil {
			t.Fatalf("waiting for %s: %v\n%s", what, err, state())
		}
	}
	run := func(query, want string, meanwhile ...func()) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(function(){ document.querySelector(`+js(editor)+`).CodeMirror.setValue(`+js(query)+`); return ''; })()`)); err != nil {
			t.Fatal(err)
		}
		waitFor("GraphiQL to parse the query", `(function(){ var cm = document.querySelector(`+js(editor)+`).CodeMirror;
			return !!(cm.documentAST && cm.documentAST.loc && cm.documentAST.loc.source.body === `+js(query)+`); })()`)
		do("run", chromedp.Click(chromedp.CSS(".graphiql-execute-button")))
		for _, f := range meanwhile {
			f()
		}
		waitFor("the answer to contain "+want, pane+`.includes(`+js(want)+`)`)
	}

	// The first action runs on the browser's own context: it starts the browser,
	// which lives as long as that context.
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/graphiql")); err != nil {
		t.Fatal(err)
	}
	do("open GraphiQL", chromedp.WaitVisible(chromedp.CSS(editor)), chromedp.WaitVisible(chromedp.ID("scidex-token")))
	do("paste the token", chromedp.SendKeys(chromedp.ID("scidex-token"), tok))

	run(`{ me { id kind permissions } }`, `"id": "ada"`)
	run(`mutation { createArtifact(input: {type: "hypothesis", title: "TREM2 R47H impairs microglial phagocytosis",
  content: {target_gene: "TREM2", confidence: 0.6}}) { __typename ... on WriteSuccess { ref } } }`, `"__typename": "WriteSuccess"`)
	run(`{ artifacts(type: "hypothesis", filter: {content: {target_gene: "TREM2"}}) { totalCount edges { node { title ... on Hypothesis { targetGene } } } } }`,
		`"title": "TREM2 R47H impairs microglial phagocytosis"`)
	run(`mutation { createArtifact(input: {type: "hypothesis", id: "h:1", title: "x", content: {confidence: "high"}}) {
  ... on ValidationFailed { problems { path constraint } } } }`, `"path": "content.confidence"`)

	// A live subscription over GraphiQL's websocket, authenticated by the pasted
	// token: a hypothesis created elsewhere shows up in the result pane.
	data, errs := p.GraphQL(t, tok, `{ poll(limit: 1) { cursor } }`, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	since := data["poll"].(map[string]any)["cursor"].(string)
	run(`subscription { events(types: ["hypothesis.created"], since: `+js(since)+`) { type ref actor { id } artifact { title } } }`, `"title": "Seen live in GraphiQL"`, func() {
		if _, errs := p.GraphQL(t, tok, `mutation { createArtifact(input: {type: "hypothesis", title: "Seen live in GraphiQL", content: {}}) { __typename } }`, nil); len(errs) > 0 {
			t.Fatal(errs)
		}
	})
}
