package store_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

func at(actor string, now time.Time) context.Context {
	return request.With(context.Background(), &request.Context{
		Actor: auth.Actor{ID: actor, Kind: auth.KindHuman, Permissions: []auth.Permission{auth.PermContributor}}, RequestID: request.NewID(), Now: now,
	})
}

// A key answers replays for 24 hours, then may be used again.
func TestIdempotencyKeysExpire(t *testing.T) {
	s := store.New(store.Opts{Pool: dbtest.Pool(t)})
	t0 := time.Now().UTC()
	create := func(now time.Time, title string) (*store.WriteResult, error) {
		return s.CreateArtifact(at("ada", now), store.CreateParams{Type: "hypothesis", Title: title, Content: json.RawMessage(`{}`), IdempotencyKey: "k"})
	}
	first, err := create(t0, "one")
	if err != nil {
		t.Fatal(err)
	}
	again, err := create(t0.Add(23*time.Hour), "one")
	if err != nil || !again.Replay || again.Ref != first.Ref || again.RequestID != first.RequestID {
		t.Fatalf("replay within 24h: %+v %v", again, err)
	}
	if _, err := create(t0.Add(23*time.Hour), "two"); err == nil {
		t.Fatal("reuse within 24h accepted")
	} else if p, _ := problem.As(err); p == nil || p.Code != problem.IdempotencyKeyReuse {
		t.Fatalf("reuse: %v", err)
	}
	later, err := create(t0.Add(25*time.Hour), "two")
	if err != nil || later.Replay || later.Ref == first.Ref {
		t.Fatalf("after expiry the key is free: %+v %v", later, err)
	}
	n, err := s.DeleteExpiredIdempotencyKeys(context.Background(), t0.Add(50*time.Hour))
	if err != nil || n != 1 {
		t.Errorf("cleanup deleted %d (%v), want 1", n, err)
	}
}

// Every mutation honours its key: a replay writes nothing and answers the same.
func TestIdempotencyForEveryMutation(t *testing.T) {
	s := store.New(store.Opts{Pool: dbtest.Pool(t)})
	ctx := as("ada")
	h, err := s.CreateArtifact(ctx, store.CreateParams{Type: "hypothesis", Title: "h", Content: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := s.CreateArtifact(ctx, store.CreateParams{Type: "hypothesis", Title: "h2", Content: json.RawMessage(`{}`)})
	ref := h.Artifact.Unpinned().String()
	calls := map[string]func() (*store.WriteResult, error){
		"update": func() (*store.WriteResult, error) {
			return s.UpdateArtifact(as("ada"), store.UpdateParams{Ref: ref, BaseContentHash: h.ContentHash, Title: ptr("h!"), IdempotencyKey: "u"})
		},
		"link": func() (*store.WriteResult, error) {
			return s.AddLink(as("ada"), store.LinkParams{From: ref, Predicate: "related_to", To: h2.Artifact.Unpinned().String(), IdempotencyKey: "l"})
		},
		"signal": func() (*store.WriteResult, error) {
			return s.AddSignal(as("ada"), store.SignalParams{Ref: ref, Kind: "vote", Value: 1, IdempotencyKey: "s"})
		},
		"comment": func() (*store.WriteResult, error) {
			return s.AddComment(as("ada"), store.CommentParams{Ref: ref, Body: "b", IdempotencyKey: "c"})
		},
	}
	for name, call := range calls {
		first, err := call()
		if err != nil || first.Replay {
			t.Fatalf("%s: %+v %v", name, first, err)
		}
		var journal int
		_ = s.Pool().QueryRow(context.Background(), "SELECT count(*) FROM write_journal").Scan(&journal)
		again, err := call()
		if err != nil || !again.Replay || again.Ref != first.Ref || again.RequestID != first.RequestID {
			t.Errorf("%s replay: %+v %v", name, again, err)
		}
		var after int
		_ = s.Pool().QueryRow(context.Background(), "SELECT count(*) FROM write_journal").Scan(&after)
		if after != journal {
			t.Errorf("%s replay wrote %d journal rows", name, after-journal)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A write never waits for a second pool connection while it holds one: with a
// pool of two connections, a cold schema cache and many concurrent writes
// (including duplicates blocked on the same idempotency key), all finish.
func TestWritesFitInTheirOwnConnection(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := store.New(store.Opts{Pool: pool})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			key := ""
			if i%2 == 0 {
				key = "same"
			}
			rc := request.From(as("ada"))
			_, err := s.CreateArtifact(request.With(ctx, rc), store.CreateParams{Type: "hypothesis", Title: "t", Content: json.RawMessage(`{}`), IdempotencyKey: key})
			if err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A first request with a key costs no statement more than one without; a
// replay is still answered from the key's record whatever the request would
// meet now (an update's base is no longer current), and a reuse of the key is
// refused as one even when the other request would not pass its checks.
func TestKeysCostNothingUntilReplayed(t *testing.T) {
	s := store.New(store.Opts{Pool: dbtest.Pool(t)})
	if _, err := s.CreateArtifact(as("ada"), store.CreateParams{Type: "hypothesis", Title: "warm-up", Content: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	ctx, n := counted(as("ada"))
	c, err := s.CreateArtifact(ctx, store.CreateParams{Type: "hypothesis", Title: "keyed", Content: json.RawMessage(`{"n":0}`), IdempotencyKey: "create-1"})
	if err != nil {
		t.Fatal(err)
	}
	if n.Count() != 1 {
		t.Errorf("a create with a key ran %d statements, want 1", n.Count())
	}
	r := c.Artifact.Unpinned().String()
	update := store.UpdateParams{Ref: r, BaseContentHash: c.ContentHash, Patch: replacePatch("/n", 1), IdempotencyKey: "update-1"}
	u, err := s.UpdateArtifact(as("ada"), update)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateArtifact(as("ada"), store.UpdateParams{Ref: r, BaseContentHash: u.ContentHash, Patch: replacePatch("/n", 2)}); err != nil {
		t.Fatal(err)
	}
	again, err := s.UpdateArtifact(as("ada"), update)
	if err != nil || !again.Replay || again.ContentHash != u.ContentHash || again.RequestID != u.RequestID {
		t.Fatalf("replay of an update whose base has moved on: %+v %v, want the stored result", again, err)
	}
	bad := store.CreateParams{Type: "hypothesis", Title: "", Content: json.RawMessage(`[1]`), IdempotencyKey: "create-1"}
	if _, err := s.CreateArtifact(as("ada"), bad); err == nil {
		t.Fatal("an invalid request reusing a key was accepted")
	} else if p, _ := problem.As(err); p == nil || p.Code != problem.IdempotencyKeyReuse {
		t.Fatalf("an invalid request reusing a key: %v, want IDEMPOTENCY_KEY_REUSE", err)
	}
	a, err := s.Get(as("ada"), ref.MustParse(r))
	if err != nil || a.Version != 3 {
		t.Fatalf("after two updates and a replay: version %d (%v), want 3", a.Version, err)
	}
}
