package apitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// SSE is one graphql-sse stream (distinct connections mode) for tests: the
// response to one request with Accept: text/event-stream, read as it arrives.
type SSE struct {
	t      testing.TB
	Header http.Header
	events chan SSEEvent // closed when the stream ends
	cancel context.CancelFunc
}

// SSEEvent is one message of a stream: an event with its data, or a comment
// (a keepalive).
type SSEEvent struct {
	ID      string // the id field (an event's cursor), "" for none
	Event   string
	Data    json.RawMessage
	Comment bool
}

// Result decodes a next event's data, an execution result.
func (e SSEEvent) Result(t testing.TB) Response {
	t.Helper()
	if e.Event != "next" {
		t.Fatalf("sse: want a next event, got %q %s", e.Event, e.Data)
	}
	var r Response
	if err := json.Unmarshal(e.Data, &r); err != nil {
		t.Fatalf("sse next data: %v: %s", err, e.Data)
	}
	r.Raw = e.Data
	return r
}

// SSERequest builds a graphql-sse request to the test server.
func (e *Env) SSERequest(t testing.TB, method, token, query string, vars map[string]any) *http.Request {
	t.Helper()
	return SSERequestURL(t, e.Server.URL, method, token, query, vars)
}

// SSERequestURL builds a graphql-sse request to the server at base (a test
// server, or the real binary): a POST with the operation as its JSON body, or
// a GET with it in the query string; token "" sends none.
func SSERequestURL(t testing.TB, base, method, token, query string, vars map[string]any) *http.Request {
	t.Helper()
	var req *http.Request
	if method == http.MethodGet {
		q := url.Values{"query": {query}}
		if vars != nil {
			v, _ := json.Marshal(vars)
			q.Set("variables", string(v))
		}
		req, _ = http.NewRequest(http.MethodGet, base+"/graphql?"+q.Encode(), nil)
	} else {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		req, _ = http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// SSE sends a subscription (or any operation) as a POST and returns its
// stream; the test fails unless the server opened one.
func (e *Env) SSE(t testing.TB, token, query string, vars map[string]any) *SSE {
	t.Helper()
	s, resp := StartSSE(t, e.SSERequest(t, http.MethodPost, token, query, vars))
	if s == nil {
		t.Fatalf("sse: no stream opened (%d): %s", resp.Status, resp.Raw)
	}
	return s
}

// StartSSE sends req. When the server answers 200 with text/event-stream it
// returns the stream, read until it ends or the test does; otherwise the
// response, as Raw would decode it.
func StartSSE(t testing.TB, req *http.Request) (*SSE, *Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		defer cancel()
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		out := &Response{Status: resp.StatusCode, Raw: raw}
		_ = json.Unmarshal(raw, out)
		return nil, out
	}
	s := &SSE{t: t, Header: resp.Header, events: make(chan SSEEvent, 64), cancel: cancel}
	go s.read(resp.Body)
	t.Cleanup(cancel)
	return s, nil
}

// read parses the event stream (the HTML spec's interpretation, for the
// fields graphql-sse uses) until it ends.
func (s *SSE) read(body io.ReadCloser) {
	defer close(s.events)
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var ev SSEEvent
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Event != "" || data != nil {
				ev.Data = json.RawMessage(strings.Join(data, "\n"))
				s.events <- ev
			}
			ev, data = SSEEvent{}, nil
		case strings.HasPrefix(line, ":"):
			s.events <- SSEEvent{Comment: true}
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				ev.ID = value
			case "event":
				ev.Event = value
			case "data":
				data = append(data, value)
			}
		}
	}
}

// Next is the next event, comments skipped; the test fails if the stream ends
// first or no event comes within WSTimeout.
func (s *SSE) Next() SSEEvent {
	s.t.Helper()
	deadline := time.Now().Add(WSTimeout)
	for {
		e, ok := s.recv(deadline)
		if !ok {
			s.t.Fatal("sse: the stream ended")
		}
		if !e.Comment {
			return e
		}
	}
}

// NextComment waits for the next comment line, skipping events.
func (s *SSE) NextComment() {
	s.t.Helper()
	deadline := time.Now().Add(WSTimeout)
	for {
		e, ok := s.recv(deadline)
		if !ok {
			s.t.Fatal("sse: the stream ended")
		}
		if e.Comment {
			return
		}
	}
}

// Any is the next message, an event or a comment; false when the stream
// ended.
func (s *SSE) Any() (SSEEvent, bool) {
	s.t.Helper()
	return s.recv(time.Now().Add(WSTimeout))
}

// Rest reads the events (comments skipped) until the stream ends; the test
// fails if it has not ended within WSTimeout.
func (s *SSE) Rest() []SSEEvent {
	s.t.Helper()
	var out []SSEEvent
	deadline := time.Now().Add(WSTimeout)
	for {
		e, ok := s.recv(deadline)
		if !ok {
			return out
		}
		if !e.Comment {
			out = append(out, e)
		}
	}
}

// recv is the next message; the test fails if none came by deadline (a
// stream of keepalives alone does not go on forever).
func (s *SSE) recv(deadline time.Time) (SSEEvent, bool) {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		return e, ok
	case <-time.After(time.Until(deadline)):
		s.t.Fatal("sse: not within the timeout")
		return SSEEvent{}, false
	}
}

// Close ends the stream from the client's side, as closing an EventSource
// does.
func (s *SSE) Close() { s.cancel() }
