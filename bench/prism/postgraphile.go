package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

// signalSummarySQL gives PostGraphile the equivalent of our `signals` field as a
// computed column, Artifact.signalSummary: per signal kind and dimension the
// artifact's type declares (kinds by name, dimensions in declared order), the
// aggregate the schema declares — the mean of each voter's latest value
// (replace), the total and the quadratic-funding total (Σ√v)² over funders
// (sum), the newest value (append) — and the vote tally over each voter's latest
// vote. The declarations are read once from the schema registry into
// prism.signal_decls (not exposed), as our server holds them in memory.
const signalSummarySQL = `
CREATE SCHEMA IF NOT EXISTS prism;
DROP TABLE IF EXISTS prism.signal_decls CASCADE;
CREATE TABLE prism.signal_decls AS
SELECT s.type, k.key AS kind, d.dim AS dimension, d.ord::int AS ord, k.value->>'aggregation' AS aggregation
FROM (SELECT DISTINCT ON (type) type, document FROM schemas ORDER BY type, version DESC) s
CROSS JOIN LATERAL jsonb_each(coalesce(s.document->'signals', '{}')) k
CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(k.value->'dimensions') = 'array' AND jsonb_array_length(k.value->'dimensions') > 0
    THEN k.value->'dimensions' ELSE '["default"]' END) WITH ORDINALITY AS d (dim, ord);
CREATE INDEX ON prism.signal_decls (type);
ANALYZE prism.signal_decls;

CREATE OR REPLACE FUNCTION public.artifacts_signal_summary(a public.artifacts) RETURNS jsonb
LANGUAGE sql STABLE AS $$
WITH s AS (
    SELECT kind, dimension, voter, value, pk FROM public.signals WHERE artifact_pk = a.pk
), latest AS (
    SELECT DISTINCT ON (kind, dimension, voter) kind, dimension, value FROM s ORDER BY kind, dimension, voter, pk DESC
), by_latest AS (
    SELECT kind, dimension, count(*) AS voters, avg(value) AS mean, sum(value) AS total,
        count(*) FILTER (WHERE value > 0) AS up, count(*) FILTER (WHERE value < 0) AS down
    FROM latest GROUP BY kind, dimension
), per_voter AS (
    SELECT kind, dimension, voter, sum(value) AS total, count(*) AS n FROM s GROUP BY kind, dimension, voter
), by_all AS (
    SELECT kind, dimension, sum(total) AS total, sum(n) AS n, power(sum(sqrt(greatest(total, 0))), 2) AS quadratic
    FROM per_voter GROUP BY kind, dimension
), newest AS (
    SELECT DISTINCT ON (kind, dimension) kind, dimension, value FROM s ORDER BY kind, dimension, pk DESC
), agg AS (
    SELECT d.kind, d.dimension, d.ord, d.aggregation, l.total AS vote_total, l.up, l.down, l.voters,
        CASE d.aggregation WHEN 'replace' THEN l.mean WHEN 'sum' THEN coalesce(b.total, 0) WHEN 'append' THEN nw.value END AS value,
        CASE d.aggregation WHEN 'replace' THEN coalesce(l.voters, 0) ELSE coalesce(b.n, 0) END AS count,
        CASE WHEN d.aggregation = 'sum' THEN coalesce(b.quadratic, 0) END AS quadratic
    FROM prism.signal_decls d
    LEFT JOIN by_latest l ON l.kind = d.kind AND l.dimension = d.dimension
    LEFT JOIN by_all b ON b.kind = d.kind AND b.dimension = d.dimension
    LEFT JOIN newest nw ON nw.kind = d.kind AND nw.dimension = d.dimension
    WHERE d.type = a.type
)
SELECT jsonb_build_object(
    'vote', (SELECT jsonb_build_object('score', coalesce(sum(vote_total), 0)::int, 'up', coalesce(sum(up), 0)::int,
                                       'down', coalesce(sum(down), 0)::int, 'count', coalesce(sum(voters), 0)::int)
             FROM agg WHERE kind = 'vote' HAVING count(*) > 0),
    'kinds', coalesce((SELECT jsonb_agg(jsonb_build_object('kind', kind, 'dimension', dimension, 'aggregation', aggregation,
                                        'value', value, 'count', count, 'quadraticTotal', quadratic)
                                    ORDER BY kind COLLATE "C", ord)
                       FROM agg), '[]'))
$$;
`

// pgQuery is the Prism page asked of PostGraphile: the artifact by its unique
// (type, id), its first 20 links out in pk order, each link's predicate and
// target with the target's ref parts (type, id, content hash), title and signal
// summary.
const pgQuery = `query Prism($type: String!, $id: String!) {
  artifactByTypeAndId(type: $type, id: $id) {
    type id contentHash title
    linksByFromPk(first: 20, orderBy: PK_ASC) {
      pageInfo { hasNextPage endCursor }
      edges { node {
        predicate
        artifactByToPk { type id contentHash title signalSummary }
      } }
    }
  }
}`

// pgURL turns the cluster's keyword connection string into the postgres:// URL
// node-postgres understands, over the same unix socket.
func pgURL(conn string) string {
	kv := benchkit.ConnParams(conn)
	q := url.Values{"host": {kv["host"]}, "port": {kv["port"]}, "user": {kv["user"]}}
	return "postgres:///" + kv["dbname"] + "?" + q.Encode()
}

// startPostGraphile installs the npm project if needed, creates the computed
// column and runs the PostGraphile CLI on the public schema with production
// flags, returning its GraphQL URL once it answers, and its process group.
func startPostGraphile(ctx context.Context, root, connString string, workers, poolSize int) (string, int) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			benchkit.Fail(fmt.Errorf("%s not found: install Debian's nodejs and npm (scripts/deps test does)", tool))
		}
	}
	dir := filepath.Join(root, "bench", "prism", "postgraphile")
	cli := filepath.Join(dir, "node_modules", "postgraphile", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		fmt.Println("  npm ci in bench/prism/postgraphile")
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			benchkit.Fail(fmt.Errorf("npm ci: %v\n%s", err, out))
		}
	}
	benchkit.ExecSQL(ctx, connString, signalSummarySQL)

	port := freePort()
	args := []string{cli,
		"--connection", pgURL(connString),
		"--schema", "public",
		"--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--dynamic-json", "--disable-default-mutations", "--disable-graphiql", "--disable-query-log",
		"--no-setof-functions-contain-nulls", "--no-ignore-rbac",
		"--max-pool-size", strconv.Itoa(poolSize),
	}
	if workers > 1 {
		args = append(args, "--cluster-workers", strconv.Itoa(workers))
	}
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_ENV=production")
	logf, err := os.Create(filepath.Join(tempDir, "postgraphile.log"))
	benchkit.Check(err)
	cmd.Stdout, cmd.Stderr = logf, logf
	pgid := startGroup(cmd, "postgraphile")
	u := fmt.Sprintf("http://127.0.0.1:%d/graphql", port)
	body := pgBody(1)
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		// With cluster workers, each answers once it has built its schema; ask
		// a few times so both have.
		ok := 0
		for i := 0; i < 8; i++ {
			if raw, err := benchkit.Post(client, u, "", body); err == nil && validResponse(raw, 1) {
				ok++
			}
		}
		if ok == 8 {
			return u, pgid
		}
		time.Sleep(300 * time.Millisecond)
	}
	log, _ := os.ReadFile(logf.Name())
	benchkit.Fail(fmt.Errorf("postgraphile did not answer:\n%s", log))
	return "", 0
}
