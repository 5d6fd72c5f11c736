package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
	"github.com/scidex/substrate/internal/ref"
)

// updates collects a client's notifications/resources/updated.
type updates chan string

func (u updates) handler(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
	u <- req.Params.URI
}

// next is the next notification's URI; the test fails if none comes.
func (u updates) next(t *testing.T) string {
	t.Helper()
	select {
	case uri := <-u:
		return uri
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/resources/updated within 30s")
		return ""
	}
}

// connectWith opens an SDK client session on /mcp with client options and
// the protocol revision to ask for ("" for the SDK's latest).
func connectWith(t *testing.T, e *apitest.Env, token string, opts *sdk.ClientOptions, revision string, mw ...sdk.Middleware) (*sdk.ClientSession, error) {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "mcp-test", Version: "1"}, opts)
	c.AddReceivingMiddleware(mw...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var so *sdk.ClientSessionOptions
	if revision != "" {
		so = &sdk.ClientSessionOptions{ProtocolVersion: revision}
	}
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.Server.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token}}}, so)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func createHypothesis(t *testing.T, e *apitest.Env, token, title string) string {
	t.Helper()
	var c struct{ CreateArtifact struct{ Ref string } }
	e.OK(t, token, `mutation($t: String!) { createArtifact(input: {type: "hypothesis", title: $t, content: {target_gene: "TREM2", confidence: 0.5}}) { ... on WriteSuccess { ref } } }`,
		map[string]any{"t": title}, &c)
	return unpinned(c.CreateArtifact.Ref)
}

// retitle updates an artifact's title as another client would, over GraphQL.
func retitle(t *testing.T, e *apitest.Env, token, r, title string) {
	t.Helper()
	var got struct{ Artifact struct{ ContentHash string } }
	e.OK(t, token, `query($r: Ref!) { artifact(ref: $r) { contentHash } }`, map[string]any{"r": r}, &got)
	var u struct {
		UpdateArtifact struct {
			Typename string `json:"__typename"`
		}
	}
	e.OK(t, token, `mutation($r: Ref!, $h: String!, $t: String!) { updateArtifact(input: {ref: $r, baseContentHash: $h, title: $t}) { __typename } }`,
		map[string]any{"r": r, "h": got.Artifact.ContentHash, "t": title}, &u)
	if u.UpdateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("update %s: %s", r, u.UpdateArtifact.Typename)
	}
}

// ackTo is client middleware handing each notifications/subscriptions/acknowledged
// to acks (the SDK client has no handler option for it).
func ackTo(acks chan<- *sdk.SubscriptionsAcknowledgedParams) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if p, ok := req.GetParams().(*sdk.SubscriptionsAcknowledgedParams); ok && method == "notifications/subscriptions/acknowledged" {
				acks <- p
			}
			return next(ctx, method, req)
		}
	}
}

type artifactResource struct {
	Ref, Title, ContentHash string
	Content                 map[string]any
}

func readResource(t *testing.T, cs *sdk.ClientSession, uri string) artifactResource {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" || res.Contents[0].URI != uri {
		t.Fatalf("read %s: %+v", uri, res.Contents)
	}
	var a artifactResource
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &a); err != nil {
		t.Fatalf("read %s: %v: %s", uri, err, res.Contents[0].Text)
	}
	return a
}

