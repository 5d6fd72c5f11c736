package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
)

func count(t *testing.T, s *store.Store, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := s.Pool().QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Writes through a transaction's store commit together with the caller's own
// statement in it (the job insert of a tool call), and are invisible to
// everyone else until then; a rollback takes both back.
func TestTxWritesCommitWithTheCallersStatements(t *testing.T) {
	s := store.New(store.Opts{Pool: dbtest.Pool(t)})
	if _, err := s.Pool().Exec(context.Background(), "CREATE TABLE jobs (artifact text PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	ctx := as("ada")
	artifacts := func(title string) int {
		return count(t, s, "SELECT count(*) FROM artifacts WHERE title = $1", title)
	}
	jobs := func() int { return count(t, s, "SELECT count(*) FROM jobs") }

	var ran []string
	err := s.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		res, err := tx.Store().CreateArtifact(ctx, store.CreateParams{Type: "hypothesis", Title: "in a tx", Content: json.RawMessage(`{}`)})
		if err != nil {
			return err
		}
		// The transaction reads its own write; nobody else sees it yet.
		if _, err := tx.Store().Get(ctx, res.Artifact.Unpinned()); err != nil {
			t.Errorf("the transaction does not see its own write: %v", err)
		}
		if n := artifacts("in a tx"); n != 0 {
			t.Errorf("the write is visible before commit (%d)", n)
		}
		if _, err := tx.Conn().Exec(ctx, "INSERT INTO jobs VALUES ($1)", res.Ref); err != nil {
			return err
		}
		tx.AfterCommit(func() { ran = append(ran, "hook") })
		if len(ran) != 0 {
			t.Error("an after-commit hook ran before the commit")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if artifacts("in a tx") != 1 || jobs() != 1 || len(ran) != 1 {
		t.Errorf("after commit: artifacts %d, jobs %d, hooks %v", artifacts("in a tx"), jobs(), ran)
	}

	// fn fails after a write and a job insert: nothing of either stays, no hook runs.
	boom := errors.New("dispatch failed")
	before := count(t, s, "SELECT count(*) FROM write_journal")
	err = s.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		res, err := tx.Store().CreateArtifact(ctx, store.CreateParams{Type: "hypothesis", Title: "rolled back", Content: json.RawMessage(`{}`)})
		if err != nil {
			return err
		}
		if _, err := tx.Conn().Exec(ctx, "INSERT INTO jobs VALUES ($1)", res.Ref); err != nil {
			return err
		}
		tx.AfterCommit(func() { ran = append(ran, "rolled back hook") })
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx returned %v, want the callback's error", err)
	}
	if artifacts("rolled back") != 0 || jobs() != 1 || len(ran) != 1 || count(t, s, "SELECT count(*) FROM write_journal") != before {
		t.Errorf("after rollback: artifacts %d, jobs %d, hooks %v", artifacts("rolled back"), jobs(), ran)
	}
}

// A write the store refuses inside a caller's transaction writes nothing and
// leaves the transaction usable: the writes before and after it commit.
func TestTxSurvivesARefusedWrite(t *testing.T) {
	s := store.New(store.Opts{Pool: dbtest.Pool(t)})
	ctx := as("ada")
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	st := tx.Store()
	if _, err := st.CreateArtifact(ctx, store.CreateParams{Type: "hypothesis", Title: "first", Content: json.RawMessage(`{}`), IdempotencyKey: "k1"}); err != nil {
		t.Fatal(err)
	}
	_, err = st.CreateArtifact(ctx, store.CreateParams{Type: "hypothesis", Title: "bad", Content: json.RawMessage(`{"confidence": "high"}`), IdempotencyKey: "k2"})
	if p, ok := problem.As(err); !ok || p.Code != problem.ValidationFailed {
		t.Fatalf("bad content: %v", err)
	}
	// An update (one statement on its own) joins the transaction too.
	res, err := st.CreateArtifact(ctx, store.CreateParams{Type: "hypothesis", Title: "third", Content: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatalf("the transaction is unusable after a refused write: %v", err)
	}
	if _, err := st.UpdateArtifact(ctx, store.UpdateParams{Ref: res.Artifact.Unpinned().String(), BaseContentHash: res.ContentHash, Title: ptr("third, edited")}); err != nil {
		t.Fatal(err)
	}
	// A replay of the first key inside the transaction answers the stored result.
	again, err := st.CreateArtifact(ctx, store.CreateParams{Type: "hypothesis", Title: "first", Content: json.RawMessage(`{}`), IdempotencyKey: "k1"})
	if err != nil || !again.Replay {
		t.Fatalf("replay in the transaction: %+v %v", again, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got := count(t, s, "SELECT count(*) FROM artifacts WHERE type = 'hypothesis' AND title IN ('first', 'bad', 'third, edited')")
	keys := count(t, s, "SELECT count(*) FROM idempotency_keys WHERE key IN ('k1', 'k2')")
	if got != 2 || keys != 1 {
		t.Errorf("committed %d artifacts and %d keys, want 2 and 1 (the refused write left nothing)", got, keys)
	}
	if err := tx.Commit(ctx); err == nil {
		t.Error("a second commit did not fail")
	}
}

// Registering a schema version drops the registry's cached version only once
// the registration is committed. Before, a reader between the drop and the
// commit re-cached the old version, and it was served for seconds after.
func TestSchemaCacheIsDroppedAfterCommit(t *testing.T) {
	s := store.New(store.Opts{Pool: dbtest.Pool(t)})
	ctx := as("rita", "reviewer")
	cur, err := s.Registry().Get(ctx, "wiki_page")
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{}
	if err := json.Unmarshal(cur.Raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["schema_version"] = cur.Version + 1
	doc["description"] = "Wiki pages, now described differently."
	raw, _ := json.Marshal(doc)
	art, err := s.Get(ctx, ref.Ref{Type: "schema", ID: "wiki_page"})
	if err != nil {
		t.Fatal(err)
	}
	err = s.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if _, err := tx.Store().UpdateArtifact(ctx, store.UpdateParams{Ref: "schema:wiki_page", BaseContentHash: art.ContentHash, Content: raw}); err != nil {
			return err
		}
		// A reader outside the transaction meanwhile: it sees the old version, as it must.
		got, err := s.Registry().Get(context.Background(), "wiki_page")
		if err != nil {
			return err
		}
		if got.Version != cur.Version {
			return fmt.Errorf("a reader outside saw version %d before the commit", got.Version)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Registry().Get(ctx, "wiki_page")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != cur.Version+1 || !strings.Contains(got.Doc.Description, "differently") {
		t.Errorf("right after the commit the registry serves version %d, want %d", got.Version, cur.Version+1)
	}
}
