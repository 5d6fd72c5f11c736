package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// as returns a context acting as a contributor, with a fresh request id and clock.
func as(actor string, perms ...auth.Permission) context.Context {
	if len(perms) == 0 {
		perms = []auth.Permission{auth.PermContributor}
	}
	return request.With(context.Background(), &request.Context{
		Actor: auth.Actor{ID: actor, Kind: auth.KindAILocal, Permissions: perms}, RequestID: request.NewID(), Now: time.Now().UTC(),
	})
}

// docs/targets.md R1 at the write path: 16 concurrent writers × 100 updates on one
// artifact, each retrying on VersionConflict with the merge hint. The history
// holds exactly the successful writes, and every hint replays cleanly because
// the writers' edits never overlap. (internal/server runs a smaller version of
// the same over HTTP.)
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	const writers, updates = 16, 100
	s := store.New(store.Opts{Pool: dbtest.Pool(t)})
	counters := map[string]any{}
	for w := 0; w < writers; w++ {
		counters[fmt.Sprintf("w%02d", w)] = 0
	}
	content, _ := json.Marshal(map[string]any{"target_gene": "TREM2", "counters": counters})
	c, err := s.CreateArtifact(as("ada"), store.CreateParams{Type: "hypothesis", Title: "shared", Content: content})
	if err != nil {
		t.Fatal(err)
	}
	ref := c.Artifact.Unpinned().String()

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
			actor := "writer-" + key
			base := c.ContentHash
			for i := 1; i <= updates; i++ {
				patch, _ := json.Marshal([]any{map[string]any{"op": "replace", "path": "/counters/" + key, "value": i}})
				p := store.UpdateParams{Ref: ref, BaseContentHash: base, Patch: patch}
				for attempt := 0; ; attempt++ {
					res, err := s.UpdateArtifact(as(actor), p)
					if err == nil {
						mu.Lock()
						successes[res.ContentHash] = true
						mu.Unlock()
						base = res.ContentHash
						break
					}
					prob, ok := problem.As(err)
					if !ok || prob.Code != problem.VersionConflict {
						errs <- fmt.Errorf("%s update %d: %v", key, i, err)
						return
					}
					conflict := prob.Extra.(*store.Conflict)
					if !conflict.Hint.YourPatchReplaysCleanly {
						errs <- fmt.Errorf("%s update %d: disjoint edits conflict at %v", key, i, conflict.Hint.ConflictingPaths)
						return
					}
					mu.Lock()
					conflicts++
					mu.Unlock()
					p = store.UpdateParams{Ref: ref, BaseContentHash: conflict.Hint.SuggestedBaseContentHash, Content: conflict.Hint.MergedContent}
					// Exponential backoff with full jitter, as a client on a hot artifact would.
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
	var versions int
	var final json.RawMessage
	pool := s.Pool()
	if err := pool.QueryRow(context.Background(), `SELECT count(*), (SELECT content FROM artifacts WHERE pk = $1) FROM artifact_versions WHERE artifact_pk = $1`, c.Artifact.PK).Scan(&versions, &final); err != nil {
		t.Fatal(err)
	}
	if versions != writers*updates+1 {
		t.Errorf("%d versions, want %d (the creation and every successful write)", versions, writers*updates+1)
	}
	rows, _ := pool.Query(context.Background(), `SELECT content_hash FROM artifact_versions WHERE artifact_pk = $1`, c.Artifact.PK)
	history := map[string]bool{}
	for rows.Next() {
		var h string
		_ = rows.Scan(&h)
		history[h] = true
	}
	for h := range successes {
		if !history[h] {
			t.Errorf("successful write %s is missing from the history", h)
		}
	}
	var got struct{ Counters map[string]float64 }
	_ = json.Unmarshal(final, &got)
	for w := 0; w < writers; w++ {
		if v := got.Counters[fmt.Sprintf("w%02d", w)]; v != updates {
			t.Errorf("w%02d = %v, want %d", w, v, updates)
		}
	}
	t.Logf("%d writers x %d updates: %d conflicts resolved with the merge hint", writers, updates, conflicts)
}

// Overlapping concurrent edits are refused with the paths that clash, never merged silently.
func TestOverlappingUpdatesReportPaths(t *testing.T) {
	s := store.New(store.Opts{Pool: dbtest.Pool(t)})
	content, _ := json.Marshal(map[string]any{"confidence": 0.5})
	c, err := s.CreateArtifact(as("ada"), store.CreateParams{Type: "hypothesis", Title: "h", Content: content})
	if err != nil {
		t.Fatal(err)
	}
	ref := c.Artifact.Unpinned().String()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			patch, _ := json.Marshal([]any{map[string]any{"op": "replace", "path": "/confidence", "value": float64(i+1)/10.0 + 0.01}})
			_, errs[i] = s.UpdateArtifact(as(fmt.Sprintf("w%d", i)), store.UpdateParams{Ref: ref, BaseContentHash: c.ContentHash, Patch: patch})
		}(i)
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		if err == nil {
			won++
			continue
		}
		var p *problem.Problem
		if !errors.As(err, &p) || p.Code != problem.VersionConflict {
			t.Fatalf("writer %d: %v", i, err)
		}
		h := p.Extra.(*store.Conflict).Hint
		if h.YourPatchReplaysCleanly || len(h.ConflictingPaths) != 1 || h.ConflictingPaths[0] != "/confidence" || h.MergedContent != nil {
			t.Errorf("writer %d: hint %+v", i, h)
		}
	}
	if won != 1 {
		t.Errorf("%d writers won from the same base, want exactly 1", won)
	}
}
