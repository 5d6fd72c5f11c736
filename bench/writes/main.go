// Command writes measures docs/targets.md P3: createArtifact and updateArtifact
// throughput with 16 concurrent writers through the real server (HTTP + GraphQL,
// schema validation, journal, event, idempotency key), against the raw-SQL floor:
// pgbench running the same inserts (artifact + version + journal + event + notify)
// in one transaction, prepared, with the same concurrency, on the same database,
// in the same run.
//
//	go run ./bench/writes -duration 10s
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync/atomic"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
	"github.com/scidex/substrate/internal/auth"
)

var (
	writers   = flag.Int("writers", 16, "concurrent writers")
	duration  = flag.Duration("duration", 10*time.Second, "how long each measurement runs")
	warmup    = flag.Duration("warmup", 2*time.Second, "warm-up before each measurement")
	rounds    = flag.Int("rounds", 3, "alternating server/floor rounds; the median ratio is reported")
	pprofAddr = flag.String("pprof", "", "have the server serve pprof here (e.g. 127.0.0.1:6060)")
	bin       = flag.String("bin", "", "the scidex binary to measure (default: build this checkout's)")
)

func main() {
	flag.Parse()
	defer benchkit.Cleanup()
	flags := []string{"--write-rate", "0"}
	if *pprofAddr != "" {
		flags = append(flags, "--pprof-addr", *pprofAddr)
	}
	st := benchkit.Start(benchkit.StackOpts{Prefix: "scidex-bench-writes-", Settings: map[string]string{"max_connections": "100"},
		Pool: 32, Flags: flags, Group: true, Bin: *bin})
	url, dir := st.GraphQL(), st.Dir
	pgid, pgData = st.Server.Cmd.Process.Pid, st.PGData()
	tok := benchkit.Token("bench", auth.PermContributor)

	fmt.Printf("P3 write throughput, %d concurrent writers, %s per measurement, %d rounds (%s)\n", *writers, *duration, *rounds, time.Now().UTC().Format(time.RFC3339))
	bases := prepareUpdates(url, tok)
	var cr, ur []float64
	for r := 0; r < *rounds; r++ {
		// Server and floor alternate, so slow spells of a shared machine hit both.
		create := measure("server createArtifact", func(w, i int) error { return createOne(url, tok, w, i) })
		floorCreate := pgbench(st.Cluster.ConnString(), dir, createSQL)
		update := measure("server updateArtifact", func(w, i int) error { return updateOne(url, tok, bases, w, i) })
		floorUpdate := pgbench(st.Cluster.ConnString(), dir, updateSQL)
		fmt.Printf("  round %d: create server %.0f/s floor %.0f/s (%.0f%%); update server %.0f/s floor %.0f/s (%.0f%%)\n",
			r+1, create.rate, floorCreate.rate, 100*create.rate/floorCreate.rate, update.rate, floorUpdate.rate, 100*update.rate/floorUpdate.rate)
		for _, m := range []struct {
			name string
			r    result
		}{{"create server", create}, {"create floor ", floorCreate}, {"update server", update}, {"update floor ", floorUpdate}} {
			u := m.r.cpu
			note := ""
			if u.Noisy() {
				note = " (noisy: other processes took more than 10%)"
			}
			fmt.Printf("    %s CPU per write: server %s, postgres %s, client %s, other %s; machine %.0f%% busy%s\n",
				m.name, ms(u.Server), ms(u.DB), ms(u.Client), ms(u.Other), 100*u.Busy, note)
		}
		cr = append(cr, create.rate/floorCreate.rate)
		ur = append(ur, update.rate/floorUpdate.rate)
	}
	fmt.Printf("  createArtifact: median %.0f%% of the raw-SQL floor (range %.0f-%.0f%%), target >= 85%%: %s\n", 100*benchkit.Median(cr), 100*slices.Min(cr), 100*slices.Max(cr), benchkit.Verdict(benchkit.Median(cr) >= 0.85))
	fmt.Printf("  updateArtifact: median %.0f%% of the raw-SQL floor (range %.0f-%.0f%%), target >= 85%%: %s\n", 100*benchkit.Median(ur), 100*slices.Min(ur), 100*slices.Max(ur), benchkit.Verdict(benchkit.Median(ur) >= 0.85))
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// pgid and pgData say whose CPU the measurements account (benchkit.TakeCPU).
var (
	pgid   int
	pgData string
)

// result is a measurement: successful writes per second, and the CPU each
// write cost the server, PostgreSQL and the client.
type result struct {
	rate float64
	cpu  benchkit.CPUUse
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// measure runs fn from every writer for the duration after a warm-up.
func measure(name string, fn func(writer, i int) error) result {
	var done, failed atomic.Int64
	var firstErr atomic.Value
	var before, after benchkit.CPUSnap
	l := &benchkit.Load{Workers: *writers, Warmup: *warmup, Measure: *duration,
		OnStart: func() { before = benchkit.TakeCPU(pgid, pgData) }, OnStop: func() { after = benchkit.TakeCPU(pgid, pgData) }}
	elapsed := l.Run(func(w, i int) {
		if err := fn(w, i); err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, err)
			return
		}
		if l.Counting() {
			done.Add(1)
		}
	})
	if f := failed.Load(); f > 0 {
		benchkit.Fail(fmt.Errorf("%s: %d failures, first: %v", name, f, firstErr.Load()))
	}
	return result{rate: float64(done.Load()) / elapsed.Seconds(), cpu: before.Use(after, int(done.Load()))}
}

