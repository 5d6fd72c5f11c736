package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

// The raw-SQL floor: pgbench running, prepared, the three statements our
// server issues for the Prism page, taken from queries/*.sql (the files sqlc
// compiles into the server) so that they cannot drift from it:
//
//  1. ArtifactGetByTypeID: the hub, by (type, id) — its pk is kept (\gset);
//  2. LinkListOutBrief: its first 21 links out (a page of 20 plus one, to
//     learn whether there is a next page), each with its target's envelope
//     (the page reads no target content);
//  3. SignalAggregates: the signal figures of the targets. The server passes
//     the target pks it read in statement 2; pgbench cannot carry an array from
//     one statement to the next, so the same pks are computed in the statement
//     by a subselect over links (an index scan of the 21 rows statement 2 read),
//     which the floor does on top of the server's work.
var floorParams = map[string]map[string]string{
	"ArtifactGetByTypeID": {"type": "'hypothesis'", "id": "'hub-' || (:h)::text"},
	"LinkListOutBrief":    {"pks": "ARRAY[(:a_pk)::bigint]", "predicates": "'{}'", "after_pk": "0", "lim": "21"},
	"SignalAggregates": {"pks": "(SELECT array_agg(to_pk) FROM (SELECT to_pk FROM links WHERE from_pk = (:a_pk)::bigint " +
		"ORDER BY pk LIMIT 21) s)"},
}

// floorScript builds the pgbench script from the named queries.
func floorScript(root string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\\set h random(1, %d)\n", hubs)
	for _, q := range []struct{ file, name, end string }{
		{"artifacts.sql", "ArtifactGetByTypeID", "\\gset a_\n"},
		{"links.sql", "LinkListOutBrief", ";\n"},
		{"signals.sql", "SignalAggregates", ";\n"},
	} {
		b.WriteString(bind(namedQuery(filepath.Join(root, "queries", q.file), q.name), floorParams[q.name]))
		b.WriteString(q.end)
	}
	return b.String()
}

// namedQuery returns the SQL of the sqlc query called name in file, without
// comments and the final semicolon.
func namedQuery(file, name string) string {
	raw, err := os.ReadFile(file)
	benchkit.Check(err)
	var lines []string
	in := false
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, "-- name: ") {
			in = strings.Fields(l)[2] == name
			continue
		}
		if in && !strings.HasPrefix(strings.TrimSpace(l), "--") && strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		benchkit.Fail(fmt.Errorf("no query %s in %s", name, file))
	}
	return strings.TrimSuffix(strings.TrimSpace(strings.Join(lines, "\n")), ";")
}

var (
	paramRE = regexp.MustCompile(`@(\w+)`)
	embedRE = regexp.MustCompile(`sqlc\.embed\((\w+)\)`)
)

// bind replaces sqlc's @params by pgbench expressions and sqlc.embed(t) by t.*.
func bind(sql string, params map[string]string) string {
	sql = embedRE.ReplaceAllString(sql, "$1.*")
	return paramRE.ReplaceAllStringFunc(sql, func(p string) string {
		v, ok := params[p[1:]]
		if !ok {
			benchkit.Fail(fmt.Errorf("no floor value for %s in %q", p, sql))
		}
		return "(" + v + ")"
	})
}

// floor runs the script with pgbench, prepared, and returns its throughput
// (transactions of three statements per second), latency percentiles from
// pgbench's per-transaction log, and CPU use (pgbench's as the client's).
func floor(conn, script string, clients int, warmup, duration time.Duration) figures {
	path := filepath.Join(tempDir, "prism.pgbench")
	benchkit.Check(os.WriteFile(path, []byte(script), 0o644))
	run := func(d time.Duration, logPrefix string) float64 {
		o := benchkit.PgbenchOpts{Conn: conn, Script: path, Clients: clients, Seconds: max(1, int(d.Round(time.Second).Seconds())), Dir: tempDir}
		if logPrefix != "" {
			o.Args = []string{"-l", "--log-prefix", logPrefix}
		}
		return benchkit.Pgbench(o)
	}
	if warmup >= time.Second {
		run(warmup, "")
	}
	prefix := filepath.Join(tempDir, fmt.Sprintf("pgbench-%d", time.Now().UnixNano()))
	before := benchkit.TakeCPU(0, pgData())
	tps := run(duration, prefix)
	time.Sleep(300 * time.Millisecond) // the postmaster reaps pgbench's backends
	after := benchkit.TakeCPU(0, pgData())
	lat := pgbenchLatencies(prefix)
	f := figures{RPS: tps, N: len(lat), CPU: before.Use(after, len(lat))}
	if len(lat) > 0 {
		f.P50, f.P99 = benchkit.Percentile(lat, 50), benchkit.Percentile(lat, 99)
	}
	return f
}

// pgbenchLatencies reads the per-transaction logs (the third field is the
// latency in µs) and removes them.
func pgbenchLatencies(prefix string) []time.Duration {
	files, _ := filepath.Glob(prefix + ".*")
	var out []time.Duration
	for _, f := range files {
		fh, err := os.Open(f)
		benchkit.Check(err)
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if fs := strings.Fields(sc.Text()); len(fs) >= 3 {
				if us, err := strconv.ParseInt(fs[2], 10, 64); err == nil {
					out = append(out, time.Duration(us)*time.Microsecond)
				}
			}
		}
		fh.Close()
		os.Remove(f)
	}
	return out
}
