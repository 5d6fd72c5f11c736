package main

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

// result is what one server with n subscribers measured.
type result struct {
	n                   int
	connect, live       time.Duration // opening the sockets; until every subscription delivered
	mem0, memN          mem           // no subscribers; n idle subscribers
	pub                 published
	drain               time.Duration // last write's reply to the fence reaching everyone
	fenceReached        int
	fenced              int // subscribers the fence is for
	fenceOK             bool
	closed              map[string]int
	window              float64 // seconds from the first write until every event was delivered
	serverCPU           float64 // shares of one core over window
	dbCPU               float64
	clientCPU           float64
	machineCPU          float64
	expected, delivered int64
	dups                int64
	complete            int // subscribers that received every event
	p50, p99, p999, max time.Duration
	// The same, from the event's occurredAt (the server's clock when it took
	// the write request) to the subscriber's read.
	occ50, occ99, occMax time.Duration
	// pages, broad: in the prism shape, the two groups' subscriber counts
	// (n is their sum) and each group's own latencies and deliveries.
	pages, broad int
	groups       []group
}

// group is one kind of subscriber's share of a prism-shape result.
type group struct {
	name string
	res  result
}

// collect gathers every subscriber's latencies.
func (res *result) collect(subs []*subscriber) {
	res.expected = 0
	for _, s := range subs {
		res.expected += int64(s.expect)
	}
	all := make([]int32, 0, res.expected)
	occ := make([]int32, 0, res.expected)
	for _, s := range subs {
		for _, v := range s.occ {
			if v != 0 {
				occ = append(occ, v-1)
			}
		}
		got := 0
		for _, v := range s.lat {
			if v != 0 {
				all = append(all, v-1)
				got++
			}
		}
		if got == s.expect {
			res.complete++
		}
		res.dups += int64(s.dups)
	}
	res.delivered = int64(len(all))
	slices.Sort(all)
	slices.Sort(occ)
	// Percentiles are over every expected delivery: a missing one counts as
	// later than any that arrived (never), shown as an infinite latency.
	at := func(xs []int32, p float64) time.Duration {
		i := int(p * float64(res.expected-1))
		if i >= len(xs) {
			return never
		}
		return time.Duration(xs[i]) * time.Microsecond
	}
	res.p50, res.p99, res.p999, res.max = at(all, 0.50), at(all, 0.99), at(all, 0.999), at(all, 1)
	res.occ50, res.occ99, res.occMax = at(occ, 0.50), at(occ, 0.99), at(occ, 1)
}

func (res *result) perIdle() (rss, heap, stack, goroutines float64) {
	n := float64(res.n)
	return float64(res.memN.rss-res.mem0.rss) / n, float64(res.memN.heapInuse-res.mem0.heapInuse) / n,
		float64(res.memN.stackInuse-res.mem0.stackInuse) / n, float64(res.memN.goroutines-res.mem0.goroutines) / n
}

