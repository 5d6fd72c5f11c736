package store_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
)

func replacePatch(path string, value any) json.RawMessage {
	b, _ := json.Marshal([]any{map[string]any{"op": "replace", "path": path, "value": value}})
	return b
}

func sameJSON(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// counted returns ctx with a statement counter, and the counter.
func counted(ctx context.Context) (context.Context, *store.StatementCounter) {
	c := &store.StatementCounter{}
	return store.WithStatementCounter(ctx, c), c
}

// An update based on the version this process just wrote needs no read before
// its write: one statement, where a process that did not write it needs two.
func TestUpdateOfARowThisProcessWroteIsOneStatement(t *testing.T) {
	pool := dbtest.Pool(t)
	s := store.New(store.Opts{Pool: pool})
	c, err := s.CreateArtifact(as("ada"), store.CreateParams{Type: "hypothesis", Title: "remembered", Content: json.RawMessage(`{"n":0}`)})
	if err != nil {
		t.Fatal(err)
	}
	r, base := c.Artifact.Unpinned().String(), c.ContentHash
	for i := 1; i <= 3; i++ {
		ctx, n := counted(as("ada"))
		res, err := s.UpdateArtifact(ctx, store.UpdateParams{Ref: r, BaseContentHash: base, Patch: replacePatch("/n", i)})
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		if n.Count() != 1 {
			t.Errorf("update %d after this process's own write ran %d statements, want 1", i, n.Count())
		}
		base = res.ContentHash
	}
	// Another process, warmed up (its actor row and schemas known) on an
	// artifact of its own.
	other := store.New(store.Opts{Pool: pool})
	w, err := other.CreateArtifact(as("ada"), store.CreateParams{Type: "hypothesis", Title: "warm-up", Content: json.RawMessage(`{"n":0}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.UpdateArtifact(as("ada"), store.UpdateParams{Ref: w.Artifact.Unpinned().String(), BaseContentHash: w.ContentHash, Patch: replacePatch("/n", 1)}); err != nil {
		t.Fatal(err)
	}
	ctx, n := counted(as("ada"))
	res, err := other.UpdateArtifact(ctx, store.UpdateParams{Ref: r, BaseContentHash: base, Patch: replacePatch("/n", 4)})
	if err != nil {
		t.Fatal(err)
	}
	if n.Count() != 2 {
		t.Errorf("an update by a process that did not write the base ran %d statements, want 2 (read, write)", n.Count())
	}
	got, err := s.Get(as("ada"), ref.MustParse(r))
	if err != nil {
		t.Fatal(err)
	}
	if got.ContentHash != res.ContentHash || got.Version != 5 || !sameJSON(got.Content, `{"n":4}`) {
		t.Errorf("after 4 updates the artifact is version %d %s %s, want version 5 {\"n\":4} %s", got.Version, got.Content, got.ContentHash, res.ContentHash)
	}
}

// What a process remembers of a row it wrote is a hint: whatever changed the
// row since, by another process or by hand in SQL, the update behaves as if it
// had read the row.
func TestRememberedRowNeverOutrunsTheDatabase(t *testing.T) {
	pool := dbtest.Pool(t)
	s := store.New(store.Opts{Pool: pool})
	other := store.New(store.Opts{Pool: pool})
	create := func(title string) (string, string) {
		t.Helper()
		c, err := s.CreateArtifact(as("bob"), store.CreateParams{Type: "hypothesis", Title: title, Content: json.RawMessage(`{"n":0,"mechanism":"R47H"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return c.Artifact.Unpinned().String(), c.ContentHash
	}
	get := func(r string) *store.Artifact {
		t.Helper()
		a, err := s.Get(as("bob"), ref.MustParse(r))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	code := func(err error) problem.Code {
		if p, ok := problem.As(err); ok {
			return p.Code
		}
		t.Fatalf("want a problem, got %v", err)
		return ""
	}

	t.Run("written by another process", func(t *testing.T) {
		r, v1 := create("moved elsewhere")
		v2, err := other.UpdateArtifact(as("bob"), store.UpdateParams{Ref: r, BaseContentHash: v1, Patch: replacePatch("/mechanism", "lowers binding")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateArtifact(as("bob"), store.UpdateParams{Ref: r, BaseContentHash: v1, Patch: replacePatch("/n", 1)}); code(err) != problem.VersionConflict {
			t.Fatalf("an update on a base another process replaced: %v, want VersionConflict", err)
		}
		// "No change" is an answer about the current version, which the cache
		// does not know.
		if _, err := s.UpdateArtifact(as("bob"), store.UpdateParams{Ref: r, BaseContentHash: v1, Patch: replacePatch("/n", 0)}); code(err) != problem.VersionConflict {
			t.Fatalf("a no-op update on a base another process replaced: %v, want VersionConflict", err)
		}
		res, err := s.UpdateArtifact(as("bob"), store.UpdateParams{Ref: r, BaseContentHash: v2.ContentHash, Patch: replacePatch("/n", 1)})
		if err != nil {
			t.Fatal(err)
		}
		got := get(r)
		if got.ContentHash != res.ContentHash || !sameJSON(got.Content, `{"n":1,"mechanism":"lowers binding"}`) {
			t.Errorf("content %s, want the other process's change kept", got.Content)
		}
	})

	t.Run("content changed in SQL", func(t *testing.T) {
		r, v1 := create("edited by hand")
		if _, err := pool.Exec(context.Background(), `UPDATE artifacts SET content = jsonb_set(content, '{mechanism}', '"by hand"') WHERE type || ':' || id = $1`, r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateArtifact(as("bob"), store.UpdateParams{Ref: r, BaseContentHash: v1, Patch: replacePatch("/n", 1)}); err != nil {
			t.Fatal(err)
		}
		got := get(r)
		if !sameJSON(got.Content, `{"n":1,"mechanism":"by hand"}`) {
			t.Errorf("content %s: the patch applied to the remembered content, not the row's", got.Content)
		}
	})

	t.Run("made private", func(t *testing.T) {
		r, v1 := create("private now")
		if _, err := pool.Exec(context.Background(), `UPDATE artifacts SET visibility = 'participants', participants = '{cyd}' WHERE type || ':' || id = $1`, r); err != nil {
			t.Fatal(err)
		}
		// bob created it and still reads it; dan, who wrote the last version
		// while it was public, no longer does.
		res, err := s.UpdateArtifact(as("dan"), store.UpdateParams{Ref: r, BaseContentHash: v1, Patch: replacePatch("/n", 1)})
		if code(err) != problem.NotFound {
			t.Fatalf("dan's update of an artifact he can no longer read: %v %+v, want NotFound", err, res)
		}
		got := get(r)
		if got.ContentHash != v1 || got.Version != 1 {
			t.Errorf("the refused update wrote: version %d %s", got.Version, got.ContentHash)
		}
	})

	t.Run("made public", func(t *testing.T) {
		r, v1 := create("public now")
		private := func(v string) {
			t.Helper()
			if _, err := pool.Exec(context.Background(), `UPDATE artifacts SET visibility = $2 WHERE type || ':' || id = $1`, r, v); err != nil {
				t.Fatal(err)
			}
		}
		private("participants")
		// bob, its creator, writes it while it is private: that row is remembered.
		v2, err := s.UpdateArtifact(as("bob"), store.UpdateParams{Ref: r, BaseContentHash: v1, Patch: replacePatch("/n", 1)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateArtifact(as("dan"), store.UpdateParams{Ref: r, BaseContentHash: v2.ContentHash, Patch: replacePatch("/n", 2)}); code(err) != problem.NotFound {
			t.Fatalf("dan's update of a private artifact: %v, want NotFound", err)
		}
		private("public")
		if _, err := s.UpdateArtifact(as("dan"), store.UpdateParams{Ref: r, BaseContentHash: v2.ContentHash, Patch: replacePatch("/n", 2)}); err != nil {
			t.Fatalf("dan's update of the artifact made public: %v", err)
		}
	})

	t.Run("superseded by another process", func(t *testing.T) {
		r, v1 := create("retired elsewhere")
		if _, err := other.SupersedeArtifact(as("bob"), store.SupersedeParams{Ref: r, Reason: "replaced"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateArtifact(as("bob"), store.UpdateParams{Ref: r, BaseContentHash: v1, Patch: replacePatch("/n", 1)}); code(err) != problem.MutabilityViolation {
			t.Fatalf("an update of an artifact another process retired: %v, want MutabilityViolation", err)
		}
	})
}
