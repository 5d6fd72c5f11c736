package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// feedQuery is the subscription of the feed shape, and of the broad group of
// the prism shape: every hypothesis created.
var feedQuery = map[string]any{"query": `subscription { events(types: ["hypothesis.created"]) { id occurredAt ref } }`}

// pageQuery is a Prism page's subscription: the events of one artifact, the
// one measured event seq creates. Like the live page's own operation
// (internal/livepage), the document is the same for every page and the ref a
// variable, so the server parses and validates it once.
func pageQuery(r *run, seq int) map[string]any {
	return map[string]any{
		"query":     `subscription PageEvents($ref: Ref!) { artifactEvents(ref: $ref) { id occurredAt ref } }`,
		"variables": map[string]string{"ref": fmt.Sprintf("hypothesis:%se%d", r.id, seq)},
	}
}

// subscriber is one websocket client with one subscription. Its reader
// goroutine records, for every measured event, the latency from the moment the
// publisher sent the write to the moment the message was read here.
type subscriber struct {
	ws  *websocket.Conn
	run *run

	// lat[seq] is the latency of measured event seq in microseconds plus one;
	// zero means not received. Only the reader goroutine writes it, and it is
	// read after the reader is known to be done with the phase (fence).
	lat []int32
	// occ[seq] is the same from the event's occurredAt: the server's clock
	// when it took the write request (same machine, same clock).
	occ  []int32
	dups int32
	// expect is how many measured events this subscriber is due: all of them
	// on a feed, one or none on a page.
	expect int
	got    atomic.Int32 // measured events received, for awaitPages

	lastProbe atomic.Int64 // highest probe number received
	closed    atomic.Bool
	closeErr  atomic.Value // error: why reading stopped
}

// run is what the subscribers of one server share: the publisher's send
// times, indexed by sequence number, and the id prefix of this run's events.
type run struct {
	id     string // "fanout-<run>-": the ids of this run's hypotheses start with it
	start  time.Time
	sentAt []atomic.Int64 // ns since start, set just before the write is sent
	prefix []byte         // `"ref":"hypothesis:fanout-<run>-`
}

var dialer = &websocket.Dialer{
	Subprotocols:     []string{"graphql-transport-ws"},
	HandshakeTimeout: 60 * time.Second,
	// Messages are a few hundred bytes; small buffers keep 10k clients cheap.
	ReadBufferSize:  1024,
	WriteBufferSize: 512,
}

// connect opens n subscribers, at most conc handshakes at a time, and returns
// once each has its connection_ack and has sent its subscribe; subscriber i
// sends query(i).
func connect(addr, token string, r *run, n, conc, events int, query func(i int) map[string]any) ([]*subscriber, time.Duration, error) {
	start := time.Now()
	subs := make([]*subscriber, n)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	var failed int
	for i := range subs {
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			s, err := dial(addr, token, r, events, query(i))
			if err != nil {
				mu.Lock()
				failed++
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			subs[i] = s
			go s.read()
		}(i)
	}
	wg.Wait()
	if failed > 0 {
		closeAll(subs)
		return nil, 0, fmt.Errorf("%d of %d subscribers failed to connect; first: %w", failed, n, firstErr)
	}
	return subs, time.Since(start), nil
}

func dial(addr, token string, r *run, events int, query map[string]any) (*subscriber, error) {
	ws, _, err := dialer.Dial("ws://"+addr+"/graphql", http.Header{})
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	fail := func(err error) (*subscriber, error) { ws.Close(); return nil, err }
	init := map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + token}}
	if err := ws.WriteJSON(init); err != nil {
		return fail(fmt.Errorf("connection_init: %w", err))
	}
	_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			return fail(fmt.Errorf("waiting for connection_ack: %w", err))
		}
		if bytes.Contains(msg, []byte(`"connection_ack"`)) {
			break
		}
		if !bytes.Contains(msg, []byte(`"ping"`)) && !bytes.Contains(msg, []byte(`"pong"`)) {
			return fail(fmt.Errorf("expected connection_ack, got %s", msg))
		}
	}
	_ = ws.SetReadDeadline(time.Time{})
	sub := map[string]any{"id": "1", "type": "subscribe", "payload": query}
	if err := ws.WriteJSON(sub); err != nil {
		return fail(fmt.Errorf("subscribe: %w", err))
	}
	return &subscriber{ws: ws, run: r, lat: make([]int32, events), occ: make([]int32, events), expect: events}, nil
}

var (
	pingMsg = []byte(`"type":"ping"`)
	nextMsg = []byte(`"type":"next"`)
	pongMsg = []byte(`{"type":"pong"}`)
)

// read handles messages until the connection ends. It does as little as it can
// per message: the clients share the machine's two cores with the server.
func (s *subscriber) read() {
	defer s.closed.Store(true)
	for {
		_, msg, err := s.ws.ReadMessage()
		now := time.Now()
		if err != nil {
			s.closeErr.Store(err)
			return
		}
		switch {
		case bytes.Contains(msg, nextMsg):
			s.record(msg, now)
		case bytes.Contains(msg, pingMsg):
			// gqlgen closes a socket that does not answer its pings.
			if err := s.ws.WriteMessage(websocket.TextMessage, pongMsg); err != nil {
				s.closeErr.Store(err)
				return
			}
		default:
			// error or complete: the subscription ended; the server decides
			// whether the socket goes too, so keep reading.
			s.closeErr.Store(fmt.Errorf("unexpected message: %s", msg))
		}
	}
}

var occurredKey = []byte(`"occurredAt":"`)

// record notes one event: a probe (readiness and fences) or a measured event.
func (s *subscriber) record(msg []byte, now time.Time) {
	i := bytes.Index(msg, s.run.prefix)
	if i < 0 {
		return // someone else's hypothesis
	}
	id := msg[i+len(s.run.prefix):]
	kind := id[0]
	end := bytes.IndexByte(id, '@')
	if end < 0 {
		return
	}
	n, err := strconv.Atoi(string(id[1:end]))
	if err != nil {
		return
	}
	switch kind {
	case 'p':
		if int64(n) > s.lastProbe.Load() {
			s.lastProbe.Store(int64(n))
		}
	case 'e':
		if n >= len(s.lat) {
			return
		}
		if s.lat[n] != 0 {
			s.dups++
			return
		}
		us := (now.Sub(s.run.start).Nanoseconds() - s.run.sentAt[n].Load()) / 1000
		s.lat[n] = int32(min(us, 1<<31-2)) + 1
		defer s.got.Add(1) // after occ too: awaitPages then reads both
		if i := bytes.Index(msg, occurredKey); i >= 0 {
			v := msg[i+len(occurredKey):]
			if j := bytes.IndexByte(v, '"'); j > 0 {
				if t, err := time.Parse(time.RFC3339Nano, string(v[:j])); err == nil {
					s.occ[n] = int32(max(min(now.Sub(t).Microseconds(), 1<<31-2), 0)) + 1
				}
			}
		}
	}
}

func closeAll(subs []*subscriber) {
	for _, s := range subs {
		if s != nil {
			s.ws.Close()
		}
	}
}

// closeReasons counts why subscribers stopped reading before the end.
func closeReasons(subs []*subscriber) map[string]int {
	out := map[string]int{}
	for _, s := range subs {
		v := s.closeErr.Load()
		if v == nil {
			continue
		}
		err := v.(error)
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			out[fmt.Sprintf("close %d %s", ce.Code, truncate(ce.Text, 60))]++
			continue
		}
		out[truncate(err.Error(), 80)]++
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