func (res *result) print(name string) {
	rss, heap, stack, gs := res.perIdle()
	if res.pages > 0 {
		fmt.Printf("  %s: %d page subscribers (artifactEvents of their own artifact) + %d broad (events)\n", name, res.pages, res.broad)
	}
	fmt.Printf("  %s N=%d: connected in %s (%d handshakes at a time); every subscription delivering %s later\n",
		name, res.n, res.connect.Round(time.Millisecond), *dialConc, res.live.Round(time.Millisecond))
	fmt.Printf("    memory (after a forced GC): RSS %.1f MB -> %.1f MB = %.1f KB per idle subscriber (Go heap in use %.1f KB, goroutine stacks %.1f KB, %.1f goroutines each)\n",
		mb(res.mem0.rss), mb(res.memN.rss), rss/1024, heap/1024, stack/1024, gs)
	per := func(f func(mem) int64) float64 { return float64(f(res.memN)-f(res.mem0)) / float64(res.n) / 1024 }
	fmt.Printf("      and per subscriber: allocated while connecting %.1f KB; free heap spans not returned to the OS %.1f KB, GC metadata %.1f KB, span structures %.1f KB, other runtime %.1f KB\n",
		per(func(m mem) int64 { return m.totalAlloc }), per(func(m mem) int64 { return m.heapFree }), per(func(m mem) int64 { return m.gcSys }),
		per(func(m mem) int64 { return m.mspan }), per(func(m mem) int64 { return m.otherSys }))
	wl := slices.Clone(res.pub.writeLat)
	sortDurations(wl)
	fmt.Printf("    published %d events in %s (%.0f/s offered), write reply p50 %s p99 %s\n",
		res.pub.sent, res.pub.offered.Round(time.Millisecond), float64(res.pub.sent-1)/res.pub.offered.Seconds(),
		ms(percentile(wl, 0.5)), ms(percentile(wl, 0.99)))
	if res.pub.failed > 0 {
		fmt.Printf("    %d writes failed (their events count as missing); first: %s\n", res.pub.failed, truncate(res.pub.firstErr.Error(), 200))
	}
	other := res.machineCPU - res.serverCPU - res.dbCPU - res.clientCPU
	fmt.Printf("    CPU from the first write to the last delivery (%.1f s), in cores: server %.2f, PostgreSQL %.2f, subscribers+publishers %.2f, other processes %.2f, machine %.2f of %d\n",
		res.window, res.serverCPU, res.dbCPU, res.clientCPU, max(other, 0), res.machineCPU, cpus())
	clientPer := 1e6 * res.clientCPU * res.window / float64(max(res.delivered, 1))
	fmt.Printf("    CPU per delivered message: server %.1f µs, subscribers+publishers %.1f µs; so N=%d at %d events/s needs %.1f cores for the server and %.1f for the clients\n",
		res.cpuPerMessage(), clientPer, res.n, *rate, res.cpuPerMessage()*float64(res.n**rate)/1e6, clientPer*float64(res.n**rate)/1e6)
	fmt.Printf("    delivered %d of %d within %s of the last write (missing %d, duplicates %d); %d of %d subscribers got every event; the fence after the last write reached %d of %d in %s\n",
		res.delivered, res.expected, *drainWait, res.expected-res.delivered, res.dups, res.complete, res.n, res.fenceReached, res.fenced, res.drain.Round(time.Millisecond))
	fmt.Printf("    latency, write sent -> event read by the subscriber: p50 %s  p99 %s  p99.9 %s  max %s\n",
		ms(res.p50), ms(res.p99), ms(res.p999), ms(res.max))
	fmt.Printf("    latency, event occurredAt (server took the write) -> read:  p50 %s  p99 %s  max %s\n", ms(res.occ50), ms(res.occ99), ms(res.occMax))
	for _, g := range res.groups {
		fmt.Printf("    %s: delivered %d of %d, latency p50 %s  p99 %s  max %s\n", g.name, g.res.delivered, g.res.expected, ms(g.res.p50), ms(g.res.p99), ms(g.res.max))
	}
	if len(res.closed) > 0 {
		keys := make([]string, 0, len(res.closed))
		for k := range res.closed {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Printf("    ended early: %d subscribers: %s\n", res.closed[k], k)
		}
	}
}

