package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

// The fan-out floor: the least a Go server on gorilla/websocket can do to
// deliver the same events to the same subscribers. It speaks just enough
// graphql-transport-ws for the subscribers (ack the init, accept one
// subscribe), and POST /publish encodes each event once, as a prepared
// websocket frame, and queues it to every subscriber's writer goroutine. No
// database, no GraphQL execution, no authentication, one frame for everyone
// (every subscriber used the same operation id). A subscriber on
// artifactEvents (the prism shape) is indexed by its ref and gets only that
// artifact's events, as an indexed broadcaster would do. It runs as its own
// process (this binary re-executed with -floor-serve), like the server.

var floorServe = false

func init() {
	// Checked before flag.Parse so that the floor process ignores the
	// benchmark's flags.
	for _, a := range os.Args[1:] {
		if a == "-floor-serve" {
			floorServe = true
		}
	}
}

// floor is the floor server's state.
type floor struct {
	mu    sync.Mutex
	subs  map[*floorConn]struct{}            // on the events feed
	byRef map[string]map[*floorConn]struct{} // on artifactEvents(ref)
	seq   atomic.Int64
}

// artifactRefRE finds the ref of an artifactEvents subscription in a
// subscribe message (pageQuery: the ref is the variable "ref").
var artifactRefRE = regexp.MustCompile(`"variables":\{"ref":"([^"]+)"`)

type floorConn struct {
	ws *websocket.Conn
	ch chan *websocket.PreparedMessage
}

var floorUpgrader = websocket.Upgrader{
	Subprotocols:    []string{"graphql-transport-ws"},
	WriteBufferPool: &sync.Pool{},
}

func runFloorServer() {
	f := &floor{subs: map[*floorConn]struct{}{}, byRef: map[string]map[*floorConn]struct{}{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/graphql", f.serveWS)
	mux.HandleFunc("POST /publish", f.publish)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {})
	mux.HandleFunc("GET /subscribers", func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		n := len(f.subs)
		for _, set := range f.byRef {
			n += len(set)
		}
		f.mu.Unlock()
		fmt.Fprintln(w, n)
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	benchkit.Check(err)
	fmt.Fprintf(os.Stderr, "msg=listening addr=%s\n", l.Addr())
	benchkit.Check(http.Serve(l, mux))
}

func (f *floor) serveWS(w http.ResponseWriter, r *http.Request) {
	ws, err := floorUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	if _, msg, err := ws.ReadMessage(); err != nil || !bytes.Contains(msg, []byte(`"connection_init"`)) {
		return
	}
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"connection_ack"}`)); err != nil {
		return
	}
	_, msg, err := ws.ReadMessage()
	if err != nil || !bytes.Contains(msg, []byte(`"subscribe"`)) {
		return
	}
	ref := ""
	if m := artifactRefRE.FindSubmatch(msg); m != nil {
		ref = string(m[1])
	}
	c := &floorConn{ws: ws, ch: make(chan *websocket.PreparedMessage, 256)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pm := range c.ch {
			_ = ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if ws.WritePreparedMessage(pm) != nil {
				return
			}
		}
	}()
	f.mu.Lock()
	set := f.subs
	if ref != "" {
		if f.byRef[ref] == nil {
			f.byRef[ref] = map[*floorConn]struct{}{}
		}
		set = f.byRef[ref]
	}
	set[c] = struct{}{}
	f.mu.Unlock()
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			break
		}
	}
	f.mu.Lock()
	delete(set, c)
	if ref != "" && len(set) == 0 {
		delete(f.byRef, ref)
	}
	f.mu.Unlock()
	close(c.ch)
	<-done
}

// publish fans one event out: the body is the hypothesis id.
func (f *floor) publish(w http.ResponseWriter, r *http.Request) {
	id, _ := io.ReadAll(r.Body)
	n := f.seq.Add(1)
	msg := fmt.Appendf(nil, `{"id":"1","type":"next","payload":{"data":{"events":{"id":"%d","occurredAt":%q,"ref":"hypothesis:%s@sha256:%064x"}}}}`,
		n, time.Now().UTC().Format(time.RFC3339Nano), id, n)
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, msg)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	f.mu.Lock()
	for _, set := range []map[*floorConn]struct{}{f.subs, f.byRef["hypothesis:"+string(id)]} {
		for c := range set {
			select {
			case c.ch <- pm:
			default: // a subscriber 256 events behind misses this one: counted as missing
			}
		}
	}
	f.mu.Unlock()
}

// startFloor runs the floor server as a child process and waits for it.
func startFloor() *server {
	exe, err := os.Executable()
	benchkit.Check(err)
	s := launch(exe, []string{"-floor-serve"}, nil)
	s.floor = true
	s.pprof = s.Addr
	return s
}

// floorCreate asks the floor server to fan out the event with this id.
func floorCreate(addr, id string) error {
	resp, err := httpClient.Post("http://"+addr+"/publish", "text/plain", strings.NewReader(id))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("floor publish: %s", resp.Status)
	}
	return nil
}
