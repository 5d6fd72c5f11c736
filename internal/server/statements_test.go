package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/server"
)

// nested is what the statement-count tests ask of each artifact: its creator,
// its signals, and its first links with their targets' titles and signals. Each
// is one statement for all the artifacts of a page at once, whatever their number.
const nested = `title createdBy { id kind }
      signals { vote { score count } }
      links(first: 5) { edges { node { predicate createdBy { id } to { title signals { vote { score } } } } } }`

// linkedHypothesis writes a hypothesis with a vote and a link to a knowledge
// gap, so that every nested field of the statement-count queries has data.
func linkedHypothesis(t *testing.T, env *apitest.Env, tok, title string, i int) result {
	t.Helper()
	h := createH(t, env, apitest.Contributor(t, fmt.Sprintf("author%d", i%5)), map[string]any{"title": title, "content": map[string]any{}})
	gap := mustWrite(t, env, tok, "createArtifact", "CreateArtifactInput", map[string]any{"type": "knowledge_gap", "title": fmt.Sprintf("gap of %s", title), "content": map[string]any{"description": "open"}})
	mustWrite(t, env, tok, "addLink", "AddLinkInput", map[string]any{"from": unpinned(h.Ref), "predicate": "addresses", "to": unpinned(gap.Ref)})
	if r := signal(t, env, fmt.Sprintf("voter%d", i%3), unpinned(h.Ref), "vote", 1); r.Typename != "WriteSuccess" {
		t.Fatalf("vote: %+v", r)
	}
	return h
}

// A page of polled events with each event's artifact, its creator, signals and
// links costs the same number of statements for 2, 10 or 40 events: the
// artifacts are read in one statement and what is asked below them a level at a
// time, the way artifacts and search load theirs.
func TestPollStatementsAreConstant(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.ReportStatements = true }})
	tok := apitest.Contributor(t, "ada")
	q := `query($s: Cursor) { poll(since: $s, types: ["hypothesis.created"]) { cursor hasMore events { type ref
	  artifact { ` + nested + ` } } } }`
	plain := `query($s: Cursor) { poll(since: $s, types: ["hypothesis.created"]) { events { artifact { title } } } }`
	counts, plainCounts := map[int]float64{}, map[int]float64{}
	for _, n := range []int{2, 10, 40} {
		since := tail(t, env, tok)
		want := map[string]string{}
		for i := range n {
			title := fmt.Sprintf("h%d-%d", n, i)
			want[linkedHypothesis(t, env, tok, title, i).Ref] = title
		}
		r := env.Post(t, tok, q, map[string]any{"s": since})
		if len(r.Errors) > 0 {
			t.Fatalf("%s", r.Raw)
		}
		var got struct {
			Poll struct {
				Events []struct {
					Ref      string
					Artifact *struct {
						Title     string
						CreatedBy struct{ ID string }
						Signals   struct{ Vote *struct{ Score, Count int } }
						Links     struct {
							Edges []struct {
								Node struct {
									Predicate string
									To        struct{ Title string }
								}
							}
						}
					}
				}
			}
		}
		if err := jsonUnmarshal(r.Data, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Poll.Events) != n {
			t.Fatalf("%d events polled, want %d", len(got.Poll.Events), n)
		}
		for _, e := range got.Poll.Events {
			a := e.Artifact
			if a == nil || a.Title != want[e.Ref] || a.CreatedBy.ID == "" || a.Signals.Vote == nil || a.Signals.Vote.Count != 1 ||
				len(a.Links.Edges) != 1 || a.Links.Edges[0].Node.To.Title != "gap of "+a.Title {
				t.Errorf("event %s: artifact %+v", e.Ref, a)
			}
		}
		c, ok := r.Extensions["sqlStatements"].(float64)
		if !ok {
			t.Fatalf("no sqlStatements extension: %s", r.Raw)
		}
		counts[n] = c
		p := env.Post(t, tok, plain, map[string]any{"s": since})
		if len(p.Errors) > 0 {
			t.Fatalf("%s", p.Raw)
		}
		plainCounts[n] = p.Extensions["sqlStatements"].(float64)
	}
	if counts[2] != counts[10] || counts[10] != counts[40] {
		t.Errorf("statements per poll grow with its events: %v", counts)
	}
	if plainCounts[2] != plainCounts[10] || plainCounts[10] != plainCounts[40] {
		t.Errorf("statements per poll of the artifacts' titles grow with its events: %v", plainCounts)
	}
	t.Logf("statements per poll of 2, 10, 40 events: %v; of their titles alone: %v", counts, plainCounts)
}