func printTable(results, floors []result) {
	fmt.Println()
	fmt.Println("| N | KB per idle subscriber (RSS) | p50 | p99 | max | delivered / expected | server CPU per message | floor: KB per idle | floor: p99 | floor: delivered | floor: CPU per message |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	var at, atFloor *result
	for i := range results {
		r := &results[i]
		rss, _, _, _ := r.perIdle()
		fmt.Printf("| %d | %.1f | %s | %s | %s | %d / %d | %.1f µs |", r.n, rss/1024, ms(r.p50), ms(r.p99), ms(r.max), r.delivered, r.expected, r.cpuPerMessage())
		if i < len(floors) {
			f := &floors[i]
			frss, _, _, _ := f.perIdle()
			fmt.Printf(" %.1f | %s | %d / %d | %.1f µs |", frss/1024, ms(f.p99), f.delivered, f.expected, f.cpuPerMessage())
		} else {
			fmt.Printf(" – | – | – | – |")
		}
		fmt.Println()
		if r.n == targetN {
			at = r
			if i < len(floors) {
				atFloor = &floors[i]
			}
		}
	}
	fmt.Printf("\ntarget (TARGETS.md P4b): N = %d with p99 < %s, every event delivered, ≥ %.0f %% of the broadcaster's messages per CPU-second (and P4a's < %d KB per idle subscriber)\n",
		targetN, ms(targetP99), 100*targetShareCPU, targetPerIdleB/1024)
	if at == nil {
		fmt.Printf("  N = %d not measured in this run\n", targetN)
		return
	}
	rss, _, _, _ := at.perIdle()
	fmt.Printf("  p99 %s: %s\n", ms(at.p99), benchkit.Verdict(at.p99 < targetP99 && at.delivered == at.expected))
	fmt.Printf("  memory %.1f KB per idle subscriber: %s\n", rss/1024, benchkit.Verdict(rss < targetPerIdleB))
	fmt.Printf("  delivered %d of %d: %s\n", at.delivered, at.expected, benchkit.Verdict(at.delivered == at.expected))
	if atFloor != nil {
		share := atFloor.cpuPerMessage() / max(at.cpuPerMessage(), 1e-9)
		fmt.Printf("  %.0f %% of the broadcaster's messages per CPU-second (%.1f µs against %.1f µs a message): %s\n",
			100*share, at.cpuPerMessage(), atFloor.cpuPerMessage(), benchkit.Verdict(share >= targetShareCPU))
	}
}

// cpuPerMessage is the server's CPU time per delivered event, in microseconds.
func (res *result) cpuPerMessage() float64 {
	return 1e6 * res.serverCPU * res.window / float64(max(res.delivered, 1))
}

// never is the latency of an event that did not arrive.
const never = time.Duration(1<<63 - 1)

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func ms(d time.Duration) string {
	switch {
	case d == never:
		return "∞ (missing)"
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d >= 100*time.Millisecond:
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
}

// Targets of TARGETS.md P4a (the prism shape).
const (
	targetPrismP99  = 100 * time.Millisecond
	targetShareCPU  = 0.80 // P4b's share of the broadcaster's messages per CPU-second
	targetPrismIdle = 30 * 1024
)

// printPrism prints each prism-shape run beside the broadcaster's, as the
// ratios TARGETS.md P4a states its targets in.
func printPrism(results, floors []result) {
	fmt.Println()
	fmt.Println("| pages + broad | KB per idle subscriber (RSS) | pages p99 | broad p99 | delivered / expected | server CPU per message | floor: KB per idle | floor: pages p99 | floor: broad p99 | floor: CPU per message |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for i := range results {
		r := &results[i]
		rss, _, _, _ := r.perIdle()
		fmt.Printf("| %d + %d | %.1f | %s | %s | %d / %d | %.1f µs |", r.pages, r.broad, rss/1024, ms(r.group("pages").p99), ms(r.group("broad").p99),
			r.delivered, r.expected, r.cpuPerMessage())
		if i < len(floors) {
			f := &floors[i]
			frss, _, _, _ := f.perIdle()
			fmt.Printf(" %.1f | %s | %s | %.1f µs |", frss/1024, ms(f.group("pages").p99), ms(f.group("broad").p99), f.cpuPerMessage())
		} else {
			fmt.Printf(" – | – | – | – |")
		}
		fmt.Println()
	}
	fmt.Printf("\ntargets (TARGETS.md P4a), against the minimal gorilla/websocket broadcaster of the same run:\n")
	for i := range results {
		r := &results[i]
		rss, _, _, _ := r.perIdle()
		fmt.Printf("  %d pages + %d broad:\n", r.pages, r.broad)
		for _, name := range []string{"pages", "broad"} {
			g := r.group(name)
			fmt.Printf("    %s p99 %s (target < %s): %s", name, ms(g.p99), ms(targetPrismP99), benchkit.Verdict(g.p99 < targetPrismP99 && g.delivered == g.expected))
			if i < len(floors) {
				fmt.Printf("; %.1f× the broadcaster's %s", float64(g.p99)/float64(max(floors[i].group(name).p99, 1)), ms(floors[i].group(name).p99))
			}
			fmt.Println()
		}
		fmt.Printf("    %.1f KB per idle subscriber (target < %d KB): %s", rss/1024, targetPrismIdle/1024, benchkit.Verdict(rss < targetPrismIdle))
		if i < len(floors) {
			frss, _, _, _ := floors[i].perIdle()
			fmt.Printf("; %.2f× the broadcaster's %.1f KB", rss/max(frss, 1), frss/1024)
		}
		fmt.Println()
		if i < len(floors) {
			share := floors[i].cpuPerMessage() / max(r.cpuPerMessage(), 1e-9)
			fmt.Printf("    server CPU per message %.1f µs, the broadcaster's %.1f µs: %.0f %% of its messages per CPU-second (P4b asks ≥ %.0f %% of a broadcast): %s\n",
				r.cpuPerMessage(), floors[i].cpuPerMessage(), 100*share, 100*targetShareCPU, benchkit.Verdict(share >= targetShareCPU))
		}
		fmt.Printf("    delivered %d of %d: %s\n", r.delivered, r.expected, benchkit.Verdict(r.delivered == r.expected))
	}
}

// group is the named group's result (the zero result outside the prism shape).
func (res *result) group(name string) result {
	for _, g := range res.groups {
		if g.name == name {
			return g.res
		}
	}
	return result{}
}
