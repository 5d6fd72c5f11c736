package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

// page is a Prism page in a form both servers' answers reduce to.
type page struct {
	Ref, Title, Type string
	HasNext          bool
	Targets          []target
}

type target struct {
	Predicate, Ref, Title, Type string
	Signals                     summary
}

type summary struct {
	Vote *struct{ Score, Up, Down, Count int } `json:"vote"`
	// Kinds are compared with a tolerance on the floats (sums in another order).
	Kinds []struct {
		Kind, Dimension, Aggregation string
		Value, QuadraticTotal        *float64
		Count                        int
	} `json:"kinds"`
}

func ourPage(raw []byte) (page, error) {
	var r struct {
		Data struct {
			Artifact struct {
				Ref, Title, Type string
				Links            struct {
					PageInfo struct{ HasNextPage bool }
					Edges    []struct {
						Node struct {
							Predicate string
							To        struct {
								Ref, Title, Type string
								Signals          summary
							}
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return page{}, err
	}
	a := r.Data.Artifact
	p := page{Ref: unpin(a.Ref), Title: a.Title, Type: a.Type, HasNext: a.Links.PageInfo.HasNextPage}
	for _, e := range a.Links.Edges {
		t := e.Node.To
		p.Targets = append(p.Targets, target{e.Node.Predicate, t.Ref, t.Title, t.Type, t.Signals})
	}
	return p, nil
}

func postgraphilePage(raw []byte) (page, error) {
	type art struct {
		Type, ID, ContentHash, Title string
		SignalSummary                summary
	}
	var r struct {
		Data struct {
			ArtifactByTypeAndID struct {
				art
				LinksByFromPk struct {
					PageInfo struct{ HasNextPage bool }
					Edges    []struct {
						Node struct {
							Predicate      string
							ArtifactByToPk art
						}
					}
				}
			} `json:"artifactByTypeAndId"`
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return page{}, err
	}
	a := r.Data.ArtifactByTypeAndID
	p := page{Ref: a.Type + ":" + a.ID, Title: a.Title, Type: a.Type, HasNext: a.LinksByFromPk.PageInfo.HasNextPage}
	for _, e := range a.LinksByFromPk.Edges {
		t := e.Node.ArtifactByToPk
		p.Targets = append(p.Targets, target{e.Node.Predicate, t.Type + ":" + t.ID + "@" + t.ContentHash, t.Title, t.Type, t.SignalSummary})
	}
	return p, nil
}

func unpin(ref string) string { return strings.SplitN(ref, "@", 2)[0] }

// compareServers asks both servers for the Prism page of a sample of hubs and
// fails unless they return the same targets, in the same order, with the same
// titles, types, predicates and signal summaries.
func compareServers(ourURL, tok, pgURL string) {
	votes, funded := 0, 0
	for n := 1; n <= hubs; n += hubs / 40 {
		rawOurs, err := benchkit.Post(client, ourURL, tok, ourBody(n))
		benchkit.Check(err)
		rawPG, err := benchkit.Post(client, pgURL, "", pgBody(n))
		benchkit.Check(err)
		if !validResponse(rawOurs, n) || !validResponse(rawPG, n) {
			benchkit.Fail(fmt.Errorf("hub-%d: ours %.300s\nPostGraphile %.300s", n, rawOurs, rawPG))
		}
		ours, err := ourPage(rawOurs)
		benchkit.Check(err)
		pg, err := postgraphilePage(rawPG)
		benchkit.Check(err)
		if len(ours.Targets) != linksPerHub {
			benchkit.Fail(fmt.Errorf("hub-%d: %d targets, want %d", n, len(ours.Targets), linksPerHub))
		}
		if !samePage(ours, pg) {
			a, _ := json.MarshalIndent(ours, "", " ")
			b, _ := json.MarshalIndent(pg, "", " ")
			benchkit.Fail(fmt.Errorf("hub-%d: the servers disagree\nours: %s\nPostGraphile: %s", n, a, b))
		}
		for _, t := range ours.Targets {
			if t.Signals.Vote != nil && t.Signals.Vote.Count > 0 {
				votes++
			}
			for _, k := range t.Signals.Kinds {
				if k.Kind == "fund" && k.Count > 0 {
					funded++
				}
			}
		}
	}
	fmt.Printf("  check: both servers return the same 20 targets, predicates, titles and signal summaries for 40 hubs (%d targets with votes, %d funded)\n", votes, funded)
}

func samePage(a, b page) bool {
	if a.Ref != b.Ref || a.Title != b.Title || a.Type != b.Type || a.HasNext != b.HasNext || len(a.Targets) != len(b.Targets) {
		return false
	}
	for i := range a.Targets {
		x, y := a.Targets[i], b.Targets[i]
		if x.Predicate != y.Predicate || x.Ref != y.Ref || x.Title != y.Title || x.Type != y.Type ||
			!reflect.DeepEqual(x.Signals.Vote, y.Signals.Vote) || len(x.Signals.Kinds) != len(y.Signals.Kinds) {
			return false
		}
		for j, k := range x.Signals.Kinds {
			l := y.Signals.Kinds[j]
			if k.Kind != l.Kind || k.Dimension != l.Dimension || k.Aggregation != l.Aggregation || k.Count != l.Count ||
				!near(k.Value, l.Value) || !near(k.QuadraticTotal, l.QuadraticTotal) {
				return false
			}
		}
	}
	return true
}

func near(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return math.Abs(*a-*b) <= 1e-9*math.Max(1, math.Abs(*a))
}

// statementsPerPage counts, with pg_stat_statements, the SQL statements each
// server runs for one Prism page (docs/targets.md P2), over k sequential requests.
func statementsPerPage(ctx context.Context, conn, name, url, tok string, body func(int) []byte) {
	db, err := pgx.Connect(ctx, conn)
	benchkit.Check(err)
	defer db.Close(ctx)
	exec := func(sql string) {
		_, err := db.Exec(ctx, sql)
		benchkit.Check(err)
	}
	exec(`ALTER SYSTEM SET pg_stat_statements.track = 'top'`)
	exec(`ALTER SYSTEM SET pg_stat_statements.track_planning = on`)
	exec(`SELECT pg_reload_conf()`)
	time.Sleep(300 * time.Millisecond)
	// Every pooled connection reads the new setting before its next statement.
	exec(`SELECT prism.pg_stat_statements_reset()`)
	const k = 50
	for i := 0; i < k; i++ {
		_, err := benchkit.Post(client, url, tok, body(1+i*hubs/k))
		benchkit.Check(err)
	}
	rows, err := db.Query(ctx, `SELECT calls, plans, total_plan_time, total_exec_time, regexp_replace(left(query, 70), '\s+', ' ', 'g') FROM prism.pg_stat_statements
	    WHERE query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%pg_reload_conf%' AND calls >= $1 ORDER BY calls DESC`, k/2)
	benchkit.Check(err)
	total := 0
	var planMS, execMS float64
	var lines []string
	for rows.Next() {
		var calls, plans int
		var plan, exec float64
		var q string
		benchkit.Check(rows.Scan(&calls, &plans, &plan, &exec, &q))
		total += calls
		planMS += plan
		execMS += exec
		lines = append(lines, fmt.Sprintf("      %4.1f× %s (planned %d of %d times, %.3f ms; executed %.3f ms)", float64(calls)/k, q, plans, calls, plan/float64(max(plans, 1)), exec/float64(calls)))
	}
	benchkit.Check(rows.Err())
	exec(`ALTER SYSTEM SET pg_stat_statements.track = 'none'`)
	exec(`ALTER SYSTEM SET pg_stat_statements.track_planning = off`)
	exec(`SELECT pg_reload_conf()`)
	fmt.Printf("  %s: %.1f SQL statements per Prism page, %.2f ms planning them and %.2f ms executing them (pg_stat_statements over %d requests)\n%s\n",
		name, float64(total)/k, planMS/k, execMS/k, k, strings.Join(lines, "\n"))
}