// Artifacts are resources: the template is listed, a URI reads as
// get_artifact answers, and a subscriber over /mcp (a subscriptions/listen
// stream, the 2026-07-28 revision) is told when another client edits the
// artifact, and only about what it subscribed to.
func TestResourceSubscriptionOverHTTP(t *testing.T) {
	e := env(t, mcp.Options{})
	ada := apitest.Contributor(t, "ada")
	watched := createHypothesis(t, e, ada, "watched")
	other := createHypothesis(t, e, ada, "other")
	uri := mcp.ResourceURI(ref.MustParse(watched))
	if want := "scidex://" + strings.Replace(watched, ":", "/", 1); uri != want {
		t.Fatalf("resource URI %q, want %q", uri, want)
	}

	got := make(updates, 16)
	acks := make(chan *sdk.SubscriptionsAcknowledgedParams, 4)
	cs, err := connectWith(t, e, apitest.Token(t, "viola"), &sdk.ClientOptions{ResourceUpdatedHandler: got.handler}, "", ackTo(acks))
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28 (the stateless revision)", v)
	}
	if caps := cs.InitializeResult().Capabilities.Resources; caps == nil || !caps.Subscribe {
		t.Fatalf("resources capability %+v: want subscribe", caps)
	}
	tl, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != mcp.ResourceTemplate {
		t.Fatalf("resource templates: %+v, %v", tl, err)
	}
	if a := readResource(t, cs, uri); a.Ref == "" || a.Title != "watched" || a.Content["target_gene"] != "TREM2" {
		t.Fatalf("read: %+v", a)
	}

	// Under this revision Subscribe opens a listen stream and returns; the
	// server's first message on it acknowledges what it agreed to.
	if err := cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	select {
	case ack := <-acks:
		if len(ack.Notifications.ResourceSubscriptions) != 1 || ack.Notifications.ResourceSubscriptions[0] != uri {
			t.Fatalf("acknowledged %+v, want %s", ack.Notifications, uri)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the subscription was not acknowledged within 30s")
	}
	watchers := mcp.Watching(e.App.Handler.MCP(), watched)
	if watchers != 1 {
		t.Fatalf("after subscribing the server holds %d subscriptions to %s, want 1", watchers, watched)
	}
	retitle(t, e, ada, other, "other, edited") // not subscribed: no notification
	retitle(t, e, ada, watched, "watched, edited")
	if u := got.next(t); u != uri {
		t.Fatalf("notified of %q, want %q", u, uri)
	}
	if a := readResource(t, cs, uri); a.Title != "watched, edited" {
		t.Fatalf("after the notification the resource reads %+v", a)
	}
	select {
	case u := <-got:
		t.Fatalf("a notification for %q, which nothing changed since", u)
	default:
	}

}

// Subscribing reads the artifact first, with the subscriber's credentials:
// a private message of others, a missing artifact and a URI that is not an
// artifact's are refused, and nothing is recorded.
func TestResourceRefusals(t *testing.T) {
	e := env(t, mcp.Options{})
	ada := apitest.Contributor(t, "ada")
	var sent struct{ SendMessage struct{ Ref string } }
	e.OK(t, ada, `mutation { sendMessage(input: {recipient: "actor:grace", body: "private"}) { ... on WriteSuccess { ref } } }`, nil, &sent)
	msg := unpinned(sent.SendMessage.Ref)
	if msg == "" {
		t.Fatal("no message sent")
	}
	mallory := apitest.Contributor(t, "mallory")
	cs := mustConnect(t, e, mallory)
	// The SDK client does not report a refused subscriptions/listen (it opens
	// the stream and returns), so subscriptions are checked on a session,
	// where resources/subscribe answers.
	session := sessionFor(t, e, mallory, nil)
	for _, c := range []struct{ uri, want, subscribeWant string }{
		{uri: mcp.ResourceURI(ref.MustParse(msg)), want: "not found"},
		{uri: "scidex://hypothesis/no-such-thing", want: "not found"},
		{uri: "scidex://hypothesis/", want: "id is empty"},
		{uri: "scidex://Hypothesis/x", want: "malformed ref"},
		// Not ours: no template matches it (read), and it is no artifact's URI (subscribe).
		{uri: "file:///etc/passwd", want: "not found", subscribeWant: "scidex://<type>/<id>"},
	} {
		if c.subscribeWant == "" {
			c.subscribeWant = c.want
		}
		if _, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: c.uri}); err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.want)) {
			t.Errorf("read %s: %v, want an error saying %q", c.uri, err, c.want)
		}
		if err := session.Subscribe(context.Background(), &sdk.SubscribeParams{URI: c.uri}); err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.subscribeWant)) {
			t.Errorf("subscribe %s: %v, want an error saying %q", c.uri, err, c.subscribeWant)
		}
	}
	if n := mcp.Watching(e.App.Handler.MCP(), msg); n != 0 {
		t.Errorf("a refused subscription was recorded (%d)", n)
	}
	// Grace, a participant, reads her message.
	grace := mustConnect(t, e, apitest.Contributor(t, "grace"))
	if a := readResource(t, grace, mcp.ResourceURI(ref.MustParse(msg))); a.Ref == "" {
		t.Fatalf("the recipient cannot read her message: %+v", a)
	}
}