// A page of search hits with the same nested fields costs the same for 1, 5 or
// 20 hits.
func TestSearchStatementsAreConstant(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.ReportStatements = true }})
	tok := apitest.Contributor(t, "ada")
	q := `query($q: String!) { search(query: $q, types: ["hypothesis"], first: 50) { modeUsed edges { node { score
	  artifact { ` + nested + ` } } } } }`
	counts := map[int]float64{}
	for _, n := range []int{1, 5, 20} {
		word := fmt.Sprintf("marker%dword", n)
		for i := range n {
			linkedHypothesis(t, env, tok, fmt.Sprintf("%s %d", word, i), i)
		}
		r := env.Post(t, tok, q, map[string]any{"q": word})
		if len(r.Errors) > 0 {
			t.Fatalf("%s", r.Raw)
		}
		var got struct {
			Search struct {
				ModeUsed string
				Edges    []struct {
					Node struct {
						Artifact struct {
							Title     string
							CreatedBy struct{ ID string }
							Signals   struct{ Vote *struct{ Score, Count int } }
							Links     struct {
								Edges []struct {
									Node struct{ To struct{ Title string } }
								}
							}
						}
					}
				}
			}
		}
		if err := jsonUnmarshal(r.Data, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Search.Edges) != n {
			t.Fatalf("%d hits for %q, want %d (mode %s)", len(got.Search.Edges), word, n, got.Search.ModeUsed)
		}
		for _, e := range got.Search.Edges {
			a := e.Node.Artifact
			if a.CreatedBy.ID == "" || a.Signals.Vote == nil || a.Signals.Vote.Count != 1 ||
				len(a.Links.Edges) != 1 || a.Links.Edges[0].Node.To.Title != "gap of "+a.Title {
				t.Errorf("hit %+v", a)
			}
		}
		c, ok := r.Extensions["sqlStatements"].(float64)
		if !ok {
			t.Fatalf("no sqlStatements extension: %s", r.Raw)
		}
		counts[n] = c
	}
	if counts[1] != counts[5] || counts[5] != counts[20] {
		t.Errorf("statements per search grow with its hits: %v", counts)
	}
	t.Logf("statements per search of 1, 5, 20 hits: %v", counts)
}

// The artifacts of a poll page are read together, but each reader still sees
// only what it may read: the message's events, and the link from it, reach its
// sender, its recipient and admins; anyone else gets neither.
func TestPolledArtifactsKeepMessagesPrivate(t *testing.T) {
	env := apitest.New(t)
	ada := apitest.Contributor(t, "ada")
	since := tail(t, env, ada)
	msg := send(t, env, ada, map[string]any{"recipient": "actor:bob", "subject": "private note", "body": "for bob"})
	if msg.Typename != "WriteSuccess" {
		t.Fatalf("send: %+v", msg)
	}
	h := createH(t, env, ada, map[string]any{"title": "public hypothesis", "content": map[string]any{}})
	mustWrite(t, env, ada, "addLink", "AddLinkInput", map[string]any{"from": unpinned(msg.Ref), "predicate": "related_to", "to": unpinned(h.Ref)})
	q := `query($s: Cursor) { poll(since: $s) { events { type ref artifact { title } } } }`
	type polled struct {
		Poll struct {
			Events []struct {
				Type     string
				Artifact *struct{ Title string }
			}
		}
	}
	see := func(tok string) string {
		var p polled
		env.OK(t, tok, q, map[string]any{"s": since}, &p)
		var out []string
		for _, e := range p.Poll.Events {
			title := "null"
			if e.Artifact != nil {
				title = e.Artifact.Title
			}
			out = append(out, e.Type+"="+title)
		}
		return fmt.Sprint(out)
	}
	all := "[message.created=private note hypothesis.created=public hypothesis link.created=private note]"
	for name, c := range map[string]struct{ tok, want string }{
		"sender":    {ada, all},
		"recipient": {apitest.Contributor(t, "bob"), all},
		"admin":     {apitest.Token(t, "root", auth.PermAdmin), all},
		"other":     {apitest.Contributor(t, "carol"), "[hypothesis.created=public hypothesis]"},
	} {
		if got := see(c.tok); got != c.want {
			t.Errorf("%s polled %s, want %s", name, got, c.want)
		}
	}
}

