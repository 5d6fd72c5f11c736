package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/e2e"
)

// loseAnswer is the consumer's HTTP transport: once armed, it lets one poll
// that carries a full page reach the server and be answered in full, then SIGKILLs
// the server and tells the consumer the request failed: the answer a server
// gave just before it died, lost in transit.
type loseAnswer struct {
	armed  atomic.Bool
	full   int           // only a full page is lost
	killed chan struct{} // closed once the server is killed
	kill   func()
	once   sync.Once
}

func (l *loseAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !l.armed.Load() {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var page struct {
		Data struct {
			Poll struct{ Events []json.RawMessage }
		}
	}
	if json.Unmarshal(body, &page) == nil && len(page.Data.Poll.Events) == l.full && l.armed.CompareAndSwap(true, false) {
		l.once.Do(func() {
			l.kill()
			close(l.killed)
		})
		return nil, errors.New("connection reset: the server died before its answer arrived")
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// Issue 17, consumers that never skip: a durable consumer polling with the
// default arguments (consumerId and limit, nothing else) while a writer commits
// N writes; the server is SIGKILLed mid-stream right after answering a poll
// whose answer never arrives, and restarted on the same database. Every
// acknowledged write's event reaches the consumer, and duplicates stay within
// one page.
func TestDefaultPollNeverSkips(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const writes, limit = 400, 25
	dataDir := e2e.DataDir(t)
	srv := &liveServer{p: e2e.Start(t, e2e.Opts{DataDir: dataDir, Args: []string{"--write-rate", "0"}})}
	reader := e2e.Token(t, dataDir, "durable-reader", "contributor")
	writer := e2e.Token(t, dataDir, "durable-writer", "contributor")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	lose := &loseAnswer{full: limit, killed: make(chan struct{}), kill: func() {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		srv.p.Kill()
	}}
	client := &http.Client{Transport: lose}
	type page struct {
		Poll struct {
			Events  []struct{ Type, Ref string }
			HasMore bool
		}
	}
	const q = `{ poll(consumerId: "durable", limit: 25) { events { type ref } hasMore } }`
	pollOnce := func(out *page) error {
		body, _ := json.Marshal(map[string]any{"query": q})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.url()+"/graphql", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+reader)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var r struct {
			Data   page
			Errors []struct{ Message string }
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
		}
		if len(r.Errors) > 0 {
			return errors.New(r.Errors[0].Message)
		}
		*out = r.Data
		return nil
	}
	// The consumer's first poll: it begins at the end of the log, now.
	if err := retry(ctx, func() error { return pollOnce(&page{}) }); err != nil {
		t.Fatal(err)
	}

	var (
		ackMu sync.Mutex
		acked []string // refs whose create returned WriteSuccess
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		for n := range writes {
			var out struct {
				R struct{ Typename, Ref string } `json:"r"`
			}
			in := map[string]any{"type": "hypothesis", "title": fmt.Sprintf("durable item %d", n), "content": map[string]any{},
				"idempotencyKey": fmt.Sprintf("durable-%d", n)}
			err := retry(ctx, func() error {
				if err := gql(ctx, srv.url(), writer, `mutation($in: CreateArtifactInput!) { r: createArtifact(input: $in) { typename: __typename ... on WriteSuccess { ref } } }`,
					map[string]any{"in": in}, &out); err != nil {
					return err
				}
				if out.R.Typename != "WriteSuccess" {
					return fmt.Errorf("create: %s", out.R.Typename)
				}
				return nil
			})
			if err != nil {
				t.Errorf("write %d: %v", n, err)
				return
			}
			ackMu.Lock()
			acked = append(acked, out.R.Ref)
			ackMu.Unlock()
		}
	}()

	// Restart the server on the same data once the consumer's answer was lost.
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		select {
		case <-lose.killed:
		case <-ctx.Done():
			return
		}
		p2 := e2e.Start(t, e2e.Opts{DataDir: dataDir, Args: []string{"--write-rate", "0"}})
		srv.mu.Lock()
		srv.p = p2
		srv.mu.Unlock()
	}()

	// The consumer: process a page, ask for the next; on an error, ask again.
	got := map[string]int{}
	var delivered int
	writerDone := false
	for ctx.Err() == nil {
		var pg page
		if err := pollOnce(&pg); err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		for _, e := range pg.Poll.Events {
			if e.Type == "hypothesis.created" {
				got[e.Ref]++
				delivered++
			}
		}
		if delivered >= writes/4 && !lose.armed.Load() {
			select {
			case <-lose.killed:
			default:
				lose.armed.Store(true)
			}
		}
		if lose.armed.Load() {
			// Let the writer get a page ahead, so that the answer lost is a full page.
			for ctx.Err() == nil {
				ackMu.Lock()
				ahead := len(acked) >= delivered+limit
				ackMu.Unlock()
				if ahead {
					break
				}
				select {
				case <-done:
				case <-time.After(5 * time.Millisecond):
					continue
				}
				break
			}
		}
		if !writerDone {
			select {
			case <-done:
				writerDone = true
			default:
			}
			continue
		}
		// Caught up after the writer finished: nothing more will come.
		if !pg.Poll.HasMore && len(pg.Poll.Events) == 0 {
			break
		}
	}
	<-done
	<-restarted
	if ctx.Err() != nil {
		t.Fatalf("timed out: %d events delivered", delivered)
	}
	select {
	case <-lose.killed:
	default:
		t.Fatal("the server was never killed: the test proved nothing")
	}

	ackMu.Lock()
	defer ackMu.Unlock()
	var missing []string
	for _, ref := range acked {
		if got[ref] == 0 {
			missing = append(missing, ref)
		}
	}
	dups := delivered - len(got)
	t.Logf("%d writes acknowledged; the consumer got %d events, %d distinct, %d duplicates; %d missing", len(acked), delivered, len(got), dups, len(missing))
	if len(acked) != writes {
		t.Errorf("%d writes acknowledged, want %d", len(acked), writes)
	}
	if len(missing) > 0 {
		t.Errorf("%d acknowledged writes never reached the consumer (first %s): a page lost in transit was skipped", len(missing), missing[0])
	}
	if dups > limit {
		t.Errorf("%d duplicates, want at most one page (%d)", dups, limit)
	}
	var c struct {
		Consumer struct{ Deliveries, Redeliveries, DeadLetterCount int }
	}
	if err := gql(ctx, srv.url(), reader, `{ consumer(id: "durable") { deliveries redeliveries deadLetterCount } }`, nil, &c); err != nil {
		t.Fatal(err)
	}
	t.Logf("the server counted %d deliveries, %d redeliveries, %d dead letters", c.Consumer.Deliveries, c.Consumer.Redeliveries, c.Consumer.DeadLetterCount)
	if c.Consumer.Redeliveries < dups || c.Consumer.Redeliveries > limit || c.Consumer.DeadLetterCount != 0 {
		t.Errorf("server counts %+v: want between the consumer's %d duplicates and one page of redeliveries, no dead letter", c.Consumer, dups)
	}
}
