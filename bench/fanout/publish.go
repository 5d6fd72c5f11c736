package main

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 2 * time.Minute}

var createBody = `{"query":"mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { __typename ... on Problem { message } } }",` +
	`"variables":{"in":{"type":"hypothesis","id":%q,"title":"Fan-out benchmark hypothesis %s",` +
	`"content":{"target_gene":"TREM2","confidence":0.5,"mechanism":"R47H lowers ligand binding"}}}}`

// create writes one hypothesis with the given id through POST /graphql.
func create(addr, token, id string) error {
	raw, err := benchkit.Post(httpClient, "http://"+addr+"/graphql", token, fmt.Appendf(nil, createBody, id, id))
	if err != nil {
		return err
	}
	if !bytes.Contains(raw, []byte(`"__typename":"WriteSuccess"`)) {
		return fmt.Errorf("createArtifact %s: %s", id, raw)
	}
	return nil
}

// published is what the publisher did in the measured phase.
type published struct {
	sent     int
	failed   int // writes that returned an error (a timeout may still have committed)
	firstErr error
	offered  time.Duration   // first send to last send
	elapsed  time.Duration   // first send to last reply
	writeLat []time.Duration // send to reply, per write
}

// publish sends `total` measured events at `rate` per second, each at its due
// time. The load is open: each tick starts its write whether or not earlier
// ones have been answered (at most maxInFlight at once), so a server slowed by
// fan-out still gets the rate asked of it. Writes rotate over the tokens (one
// actor each, so the per-actor write limit is never the bottleneck). Each
// event's send time is stored in r.sentAt just before its request goes out.
func publish(srv *server, tokens []string, r *run, rate, total int) published {
	const maxInFlight = 1000
	sem := make(chan struct{}, maxInFlight)
	var wg sync.WaitGroup
	var mu sync.Mutex
	out := published{writeLat: make([]time.Duration, 0, total)}
	start := time.Now()
	interval := time.Second / time.Duration(rate)
	for seq := 0; seq < total; seq++ {
		// Each event has its due time; a late loop catches up instead of
		// dropping ticks, so the rate holds on average.
		time.Sleep(time.Until(start.Add(time.Duration(seq) * interval)))
		sem <- struct{}{}
		wg.Add(1)
		go func(seq int) {
			defer wg.Done()
			defer func() { <-sem }()
			t0 := time.Since(r.start)
			r.sentAt[seq].Store(t0.Nanoseconds())
			err := srv.create(tokens[seq%len(tokens)], fmt.Sprintf("%se%d", r.idPrefix(), seq))
			d := time.Since(r.start) - t0
			mu.Lock()
			if err != nil {
				out.failed++
				if out.firstErr == nil {
					out.firstErr = err
				}
			}
			out.writeLat = append(out.writeLat, d)
			mu.Unlock()
		}(seq)
	}
	out.offered = time.Since(start)
	wg.Wait()
	out.elapsed = time.Since(start)
	out.sent = total
	return out
}

// probe writes probe event k, which subscribers use to show they are live. An
// overloaded server may time out; the probe is sent again.
func probe(srv *server, token string, r *run, k int) {
	var err error
	for range 3 {
		if err = srv.create(token, fmt.Sprintf("%sp%d", r.idPrefix(), k)); err == nil {
			return
		}
	}
	benchkit.Fail(fmt.Errorf("probe %d: %w", k, err))
}

// awaitProbe waits until every subscriber still connected has seen probe k
// (delivery is in order, so it has also seen everything written before it).
func awaitProbe(subs []*subscriber, k int64, timeout time.Duration) (reached int, ok bool) {
	deadline := time.Now().Add(timeout)
	for {
		reached = 0
		open := 0
		for _, s := range subs {
			if s.lastProbe.Load() >= k {
				reached++
			} else if !s.closed.Load() {
				open++
			}
		}
		if open == 0 {
			return reached, reached == len(subs)
		}
		if time.Now().After(deadline) {
			return reached, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p * float64(len(sorted)-1))
	return sorted[i]
}

func sortDurations(ds []time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
}

// awaitPages waits until every page has received the events it is due, or
// until the deadline (what has not arrived by then counts as missing).
func awaitPages(pages []*subscriber, deadline time.Time) {
	for _, s := range pages {
		for int(s.got.Load()) < s.expect && !s.closed.Load() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}