// Each event of a subscription is a response of its own: its artifact is one
// statement, however many events the subscription has sent before.
func TestSubscriptionEventArtifactIsOneStatement(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.ReportStatements = true }})
	ada := apitest.Contributor(t, "ada")
	ws := env.WS(t, ada)
	// The server's own subscribers (its cancel watch, its MCP catalog) count too.
	base := env.Hub.Subscribers()
	ws.Subscribe("s", `subscription { events(types: ["hypothesis.created"]) { ref artifact { title } } }`, nil)
	// Live from now: once the hub counts it, every event arrives live and
	// nothing but the event's own fields is read for it.
	waitFor(t, func() bool { return env.Hub.Subscribers() == base+1 })
	var counts []float64
	for i := range 5 {
		h := createH(t, env, ada, map[string]any{"title": fmt.Sprintf("live %d", i), "content": map[string]any{}})
		m := ws.Next("s")
		var p struct {
			Data struct {
				Events struct {
					Ref      string
					Artifact *struct{ Title string }
				}
			}
			Extensions struct{ SQLStatements *float64 }
		}
		if err := jsonUnmarshal(m.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if e := p.Data.Events; e.Ref != h.Ref || e.Artifact == nil || e.Artifact.Title != fmt.Sprintf("live %d", i) {
			t.Fatalf("event %d: %s", i, m.Payload)
		}
		if p.Extensions.SQLStatements == nil {
			t.Fatalf("no sqlStatements extension: %s", m.Payload)
		}
		counts = append(counts, *p.Extensions.SQLStatements)
	}
	// The counter is the subscription's: each event adds what it read (the
	// first also counts the read of where the log ends, where it began).
	for i := 1; i < len(counts); i++ {
		if n := counts[i] - counts[i-1]; n > 1 {
			t.Errorf("event %d read %v statements, want at most 1 (counts %v)", i, n, counts)
		}
	}
	t.Logf("statements counted after each event: %v", counts)
}

// An artifact stored at an older schema version than its type's (here
// version 1 of a type installed at its current version, the versions between
// never registered) is upgraded on read without asking for those versions
// again: after the first read, it costs the statements a current one costs.
// It asked for each missing version on every read (3 more statements a Prism
// page on bench/prism's dataset).
func TestOldSchemaVersionReadsCostNoMore(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.ReportStatements = true }})
	tok := apitest.Contributor(t, "ada")
	old := createH(t, env, tok, map[string]any{"title": "stored long ago", "content": map[string]any{}})
	current := createH(t, env, tok, map[string]any{"title": "stored today", "content": map[string]any{}})
	typ, id, _ := strings.Cut(unpinned(old.Ref), ":")
	var latest int
	if err := env.Pool.QueryRow(context.Background(), `SELECT max(version) FROM schemas WHERE type = $1`, typ).Scan(&latest); err != nil {
		t.Fatal(err)
	}
	var missing int
	if err := env.Pool.QueryRow(context.Background(), `SELECT count(*) FROM generate_series(2, $2 - 1) v
	    WHERE NOT EXISTS (SELECT 1 FROM schemas WHERE type = $1 AND version = v)`, typ, latest).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	if missing == 0 {
		t.Fatalf("%s is at version %d with every version between: the test needs a gap", typ, latest)
	}
	if _, err := env.Pool.Exec(context.Background(), `UPDATE artifacts SET schema_version = 1 WHERE type = $1 AND id = $2`, typ, id); err != nil {
		t.Fatal(err)
	}
	statements := func(ref string) float64 {
		t.Helper()
		r := env.Post(t, tok, `query($r: Ref!) { artifact(ref: $r) { title content } }`, map[string]any{"r": unpinned(ref)})
		n, ok := r.Extensions["sqlStatements"].(float64)
		if len(r.Errors) > 0 || !ok {
			t.Fatalf("%s", r.Raw)
		}
		return n
	}
	statements(old.Ref) // the first read learns which versions are missing
	want := statements(current.Ref)
	for range 3 {
		if got := statements(old.Ref); got != want {
			t.Errorf("reading an artifact stored at version 1 of %s (v%d, %d versions missing between) costs %v statements; a current one %v",
				typ, latest, missing, got, want)
		}
	}
}
