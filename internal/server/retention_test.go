package server_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/server"
	"github.com/scidex/substrate/internal/store"
)

// testClock is the server's clock, moved by the test.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

type archivedItem struct {
	ID       string
	Delivery *struct {
		Status     string
		AckedAt    *time.Time
		ArchivedAt *time.Time
	}
}

func mailboxArchived(t *testing.T, env *apitest.Env, tok, status string, includeArchived bool) ([]archivedItem, int) {
	t.Helper()
	var out struct {
		Mailbox struct {
			TotalCount int
			Edges      []struct{ Node archivedItem }
		}
	}
	env.OK(t, tok, `query($s: AckStatus!, $a: Boolean) { mailbox(status: $s, includeArchived: $a) { totalCount edges { node { id
		... on Message { delivery { status ackedAt archivedAt } } } } } }`, map[string]any{"s": status, "a": includeArchived}, &out)
	items := make([]archivedItem, len(out.Mailbox.Edges))
	for i, e := range out.Mailbox.Edges {
		items[i] = e.Node
	}
	return items, out.Mailbox.TotalCount
}

// A message completed for the retention period (90 days by default) leaves the
// mailbox lists and stays readable by ref; the clock is the server's, moved by
// the test.
func TestCompletedMessagesAreArchivedAfterTheRetentionPeriod(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.Now = clock.Now }})
	// Tokens are verified by the wall clock; the server's clock decides the rest.
	adaTok, bobTok := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob")
	ada := func() string { return adaTok }
	bob := func() string { return bobTok }

	done := send(t, env, ada(), map[string]any{"recipient": "actor:bob", "body": "Please rerun the NCA"})
	open := send(t, env, ada(), map[string]any{"recipient": "actor:bob", "body": "And read the protocol when you can"})
	rejected := send(t, env, ada(), map[string]any{"recipient": "actor:bob", "body": "Can you do my review too?"})
	for _, m := range []result{done, open, rejected} {
		if m.Typename != "WriteSuccess" {
			t.Fatalf("send: %s %+v", m.Typename, m.Problems)
		}
	}
	if r := ack(t, env, bob(), unpinned(done.Ref), "COMPLETED"); r.Typename != "WriteSuccess" {
		t.Fatalf("complete: %s %+v", r.Typename, r.Problems)
	}
	if r := ack(t, env, bob(), unpinned(rejected.Ref), "REJECTED"); r.Typename != "WriteSuccess" {
		t.Fatalf("reject: %s %+v", r.Typename, r.Problems)
	}
	completedAt := clock.Now()

	// One second short of 90 days it is still listed, not archived.
	clock.Set(completedAt.Add(90*24*time.Hour - time.Second))
	items, total := mailboxArchived(t, env, bob(), "COMPLETED", false)
	if len(items) != 1 || total != 1 || items[0].ID != unpinned(done.Ref) || items[0].Delivery.ArchivedAt != nil {
		t.Fatalf("bob's completed mail a second before the retention period ends: %+v total %d", items, total)
	}

	// At 90 days it is archived: out of the list and its count.
	clock.Set(completedAt.Add(90 * 24 * time.Hour))
	if items, total := mailboxArchived(t, env, bob(), "COMPLETED", false); len(items) != 0 || total != 0 {
		t.Errorf("archived mail still listed: %+v total %d", items, total)
	}
	// Asked for, it is there, saying when it was archived.
	items, total = mailboxArchived(t, env, bob(), "COMPLETED", true)
	if len(items) != 1 || total != 1 || items[0].Delivery.ArchivedAt == nil || !items[0].Delivery.ArchivedAt.Equal(completedAt.Add(90*24*time.Hour)) {
		t.Fatalf("includeArchived: %+v total %d", items, total)
	}
	// Still readable by ref, by the recipient (with the archived delivery) and the sender.
	var got struct {
		Artifact *struct {
			ID       string
			Body     string
			Delivery *struct{ ArchivedAt *time.Time }
		}
	}
	env.OK(t, bob(), `query($r: Ref!) { artifact(ref: $r) { id ... on Message { body delivery { archivedAt } } } }`, map[string]any{"r": unpinned(done.Ref)}, &got)
	if got.Artifact == nil || got.Artifact.Body != "Please rerun the NCA" || got.Artifact.Delivery == nil || got.Artifact.Delivery.ArchivedAt == nil {
		t.Errorf("the archived message by ref, for bob: %+v", got.Artifact)
	}
	env.OK(t, ada(), `query($r: Ref!) { artifact(ref: $r) { id ... on Message { body delivery { archivedAt } } } }`, map[string]any{"r": unpinned(done.Ref)}, &got)
	if got.Artifact == nil || got.Artifact.ID != unpinned(done.Ref) {
		t.Errorf("the archived message by ref, for its sender: %+v", got.Artifact)
	}
	// What is still to do, and what was rejected, stays where it was.
	if items, _ := mailboxArchived(t, env, bob(), "PENDING", false); len(items) != 1 || items[0].ID != unpinned(open.Ref) || items[0].Delivery.ArchivedAt != nil {
		t.Errorf("pending mail after 90 days: %+v", items)
	}
	if items, _ := mailboxArchived(t, env, bob(), "REJECTED", false); len(items) != 1 || items[0].ID != unpinned(rejected.Ref) {
		t.Errorf("rejected mail after 90 days: %+v", items)
	}
}

// The retention period is configuration: a shorter one archives sooner.
func TestMessageRetentionIsConfigurable(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.Now = clock.Now }})
	if got := env.Store.MessageRetention(); got != 90*24*time.Hour {
		t.Errorf("default retention %v, want 2160h", got)
	}
	env = apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.Now = clock.Now },
		Store: func(o *store.Opts) { o.MessageRetention = 24 * time.Hour }})
	m := send(t, env, apitest.Contributor(t, "ada"), map[string]any{"recipient": "actor:bob", "body": "Thanks!"})
	if r := ack(t, env, apitest.Contributor(t, "bob"), unpinned(m.Ref), "COMPLETED"); r.Typename != "WriteSuccess" {
		t.Fatalf("complete: %s %s", r.Typename, r.Message)
	}
	clock.Set(clock.Now().Add(24 * time.Hour))
	if items, _ := mailboxArchived(t, env, apitest.Contributor(t, "bob"), "COMPLETED", false); len(items) != 0 {
		t.Errorf("with 24h retention, mail completed a day ago is listed: %+v", items)
	}
	if !strings.HasPrefix(m.Ref, "message:") {
		t.Errorf("ref %s", m.Ref)
	}
}
