package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/server"
	"github.com/scidex/substrate/internal/store"
)

// docs/targets.md R1 over HTTP: concurrent writers on one artifact, each retrying on
// VersionConflict with the merge hint. No update is lost: the history holds
// exactly the successful writes, and every refusal's hint replays cleanly because
// the writers' edits never overlap. The full 16 × 100 runs against the write path
// in internal/store; this checks the same through GraphQL, smaller.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	const writers, updates = 6, 25
	env := apitest.New(t, apitest.Opts{Store: func(o *store.Opts) { o.Limiter = nil }, Server: func(o *server.Opts) {}})
	tok := apitest.Contributor(t, "ada")
	counters := map[string]any{}
	for w := 0; w < writers; w++ {
		counters[fmt.Sprintf("w%02d", w)] = 0
	}
	c := createH(t, env, tok, map[string]any{"title": "shared", "content": map[string]any{"target_gene": "TREM2", "counters": counters}})
	ref := unpinned(c.Ref)

	var mu sync.Mutex
	successes := map[string]bool{}
	conflicts := 0
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			key := fmt.Sprintf("w%02d", w)
			base := c.ContentHash
			for i := 1; i <= updates; i++ {
				in := map[string]any{"ref": ref, "baseContentHash": base,
					"patch": []any{map[string]any{"op": "replace", "path": "/counters/" + key, "value": i}}}
				for attempt := 0; ; attempt++ {
					if attempt > 1000 {
						errs <- fmt.Errorf("%s update %d: no success after 1000 attempts", key, i)
						return
					}
					r := update(t, env, tok, in)
					if r.Typename == "WriteSuccess" {
						mu.Lock()
						successes[r.ContentHash] = true
						mu.Unlock()
						base = r.ContentHash
						break
					}
					if r.Typename != "VersionConflict" {
						errs <- fmt.Errorf("%s update %d: %s %s", key, i, r.Typename, r.Message)
						return
					}
					mu.Lock()
					conflicts++
					mu.Unlock()
					if !r.MergeHint.YourPatchReplaysCleanly {
						errs <- fmt.Errorf("%s update %d: disjoint edits conflict at %v", key, i, r.MergeHint.ConflictingPaths)
						return
					}
					in = map[string]any{"ref": ref, "baseContentHash": r.MergeHint.SuggestedBaseContentHash, "content": json.RawMessage(r.MergeHint.MergedContent)}
					// The client's retry policy on a hot artifact: exponential backoff
					// with full jitter, so the writer that just won does not win every
					// round while the others spin.
					time.Sleep(time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 6))))
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(successes) != writers*updates {
		t.Fatalf("%d distinct successful writes, want %d", len(successes), writers*updates)
	}
	// The history holds exactly the creation and the successful writes.
	rows, err := env.Pool.Query(context.Background(),
		`SELECT v.content_hash FROM artifact_versions v JOIN artifacts a ON a.pk = v.artifact_pk WHERE a.type = 'hypothesis' AND a.id = $1`, c.Ref[len("hypothesis:"):len(ref)])
	if err != nil {
		t.Fatal(err)
	}
	history := map[string]bool{}
	n := 0
	for rows.Next() {
		var h string
		_ = rows.Scan(&h)
		history[h] = true
		n++
	}
	if n != writers*updates+1 {
		t.Errorf("%d versions, want %d", n, writers*updates+1)
	}
	for h := range successes {
		if !history[h] {
			t.Errorf("successful write %s missing from the history", h)
		}
	}
	// Every writer's last value made it.
	var got struct {
		Artifact struct {
			Content struct{ Counters map[string]float64 }
		}
	}
	env.OK(t, tok, `query($r: Ref!) { artifact(ref: $r) { content } }`, map[string]any{"r": ref}, &got)
	for w := 0; w < writers; w++ {
		if v := got.Artifact.Content.Counters[fmt.Sprintf("w%02d", w)]; v != updates {
			t.Errorf("w%02d = %v, want %d", w, v, updates)
		}
	}
	t.Logf("%d writers x %d updates: %d conflicts resolved with the merge hint", writers, updates, conflicts)
}

// docs/targets.md R2: one idempotency key sent 200 times at once makes exactly one
// artifact, and every reply names it; the same key with another body is refused.
func TestIdempotencyKeyUnderConcurrency(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	in := map[string]any{"type": "hypothesis", "title": "once", "content": map[string]any{"target_gene": "APOE"}, "idempotencyKey": "create-once-42"}
	const n = 200
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = mutate(t, env, tok, "createArtifact", "CreateArtifactInput", in)
		}(i)
	}
	wg.Wait()
	first := 0
	for i, r := range results {
		if r.Typename != "WriteSuccess" {
			t.Fatalf("reply %d: %s %s", i, r.Typename, r.Message)
		}
		if r.Ref != results[0].Ref || r.ContentHash != results[0].ContentHash || r.RequestID != results[0].RequestID {
			t.Fatalf("reply %d differs: %s %s %s vs %s %s %s", i, r.Ref, r.ContentHash, r.RequestID, results[0].Ref, results[0].ContentHash, results[0].RequestID)
		}
		if !r.IdempotentReplay {
			first++
		}
	}
	if first != 1 {
		t.Errorf("%d replies say they wrote, want exactly 1", first)
	}
	if got := env.Count(t, "artifacts WHERE type = 'hypothesis'"); got != 1 {
		t.Errorf("%d hypotheses, want 1", got)
	}
	if got := env.Count(t, "write_journal WHERE operation = 'createArtifact' AND actor_id = 'ada'"); got != 1 {
		t.Errorf("%d journal rows, want 1", got)
	}
	before := env.Counts(t)
	other := map[string]any{"type": "hypothesis", "title": "twice", "content": map[string]any{}, "idempotencyKey": "create-once-42"}
	r := mutate(t, env, tok, "createArtifact", "CreateArtifactInput", other)
	if r.Typename != "IdempotencyKeyReuse" || r.IdempotencyKey != "create-once-42" || r.Code != "IDEMPOTENCY_KEY_REUSE" {
		t.Fatalf("reuse: %+v", r)
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("reuse wrote: %v -> %v", before, after)
	}
	// Keys are per actor: another actor's identical key is its own.
	r = mutate(t, env, apitest.Contributor(t, "grace"), "createArtifact", "CreateArtifactInput", other)
	if r.Typename != "WriteSuccess" || r.IdempotentReplay {
		t.Errorf("another actor's key: %+v", r)
	}
}
