package dispatch_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/inprocess"
)

// A cached result is served for the cache's TTL only: an older entry is not
// served (the tool runs again and the entry is rewritten), and the sweep
// deletes the entries that expired and keeps the others.
func TestCacheEntriesExpire(t *testing.T) {
	runs := 0
	e := env(t, map[string]inprocess.Func{"test.det": func(_ context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		runs++
		return args, nil
	}}, func(c *app.Config) { c.Tools.Cache, c.Tools.CacheTTL = true, time.Hour })
	activate(t, e, testTool("test.det", "test.det", func(m map[string]any) { m["deterministic"] = true }))
	ctx := context.Background()
	age := func(d string) {
		t.Helper()
		if _, err := e.Pool.Exec(ctx, `UPDATE tool_result_cache SET created_at = now() - $1::interval`, d); err != nil {
			t.Fatal(err)
		}
	}
	invoke(t, e, alice(t), "test.det", map[string]any{"value": 1})
	if b := invoke(t, e, alice(t), "test.det", map[string]any{"value": 1}); b.Cached == nil || !*b.Cached || runs != 1 {
		t.Fatalf("a fresh entry is not served: cached %v, %d runs", b.Cached, runs)
	}
	age("2 hours")
	if c := invoke(t, e, alice(t), "test.det", map[string]any{"value": 1}); (c.Cached != nil && *c.Cached) || runs != 2 {
		t.Fatalf("an expired entry was served: cached %v, %d runs", c.Cached, runs)
	}
	if d := invoke(t, e, alice(t), "test.det", map[string]any{"value": 1}); d.Cached == nil || !*d.Cached || runs != 2 {
		t.Fatalf("the rewritten entry is not served: cached %v, %d runs", d.Cached, runs)
	}
	invoke(t, e, alice(t), "test.det", map[string]any{"value": 2}) // a second entry
	if _, err := e.Pool.Exec(ctx, `UPDATE tool_result_cache SET created_at = now() - interval '2 hours' WHERE result->>'value' = '1'`); err != nil {
		t.Fatal(err)
	}
	n, err := e.App.Dispatch.CollectCache(ctx, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("the sweep deleted %d entries (%v), want the 1 expired", n, err)
	}
	if left, _ := e.App.Dispatch.CacheEntries(ctx); left != 1 {
		t.Fatalf("%d entries left, want the fresh one", left)
	}
}

// The sweep collects a bundle file no tool version lists, once it has not
// been stored or asked for within the grace period, and never one a version
// lists: a file only an older version of a tool lists is kept.
func TestUnlistedBundleFilesAreCollected(t *testing.T) {
	e := bwrapEnv(t)
	ctx := context.Background()
	m := manifest(t, "text-stats")
	delete(m, "files")
	dir := "../../tools/text-stats"
	v1 := files(t, dir, "text-stats.sh", "decode.awk")
	if r := registerWithFiles(t, e, alice(t), m, v1); r.RegisterTool.Typename != "WriteSuccess" {
		t.Fatalf("register v1: %+v", r.RegisterTool)
	}
	// Version 2 changes decode.awk: v1's decode.awk is listed by v1 only.
	awk, err := os.ReadFile(dir + "/decode.awk")
	if err != nil {
		t.Fatal(err)
	}
	awk = append(awk, []byte("\n# v2\n")...)
	v2 := files(t, dir, "text-stats.sh")
	v2 = append(v2, map[string]any{"path": "decode.awk", "contentBase64": base64.StdEncoding.EncodeToString(awk)})
	if r := registerWithFiles(t, e, alice(t), m, v2); r.RegisterTool.Typename != "WriteSuccess" {
		t.Fatalf("register v2: %+v", r.RegisterTool)
	}
	// Two blobs no version lists: one untouched for two days, one just stored.
	orphan := func(content, touched string) string {
		sum := sha256.Sum256([]byte(content))
		h := hex.EncodeToString(sum[:])
		if _, err := e.Pool.Exec(ctx, `INSERT INTO tool_files (sha256, content, size, touched_at) VALUES ($1, $2, $3, now() - $4::interval)`,
			h, []byte(content), len(content), touched); err != nil {
			t.Fatal(err)
		}
		return h
	}
	old, recent := orphan("left behind", "48 hours"), orphan("just uploaded", "1 minute")
	listed := func() map[string]bool {
		rows, err := e.Pool.Query(ctx, `SELECT DISTINCT f->>'sha256' FROM artifact_versions v JOIN artifacts a ON a.pk = v.artifact_pk,
			jsonb_array_elements(v.content->'files') f WHERE a.type = 'tool'`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]bool{}
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				t.Fatal(err)
			}
			out[h] = true
		}
		return out
	}()
	if len(listed) != 3 {
		t.Fatalf("the two versions list %d distinct files, want 3", len(listed))
	}
	stored := func(h string) bool {
		var n int
		if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM tool_files WHERE sha256 = $1`, h).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	// Even with every grace long past, listed files stay.
	for _, at := range []time.Time{time.Now(), time.Now().Add(72 * time.Hour)} {
		if _, err := e.App.Registrar.CollectFiles(ctx, at); err != nil {
			t.Fatal(err)
		}
		for h := range listed {
			if !stored(h) {
				t.Fatalf("a file a tool version lists (%s) was collected", h)
			}
		}
		if stored(old) {
			t.Fatalf("the unlisted file untouched for 48 hours was kept")
		}
		if at.Before(time.Now().Add(time.Hour)) && !stored(recent) {
			t.Fatalf("the unlisted file stored a minute ago was collected within its grace")
		}
	}
	if stored(recent) {
		t.Fatalf("the unlisted file was kept past its grace")
	}
}