// Over stateless HTTP the older resources/subscribe could never be followed
// by a notification: it is refused, saying what to use instead.
func TestLegacySubscribeOverHTTPIsRefused(t *testing.T) {
	e := env(t, mcp.Options{})
	ada := apitest.Contributor(t, "ada")
	r := createHypothesis(t, e, ada, "h")
	cs, err := connectWith(t, e, ada, nil, "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	err = cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: mcp.ResourceURI(ref.MustParse(r))})
	if err == nil || !strings.Contains(err.Error(), "subscriptions/listen") {
		t.Fatalf("legacy subscribe over /mcp: %v, want a refusal naming subscriptions/listen", err)
	}
	if n := mcp.Watching(e.App.Handler.MCP(), r); n != 0 {
		t.Errorf("the refused subscription was recorded (%d)", n)
	}
}

// On a session that lasts (stdio, here its in-memory twin), the older
// resources/subscribe works too.
func TestResourceSubscriptionOnASession(t *testing.T) {
	e := env(t, mcp.Options{})
	ada := apitest.Contributor(t, "ada")
	r := createHypothesis(t, e, ada, "h")
	uri := mcp.ResourceURI(ref.MustParse(r))
	ctx := t.Context()
	got := make(updates, 16)
	cs := sessionFor(t, e, apitest.Token(t, "viola"), &sdk.ClientOptions{ResourceUpdatedHandler: got.handler})
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	retitle(t, e, ada, r, "edited")
	if u := got.next(t); u != uri {
		t.Fatalf("notified of %q, want %q", u, uri)
	}
	// Unsubscribing is answered once the server has forgotten it.
	if n := mcp.Watching(e.App.Handler.MCP(), r); n != 1 {
		t.Fatalf("%d subscriptions to %s, want 1", n, r)
	}
	if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if n := mcp.Watching(e.App.Handler.MCP(), r); n != 0 {
		t.Fatalf("after unsubscribing the server holds %d subscriptions to %s", n, r)
	}
}

// sessionFor is a client session with the MCP server over an in-memory
// transport, the twin of `scidex mcp` on stdio: the caller's token fixed, the
// older revision's resources/subscribe answered on the session.
func sessionFor(t *testing.T, e *apitest.Env, token string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	return sessionAs(t, e, mcp.Caller{Authorization: "Bearer " + token}, opts)
}

// sessionAs is sessionFor for any caller (a writer sees the mutation and
// substrate tools).
func sessionAs(t *testing.T, e *apitest.Env, c mcp.Caller, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	srv := e.App.Handler.MCP().MCPServer(c)
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "mcp-test", Version: "1"}, opts).
		Connect(t.Context(), ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// resources/list lists what the caller may read, newest first, paged: an
// agent browsing resources sees the artifacts (it was empty), and never one
// it may not read.
func TestResourcesListWhatTheCallerMayRead(t *testing.T) {
	e := env(t, mcp.Options{})
	alice := apitest.Contributor(t, "alice")
	writes := []any{}
	for i := range 55 {
		writes = append(writes, map[string]any{"createArtifact": map[string]any{"type": "hypothesis", "title": fmt.Sprintf("listed %02d", i), "content": map[string]any{}}})
	}
	var b struct{ Batch struct{ Committed bool } }
	e.OK(t, alice, `mutation($w: [WriteInput!]!) { batch(input: {writes: $w}) { committed } }`, map[string]any{"w": writes}, &b)
	if !b.Batch.Committed {
		t.Fatal("batch not committed")
	}
	var sent struct{ SendMessage struct{ Ref string } }
	e.OK(t, apitest.Contributor(t, "bob"), `mutation { sendMessage(input: {recipient: "actor:carol", subject: "not for alice", body: "secret"}) { ... on WriteSuccess { ref } } }`, nil, &sent)
	if sent.SendMessage.Ref == "" {
		t.Fatal("no message")
	}
	cs := mustConnect(t, e, alice)
	var all []*sdk.Resource
	cursor, pages := "", 0
	for {
		res, err := cs.ListResources(context.Background(), &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		all = append(all, res.Resources...)
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if pages < 2 || len(all) < 55 {
		t.Fatalf("%d resources in %d pages, want at least 55 in 2", len(all), pages)
	}
	if all[0].Title != "listed 54" || !strings.HasPrefix(all[0].URI, "scidex://hypothesis/") {
		t.Errorf("newest first: the first is %+v", all[0])
	}
	msg := strings.Split(sent.SendMessage.Ref, "@")[0]
	for _, r := range all {
		if strings.Contains(r.URI, strings.TrimPrefix(msg, "message:")) || r.Title == "not for alice" {
			t.Fatalf("alice is listed bob's message to carol: %+v", r)
		}
	}
	// Each listed resource reads.
	got, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: all[0].URI})
	if err != nil || !strings.Contains(got.Contents[0].Text, "listed 54") {
		t.Fatalf("read %s: %v", all[0].URI, err)
	}
}