var createBody = `{"query":"mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { __typename ... on WriteSuccess { contentHash } ... on Problem { message } } }",` +
	`"variables":{"in":{"type":"hypothesis","title":"Benchmark hypothesis %d-%d","idempotencyKey":"c-%d-%d-%d",` +
	`"content":{"target_gene":"TREM2","confidence":0.5,"mechanism":"R47H lowers ligand binding"}}}}`

func createOne(url, tok string, w, i int) error {
	raw, err := benchkit.Post(client, url, tok, fmt.Appendf(nil, createBody, w, i, w, i, time.Now().UnixNano()))
	if err != nil {
		return err
	}
	if !bytes.Contains(raw, []byte(`"__typename":"WriteSuccess"`)) {
		return fmt.Errorf("%s", raw)
	}
	return nil
}

type base struct {
	ref, hash string
}

// prepareUpdates creates one artifact per writer; each writer updates its own, so
// the measurement is of the write path, not of contention (R1 tests that).
func prepareUpdates(url, tok string) []*base {
	out := make([]*base, *writers)
	for w := range out {
		d, err := benchkit.GQL(client, url, tok, `mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { ... on WriteSuccess { ref contentHash } } }`,
			map[string]any{"in": map[string]any{"type": "hypothesis", "title": fmt.Sprintf("updated by %d", w), "content": map[string]any{"n": 0}}})
		benchkit.Check(err)
		r := d["createArtifact"].(map[string]any)
		ref := r["ref"].(string)
		out[w] = &base{ref: ref[:len(ref)-len("@sha256:")-64], hash: r["contentHash"].(string)}
	}
	return out
}

var updateBody = `{"query":"mutation($in: UpdateArtifactInput!) { updateArtifact(input: $in) { __typename ... on WriteSuccess { contentHash } ... on Problem { message } } }",` +
	`"variables":{"in":{"ref":%q,"baseContentHash":%q,"patch":[{"op":"replace","path":"/n","value":%d}]}}}`

var hashRE = regexp.MustCompile(`"contentHash":"(sha256:[0-9a-f]{64})"`)

func updateOne(url, tok string, bases []*base, w, i int) error {
	b := bases[w]
	raw, err := benchkit.Post(client, url, tok, fmt.Appendf(nil, updateBody, b.ref, b.hash, i+1))
	if err != nil {
		return err
	}
	m := hashRE.FindSubmatch(raw)
	if m == nil || !bytes.Contains(raw, []byte(`"__typename":"WriteSuccess"`)) {
		return fmt.Errorf("%s", raw)
	}
	b.hash = string(m[1])
	return nil
}

