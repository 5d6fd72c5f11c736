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
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/pgembed"
)

var (
	writers   = flag.Int("writers", 16, "concurrent writers")
	duration  = flag.Duration("duration", 10*time.Second, "how long each measurement runs")
	warmup    = flag.Duration("warmup", 2*time.Second, "warm-up before each measurement")
	rounds    = flag.Int("rounds", 3, "alternating server/floor rounds; the median ratio is reported")
	pprofAddr = flag.String("pprof", "", "have the server serve pprof here (e.g. 127.0.0.1:6060)")
)

const secret = "bench-secret-0123456789abcdef-0123456789abcdef"

func main() {
	flag.Parse()
	dir, err := os.MkdirTemp("", "scidex-bench-writes-")
	check(err)
	_ = os.Chmod(dir, 0o755)
	defer os.RemoveAll(dir)
	ctx := context.Background()
	cluster, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(dir, "pg"), Settings: map[string]string{"max_connections": "100"}})
	check(err)
	defer cluster.Stop(context.Background())

	bin := filepath.Join(dir, "scidex")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/scidex").CombinedOutput()
	if err != nil {
		fail(fmt.Errorf("build: %v\n%s", err, out))
	}
	srv, url := startServer(bin, dir, cluster.ConnString())
	defer func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }()
	tok, err := auth.Mint(auth.MintOpts{Secret: []byte(secret), Issuer: "scidex", Audience: "scidex", Subject: "bench",
		Kind: auth.KindAILocal, Permissions: []auth.Permission{auth.PermContributor}, TTL: time.Hour, Now: time.Now()})
	check(err)

	fmt.Printf("P3 write throughput, %d concurrent writers, %s per measurement, %d rounds (%s)\n", *writers, *duration, *rounds, time.Now().UTC().Format(time.RFC3339))
	bases := prepareUpdates(url, tok)
	var cr, ur []float64
	for r := 0; r < *rounds; r++ {
		// Server and floor alternate, so slow spells of a shared machine hit both.
		create := measure("server createArtifact", func(w, i int) error { return createOne(url, tok, w, i) })
		floorCreate := pgbench(cluster, dir, createSQL)
		update := measure("server updateArtifact", func(w, i int) error { return updateOne(url, tok, bases, w, i) })
		floorUpdate := pgbench(cluster, dir, updateSQL)
		fmt.Printf("  round %d: create server %.0f/s floor %.0f/s (%.0f%%); update server %.0f/s floor %.0f/s (%.0f%%)\n",
			r+1, create, floorCreate, 100*create/floorCreate, update, floorUpdate, 100*update/floorUpdate)
		cr = append(cr, create/floorCreate)
		ur = append(ur, update/floorUpdate)
	}
	fmt.Printf("  createArtifact: median %.0f%% of the raw-SQL floor (range %.0f-%.0f%%), target >= 50%%\n", 100*median(cr), 100*minOf(cr), 100*maxOf(cr))
	fmt.Printf("  updateArtifact: median %.0f%% of the raw-SQL floor (range %.0f-%.0f%%), target >= 50%%\n", 100*median(ur), 100*minOf(ur), 100*maxOf(ur))
}

func median(xs []float64) float64 {
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func startServer(bin, dir, dbURL string) (*exec.Cmd, string) {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--write-rate", "0", "--log-level", "warn")
	if *pprofAddr != "" {
		cmd.Args = append(cmd.Args, "--pprof-addr", *pprofAddr)
	}
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL+" pool_max_conns=32", "SCIDEX_JWT_SECRET="+secret)
	// The server logs its address at info level.
	cmd.Args = append(cmd.Args, "--log-level", "info")
	stderr, _ := cmd.StderrPipe()
	check(cmd.Start())
	re := regexp.MustCompile(`msg=listening addr=(\S+)`)
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 512)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		n, err := stderr.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if m := re.FindSubmatch(buf); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return cmd, "http://" + string(m[1]) + "/graphql"
		}
		if err != nil {
			break
		}
	}
	fail(fmt.Errorf("server did not start:\n%s", buf))
	return nil, ""
}

// measure runs fn from every writer for the duration after a warm-up and returns
// successful operations per second.
func measure(name string, fn func(writer, i int) error) float64 {
	var done atomic.Int64
	var failed atomic.Int64
	var counting atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for w := 0; w < *writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := fn(w, i); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				if counting.Load() {
					done.Add(1)
				}
			}
		}(w)
	}
	time.Sleep(*warmup)
	counting.Store(true)
	start := time.Now()
	time.Sleep(*duration)
	counting.Store(false)
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	if f := failed.Load(); f > 0 {
		fail(fmt.Errorf("%s: %d failures, first: %v", name, f, firstErr.Load()))
	}
	return float64(done.Load()) / elapsed.Seconds()
}

func gql(url, tok, query string, vars map[string]any) (map[string]any, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	raw, err := post(url, tok, body)
	if err != nil {
		return nil, err
	}
	var out struct {
		Data   map[string]any `json:"data"`
		Errors []any          `json:"errors"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("%v", out.Errors)
	}
	return out.Data, nil
}

// post sends a prepared body; the load generator keeps its own work small so
// that the machine's two cores go to the server and the database.
func post(url, tok string, body []byte) ([]byte, error) {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

var createBody = `{"query":"mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { __typename ... on WriteSuccess { contentHash } ... on Problem { message } } }",` +
	`"variables":{"in":{"type":"hypothesis","title":"Benchmark hypothesis %d-%d","idempotencyKey":"c-%d-%d-%d",` +
	`"content":{"target_gene":"TREM2","confidence":0.5,"mechanism":"R47H lowers ligand binding"}}}}`

func createOne(url, tok string, w, i int) error {
	raw, err := post(url, tok, fmt.Appendf(nil, createBody, w, i, w, i, time.Now().UnixNano()))
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
		d, err := gql(url, tok, `mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { ... on WriteSuccess { ref contentHash } } }`,
			map[string]any{"in": map[string]any{"type": "hypothesis", "title": fmt.Sprintf("updated by %d", w), "content": map[string]any{"n": 0}}})
		check(err)
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
	raw, err := post(url, tok, fmt.Appendf(nil, updateBody, b.ref, b.hash, i+1))
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

var tpsRE = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbench runs a script with the same concurrency against the same database.
func pgbench(c *pgembed.Cluster, dir, script string) float64 {
	path := filepath.Join(dir, "script.sql")
	check(os.WriteFile(path, []byte(script), 0o644))
	_ = os.Chmod(path, 0o644)
	// Seed the per-client artifacts the update script locks.
	seed := `INSERT INTO artifacts (type, id, version, title, content, content_hash, lifecycle_state, schema_version, created_at, updated_at, created_by, updated_by)
	  SELECT 'hypothesis', 'floor-' || g, 1, 'floor', '{}', 'sha256:0', 'proposed', 1, now(), now(), 'bench', 'bench' FROM generate_series(0, 63) g ON CONFLICT DO NOTHING`
	psql(c, seed)
	bin := filepath.Join(pgBinDir(), "pgbench")
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(*writers), "-j", "2", "-T", strconv.Itoa(int(duration.Seconds())), "-f", path}
	args = append(args, connArgs(c)...)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		fail(fmt.Errorf("pgbench: %v\n%s", err, out))
	}
	m := tpsRE.FindSubmatch(out)
	if m == nil {
		fail(fmt.Errorf("pgbench output has no tps:\n%s", out))
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

func check(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "writes:", err)
	os.Exit(1)
}
