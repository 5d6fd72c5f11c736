package apitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// WSTimeout bounds every wait of the websocket client: a failure bound, not a
// pause.
const WSTimeout = 20 * time.Second

// WS is a graphql-transport-ws client for tests.
type WS struct {
	t    testing.TB
	conn *websocket.Conn

	wmu  sync.Mutex // serialises writes
	mu   sync.Mutex
	ops  map[string]chan WSMessage
	done chan struct{}
	// Close is the close frame the server sent (code 0 when the connection broke
	// without one); set when done is closed.
	closeCode   int
	closeReason string
}

// WSMessage is one server message for an operation.
type WSMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Data decodes a next message's payload.data into v and fails on errors.
func (m WSMessage) Data(t testing.TB, v any) {
	t.Helper()
	var p struct {
		Data   json.RawMessage `json:"data"`
		Errors []GQLError      `json:"errors"`
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		t.Fatalf("ws %s payload: %v: %s", m.Type, err, m.Payload)
	}
	if m.Type != "next" || len(p.Errors) > 0 {
		t.Fatalf("ws: want data, got %s %s", m.Type, m.Payload)
	}
	if err := json.Unmarshal(p.Data, v); err != nil {
		t.Fatalf("ws data: %v: %s", err, p.Data)
	}
}

// DialWS opens a websocket to the test server without initialising it.
func (e *Env) DialWS(t testing.TB, header http.Header) *WS {
	t.Helper()
	return DialURL(t, e.Server.URL, header)
}

// DialURL opens a graphql-transport-ws websocket to the server at base
// (http://host:port: a test server, or the real binary) without initialising it.
func DialURL(t testing.TB, base string, header http.Header) *WS {
	t.Helper()
	url := "ws" + strings.TrimPrefix(base, "http") + "/graphql"
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: WSTimeout}
	c, resp, err := d.Dial(url, header)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (HTTP %d)", url, err, status)
	}
	w := &WS{t: t, conn: c, ops: map[string]chan WSMessage{"": make(chan WSMessage, 16)}, done: make(chan struct{})}
	go w.read()
	t.Cleanup(func() { _ = c.Close() })
	return w
}

// WS opens a websocket and initialises it with the token; it fails the test
// unless the server acknowledges.
func (e *Env) WS(t testing.TB, token string) *WS {
	t.Helper()
	w := e.DialWS(t, nil)
	if err := w.Init(map[string]any{"Authorization": "Bearer " + token}); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *WS) read() {
	defer close(w.done)
	for {
		_, data, err := w.conn.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			w.mu.Lock()
			if errors.As(err, &ce) {
				w.closeCode, w.closeReason = ce.Code, ce.Text
			}
			w.mu.Unlock()
			return
		}
		var m WSMessage
		if err := json.Unmarshal(data, &m); err != nil {
			continue
		}
		if m.Type == "ping" {
			_ = w.Send(map[string]any{"type": "pong"})
			continue
		}
		if m.Type == "pong" || m.Type == "ka" {
			continue
		}
		w.channel(m.ID) <- m
	}
}

func (w *WS) channel(id string) chan WSMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch, ok := w.ops[id]
	if !ok {
		ch = make(chan WSMessage, 100000)
		w.ops[id] = ch
	}
	return ch
}

// Send writes one message.
func (w *WS) Send(m any) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return w.conn.WriteJSON(m)
}

// Init sends connection_init and waits for connection_ack; an error carries the
// close code and reason when the server refuses.
func (w *WS) Init(payload map[string]any) error {
	if err := w.Send(map[string]any{"type": "connection_init", "payload": payload}); err != nil {
		return err
	}
	select {
	case m := <-w.channel(""):
		if m.Type != "connection_ack" {
			return fmt.Errorf("want connection_ack, got %s", m.Type)
		}
		return nil
	case <-w.done:
		code, reason := w.Closed()
		return fmt.Errorf("closed %d %s", code, reason)
	case <-time.After(WSTimeout):
		return errors.New("no connection_ack")
	}
}

// Subscribe starts an operation.
func (w *WS) Subscribe(id, query string, vars map[string]any) {
	w.t.Helper()
	if err := w.Send(map[string]any{"type": "subscribe", "id": id, "payload": map[string]any{"query": query, "variables": vars}}); err != nil {
		w.t.Fatalf("subscribe %s: %v", id, err)
	}
}

// Complete ends an operation.
func (w *WS) Complete(id string) {
	_ = w.Send(map[string]any{"type": "complete", "id": id})
}

// Next waits for the operation's next message (next, error or complete).
func (w *WS) Next(id string) WSMessage {
	w.t.Helper()
	m, ok := w.TryNext(id, WSTimeout)
	if !ok {
		code, reason := w.Closed()
		w.t.Fatalf("ws: nothing for %s within %s (closed %d %q)", id, WSTimeout, code, reason)
	}
	return m
}

// TryNext waits up to d for the operation's next message.
func (w *WS) TryNext(id string, d time.Duration) (WSMessage, bool) {
	ch := w.channel(id)
	select {
	case m := <-ch:
		return m, true
	default:
	}
	select {
	case m := <-ch:
		return m, true
	case <-w.done:
		select {
		case m := <-ch:
			return m, true
		default:
			return WSMessage{}, false
		}
	case <-time.After(d):
		return WSMessage{}, false
	}
}

// Done is closed when the connection ends.
func (w *WS) Done() <-chan struct{} { return w.done }

// Closed returns the close code and reason the server sent (0 while open).
func (w *WS) Closed() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closeCode, w.closeReason
}

// WaitClosed waits for the server to close the connection and returns its code
// and reason.
func (w *WS) WaitClosed() (int, string) {
	w.t.Helper()
	select {
	case <-w.done:
		return w.Closed()
	case <-time.After(WSTimeout):
		w.t.Fatalf("ws: still open after %s", WSTimeout)
		return 0, ""
	}
}

// Close closes the connection from the client side.
func (w *WS) Close() {
	_ = w.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	_ = w.conn.Close()
}