// The raw-SQL floor of docs/targets.md P3: the rows a create writes (artifact +
// version + event + notify) in one transaction, prepared. The server writes a
// journal row and an idempotency key on top of these. (No ':' inside literals:
// pgbench would read it as a variable.)
const createSQL = `BEGIN;
INSERT INTO artifacts (type, id, version, title, content, content_hash, lifecycle_state, schema_version, created_at, updated_at, created_by, updated_by, provenance)
  VALUES ('hypothesis', gen_random_uuid()::text, 1, 'Benchmark hypothesis', '{"target_gene":"TREM2","confidence":0.5,"mechanism":"R47H lowers ligand binding"}',
          'sha256-0000', 'proposed', 1, now(), now(), 'bench', 'bench', '[]') RETURNING pk \gset
INSERT INTO artifact_versions (artifact_pk, version, content_hash, title, content, lifecycle_state, schema_version, created_at, created_by, journal_id)
  VALUES ((:pk)::bigint, 1, 'sha256-0000', 'Benchmark hypothesis', '{"target_gene":"TREM2","confidence":0.5,"mechanism":"R47H lowers ligand binding"}', 'proposed', 1, now(), 'bench', 0);
INSERT INTO events (event_type, occurred_at, source, actor_id, actor_kind, ref, payload) VALUES ('hypothesis.created', now(), 'bench', 'bench', 'ai_local', 'hypothesis-x', '{}') RETURNING id AS eid \gset
SELECT pg_notify('scidex_events', (:eid)::text);
COMMIT;
`

// The raw-SQL floor of an update: lock the row, rewrite it, add the version and
// the event, notify; one artifact per client, as the server's writers have.
const updateSQL = `\set n random(1, 1000000000)
BEGIN;
SELECT pk, version FROM artifacts WHERE type = 'hypothesis' AND id = 'floor-' || (:client_id)::text FOR UPDATE \gset
UPDATE artifacts SET version = (:version)::int + 1, title = 'Benchmark', content = jsonb_build_object('n', (:n)::bigint), content_hash = 'sha256-' || (:n)::text,
  updated_at = now(), updated_by = 'bench' WHERE pk = (:pk)::bigint;
INSERT INTO artifact_versions (artifact_pk, version, content_hash, title, content, lifecycle_state, schema_version, created_at, created_by, journal_id)
  VALUES ((:pk)::bigint, (:version)::int + 1, 'sha256-' || (:n)::text, 'Benchmark', jsonb_build_object('n', (:n)::bigint), 'proposed', 1, now(), 'bench', 0);
INSERT INTO events (event_type, occurred_at, source, actor_id, actor_kind, ref, payload) VALUES ('hypothesis.updated', now(), 'bench', 'bench', 'ai_local', 'hypothesis-x', '{}') RETURNING id AS eid \gset
SELECT pg_notify('scidex_events', (:eid)::text);
COMMIT;
`

// pgbench runs a script with the same concurrency against the same database.
func pgbench(conn, dir, script string) result {
	path := filepath.Join(dir, "script.sql")
	benchkit.Check(os.WriteFile(path, []byte(script), 0o644))
	_ = os.Chmod(path, 0o644)
	// Seed the per-client artifacts the update script locks.
	seed := `INSERT INTO artifacts (type, id, version, title, content, content_hash, lifecycle_state, schema_version, created_at, updated_at, created_by, updated_by)
	  SELECT 'hypothesis', 'floor-' || g, 1, 'floor', '{}', 'sha256:0', 'proposed', 1, now(), now(), 'bench', 'bench' FROM generate_series(0, 63) g ON CONFLICT DO NOTHING`
	benchkit.ExecSQL(context.Background(), conn, seed)
	before := benchkit.TakeCPU(pgid, pgData)
	tps := benchkit.Pgbench(benchkit.PgbenchOpts{Conn: conn, Script: path, Clients: *writers, Seconds: int(duration.Seconds())})
	after := benchkit.TakeCPU(pgid, pgData)
	// pgbench's own start and connections fall inside these snapshots: the
	// floor's per-write CPU is a little high, never low.
	return result{rate: tps, cpu: before.Use(after, int(tps*duration.Seconds()))}
}
