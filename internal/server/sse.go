package server

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
)

// SSE defaults.
const (
	// DefaultMaxEventStreams caps the subscriptions one actor holds open over
	// SSE at once, across all its requests.
	DefaultMaxEventStreams = 100
	// DefaultSSEKeepAlive is how often an open stream gets a comment line, so
	// that proxies do not drop an idle stream: every 12 seconds, as the
	// graphql-sse reference server pings.
	DefaultSSEKeepAlive = 12 * time.Second
	// sseWriteTimeout bounds each write to a stream; a client that has stopped
	// reading loses its stream after it.
	sseWriteTimeout = wsWriteTimeout
)

const mediaEventStream = "text/event-stream"

// sse serves GraphQL over Server-Sent Events in the graphql-sse protocol's
// distinct connections mode
// (https://github.com/enisdenjo/graphql-sse/blob/master/PROTOCOL.md): each
// operation is its own POST (or GET) request with Accept: text/event-stream,
// answered with one `event: next` per result and a final `event: complete`.
// gqlgen's transport.SSE serves POST only, keeps writing keepalives from a
// goroutine that can outlive the request, and has no way to end a stream from
// outside (shutdown, a subscriber the hub dropped); this one:
//
//   - runs behind the same request middleware as POST and GET: a bad or
//     expired token, or an oversized body, is refused before the stream opens,
//     with the same status and error body;
//   - answers a body that is not a GraphQL request with the 400 post gives it,
//     and a mutation sent with GET with get's 405; a document that fails to
//     parse or validate is, as the protocol asks, a `next` with its errors on
//     an accepted stream, then `complete`;
//   - runs queries and mutations too (one `next`, then `complete`);
//   - writes a comment line every Opts.SSEKeepAlive, bounds each write by
//     sseWriteTimeout, and caps each event's data as every response's is
//     (capResponses), never the stream's total;
//   - ends a stream with a `next` carrying one error (extensions.code and
//     extensions.reason say why) and `complete` when the hub drops its
//     subscriber, when its token expires, and when the server shuts down
//     (CloseEventStreams);
//   - caps the subscriptions one actor holds open (Opts.MaxEventStreams).
type sse struct{ s *Server }

var _ graphql.Transport = sse{}

func (sse) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" || !wantsEventStream(r.Header.Get("Accept")) {
		return false
	}
	switch r.Method {
	case http.MethodGet:
		return true
	case http.MethodPost:
		media, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		return err == nil && media == mediaJSON
	}
	return false
}

// wantsEventStream reports whether text/event-stream comes before either
// JSON media type (and before */*) in an Accept header: a client that lists
// JSON first gets JSON.
func wantsEventStream(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		media, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch media {
		case mediaEventStream:
			return true
		case "*/*", "application/*", mediaJSON, mediaGraphQLResponse:
			return false
		}
	}
	return false
}

func (t sse) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	s := t.s
	ctx := r.Context()
	start := graphql.Now()
	refuse := func(ctx context.Context, status int, err *gqlerror.Error) {
		w.Header().Set("Content-Type", mediaJSON)
		writeResponse(w, status, exec.DispatchError(ctx, gqlerror.List{err}))
	}

	var params graphql.RawParams
	if r.Method == http.MethodGet {
		p, err := queryParams(r)
		if err != nil {
			refuse(ctx, http.StatusBadRequest, err)
			return
		}
		params = p
	} else if err := decodeOne(r.Body, &params); err != nil {
		refuse(ctx, http.StatusBadRequest, gqlerror.Errorf("the request body is not a GraphQL request in JSON: %v", err))
		return
	}
	if params.Query == "" && params.Extensions["persistedQuery"] == nil {
		refuse(ctx, http.StatusBadRequest, gqlerror.Errorf("the request has no query"))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	oc, errs := exec.CreateOperationContext(ctx, &params)
	if errs == nil && r.Method == http.MethodGet && oc.Operation.Operation == ast.Mutation {
		w.Header().Set("Allow", http.MethodPost)
		refuse(graphql.WithOperationContext(ctx, oc), http.StatusMethodNotAllowed,
			gqlerror.Errorf("GET runs queries and subscriptions only, and this is a mutation: send it with POST"))
		return
	}

	rc := request.From(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A subscription takes its place in the actor's cap before the stream
	// opens: once a client sees the stream's headers, its place is counted,
	// so a later request is measured against it.
	subscription := errs == nil && oc.Operation.Operation == ast.Subscription && rc != nil && !rc.Anonymous
	tooMany := false
	if subscription { // an anonymous subscription is refused by authorizeOperation
		if tooMany = !s.streams.acquire(rc.Actor.ID, s.opts.MaxEventStreams); !tooMany {
			defer s.streams.release(rc.Actor.ID)
		}
	}
	// Each event's message carries its cursor as its id, and a reconnect
	// that sends the last one back (Last-Event-ID, as EventSource does by
	// itself) resumes right after it.
	ids := &event.StreamIDs{Resume: strings.TrimSpace(r.Header.Get("Last-Event-ID"))}
	ctx = event.WithStreamIDs(ctx, ids)
	st, err := s.streams.open(w, rc, cancel)
	if err != nil {
		refuse(ctx, http.StatusInternalServerError, gqlerror.Errorf("%v", err))
		return
	}
	defer st.finish()
	st.ids = ids
	if errs != nil {
		st.next(exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs))
		st.complete()
		return
	}
	if subscription {
		if tooMany {
			st.next(&graphql.Response{Errors: gqlerror.List{tooManyEventStreams(rc, s.opts.MaxEventStreams)}})
			st.complete()
			return
		}
		if !rc.ExpiresAt.IsZero() {
			st.endAt(rc.ExpiresAt, streamError(rc, problem.Unauthenticated, "TOKEN_EXPIRED",
				"the token expired: subscribe again with a fresh token, resuming from the cursor of the last event you received (since)"))
		}
	}

	responses, ctx := exec.DispatchOperation(withStream(ctx, st), oc)
	for {
		resp := responses(ctx)
		if resp == nil {
			break
		}
		if !st.next(resp) {
			return
		}
	}
	st.complete()
}

// tooManyEventStreams is the error of a subscription beyond the actor's cap.
func tooManyEventStreams(rc *request.Context, max int) *gqlerror.Error {
	return streamError(rc, problem.ValidationFailed, "TOO_MANY_SUBSCRIPTIONS",
		fmt.Sprintf("too many subscriptions open over SSE for this actor (max %d, --max-event-streams): close one first, or subscribe over a websocket", max))
}

// streamError is the error that ends a stream, with the code, the reason and
// the request id every error outside a union carries.
func streamError(rc *request.Context, code problem.Code, reason, msg string) *gqlerror.Error {
	rid := ""
	if rc != nil {
		rid = rc.RequestID
	}
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": string(code), "reason": reason, "requestId": rid}}
}

// writeEvent writes one SSE message: its id when it has one (an event's
// cursor), the event's name and its data on one line (JSON has no raw line
// breaks).
func writeEvent(w io.Writer, id, event string, data []byte) error {
	if id != "" {
		_, err := fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", id, event, data)
		return err
	}
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
	return err
}
