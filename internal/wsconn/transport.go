package wsconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/internal/ondemand"
)

// Transport is gqlgen's websocket transport with graphql-transport-ws served
// by this package: one goroutine per connection, reading; a message is
// written by the goroutine that has it to write, and a subscription whose
// resolver claims its stream (internal/ondemand) costs no goroutine while it
// waits for events. gqlgen's own transport keeps three goroutines per
// connection and one more per subscription (bench/fanout).
//
// A client that offers only the legacy graphql-ws subprotocol, or none, is
// served by the embedded transport.Websocket, as before. Its Implementation
// must be the one [New] returns; InitFunc, InitTimeout, CloseFunc and
// ErrorFunc apply to both subprotocols, and on graphql-transport-ws the ping
// interval is Options.PingInterval (else PingPongInterval). An InitFunc
// refuses a connection by returning an error, with a close code and reason
// set by [Refuse] (default 4403 Forbidden). transport.GetInitPayload is empty
// on graphql-transport-ws, and so is graphql.OperationContext.Headers: the
// upgrade request is not kept for the connection's life (an idle connection
// would hold its headers, a kilobyte); keep what operations need in the
// InitFunc's context.
type Transport struct {
	transport.Websocket
}

var _ graphql.Transport = Transport{}

// Do serves one upgrade request.
func (t Transport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	im, _ := t.Implementation.(*Implementation)
	if im == nil || !slices.Contains(websocket.Subprotocols(r), subprotocolTransportWS) {
		t.Websocket.Do(w, r, exec)
		return
	}
	c, err := im.accept(w, r, []string{subprotocolTransportWS}, nil, true)
	if err != nil {
		return // gorilla has answered
	}
	if c.pingEvery <= 0 {
		c.pingEvery = t.PingPongInterval
	}
	s := &session{t: t, c: c, exec: exec, ctx: r.Context(), max: im.opts.MaxSubscriptions, shared: &im.responses,
		ops: map[string]*operation{}, closeCode: websocket.CloseNormalClosure}
	cancel := detach(r.Context())
	if cancel == nil {
		s.run() // without Middleware
		return
	}
	// The session reads on a goroutine of its own, so that this one, with
	// every handler's frame on its stack, returns: an idle connection's one
	// goroutine has a shallow stack (bench/fanout).
	remote := r.RemoteAddr // not r: the request is not kept
	go func() {
		defer cancel()
		defer func() {
			if v := recover(); v != nil {
				stack := debug.Stack()
				if p, ok := v.(*asidePanic); ok {
					v, stack = p.v, p.stack
				}
				log.Printf("wsconn: panic serving %s: %v\n%s", remote, v, stack)
				c.closeWith(websocket.CloseInternalServerErr, "internal server error")
				_ = c.Close()
			}
		}()
		s.run()
	}()
}

// aside runs f on a goroutine of its own and waits for it. Handling a
// message (the InitFunc, an operation's parsing, validation and resolver)
// grows a stack; the reading goroutine, parked in a read for most of its
// life, would keep that size (the runtime shrinks a stack only while less
// than a quarter of it is in use), so it keeps to the read.
// A panic in f is raised again on the caller's goroutine, carrying the
// stack where it happened.
func aside(f func()) {
	done := make(chan struct{})
	var panicked *asidePanic
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				panicked = &asidePanic{v, debug.Stack()}
			}
		}()
		f()
	}()
	<-done
	if panicked != nil {
		panic(panicked)
	}
}

// asidePanic is a panic raised in aside, with its stack.
type asidePanic struct {
	v     any
	stack []byte
}

func (p *asidePanic) String() string { return fmt.Sprintf("%v\n%s", p.v, p.stack) }

type refusalKey struct{}

type refusal struct {
	code   int
	reason string
}

// Refuse returns the context an InitFunc returns with its error to close the
// connection with code and reason instead of 4403 "Forbidden" (a reason ""
// is the code's name: "Forbidden", "Unauthorized"). The legacy subprotocol,
// served by gqlgen, gets them too.
func Refuse(ctx context.Context, code int, reason string) context.Context {
	ctx = transport.WithWebsocketCloseCode(ctx, code)
	if reason != "" {
		ctx = transport.AppendCloseReason(ctx, reason)
	}
	return context.WithValue(ctx, refusalKey{}, refusal{code, reason})
}

func refusalFrom(ctx context.Context) (int, string) {
	var f refusal
	if ctx != nil { // an InitFunc that returned its error with no context
		f, _ = ctx.Value(refusalKey{}).(refusal)
	}
	if f.code == 0 {
		f.code = CloseForbidden
	}
	if f.reason == "" {
		switch f.code {
		case CloseForbidden:
			f.reason = "Forbidden"
		case CloseUnauthorized:
			f.reason = "Unauthorized"
		}
	}
	return f.code, f.reason
}

// session is one graphql-transport-ws connection. Its goroutine reads and
// starts operations; messages are written by whoever has one: the reader
// (pong, errors), an operation's goroutine (queries, mutations, and
// subscriptions that wait on their channel), or the session's writer, which
// runs only while claimed subscriptions have events ready.
type session struct {
	t      Transport
	c      *conn
	exec   graphql.GraphExecutor
	ctx    context.Context // the connection's; the InitFunc's once it accepted
	max    int             // Options.MaxSubscriptions
	shared *responses

	closeCode int // for CloseFunc: the code this side closed with

	mu      sync.Mutex
	ops     map[string]*operation // active operations by the client's id; nil once the session ended
	queue   []*operation          // claimed operations with something to deliver
	writing bool                  // a writer goroutine is draining queue
}

// operation is one subscribe. Once the client completes it, or it completes or
// fails, it leaves the session's map and nothing more is sent for it.
type operation struct {
	s      *session
	id     string // the client's
	ctx    context.Context
	cancel context.CancelFunc

	// Guarded by s.mu. handler is set once the resolver ran; a claimed
	// operation (src set) is scheduled only from then on.
	handler graphql.ResponseHandler
	src     ondemand.Source
	shared  ondemand.Shared // src, when its values may share responses
	key     string          // operationKey, with shared
	ended   bool            // End was called
	queued  bool            // in s.queue
}

// Ready implements ondemand.Stream.
func (op *operation) Ready() {
	op.s.mu.Lock()
	op.s.schedule(op)
	op.s.mu.Unlock()
}

// End implements ondemand.Stream.
func (op *operation) End() {
	op.s.mu.Lock()
	op.ended = true
	op.s.schedule(op)
	op.s.mu.Unlock()
}

// schedule queues op for the writer, starting one if none runs (s.mu held).
func (s *session) schedule(op *operation) {
	if op.queued || op.src == nil || s.ops[op.id] != op {
		return
	}
	op.queued = true
	s.queue = append(s.queue, op)
	if !s.writing {
		s.writing = true
		go s.write()
	}
}

// write delivers what claimed operations have ready, then exits.
func (s *session) write() {
	// Everything delivered in this run goes out together (cork.go).
	s.c.cork.hold()
	defer func() {
		if err := s.c.cork.release(); err != nil {
			s.writeFailed(err)
		}
	}()
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.writing = false
			s.queue = nil // an idle session holds no queue
			s.mu.Unlock()
			return
		}
		op := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		op.queued = false
		ended := op.ended
		live := s.ops[op.id] == op
		s.mu.Unlock()
		if live {
			s.deliver(op, ended)
		}
	}
}

// deliver sends what a claimed operation's source has queued, one value at a
// time (the handler takes each at once), then completes the operation if its
// stream had ended. A Ready that comes meanwhile has queued op again.
func (s *session) deliver(op *operation, ended bool) {
	defer s.recover(op)
	for {
		var rk responseKey
		if op.shared != nil {
			v, ok := op.shared.Peek()
			if !ok {
				break
			}
			rk = responseKey{op.key, v}
			if b := s.shared.get(rk); b != nil {
				op.shared.Skip()
				s.nextPayload(op, b)
				continue
			}
		}
		if !op.src.Next() {
			break
		}
		resp := op.handler(op.ctx)
		if resp == nil {
			ended = true
			break
		}
		b := encodeResponse(resp)
		if op.shared != nil && shareable(resp) {
			s.shared.put(rk, b)
		}
		s.nextPayload(op, b)
	}
	if ended {
		s.finish(op)
	}
}

// loop runs an operation that waits on its own results: a query, a mutation,
// or a subscription whose resolver did not claim its stream.
func (s *session) loop(op *operation) {
	defer s.recover(op)
	for {
		resp := op.handler(op.ctx)
		if resp == nil {
			break
		}
		s.next(op, resp)
	}
	s.finish(op)
}

// recover turns a panic in an operation into its error message, as gqlgen's
// transport does.
func (s *session) recover(op *operation) {
	r := recover()
	if r == nil {
		return
	}
	var gqlerr *gqlerror.Error
	err := graphql.GetOperationContext(op.ctx).Recover(op.ctx, r)
	if !errors.As(err, &gqlerr) {
		gqlerr = &gqlerror.Error{}
		if err != nil {
			gqlerr.Message = err.Error()
		}
	}
	s.fail(op, gqlerror.List{gqlerr})
}

// run reads until the connection ends. Each message is handled aside (see
// aside): the reading goroutine keeps nothing but the read on its stack.
func (s *session) run() {
	defer s.end()
	if s.t.InitTimeout > 0 {
		_ = s.c.SetReadDeadline(time.Now().Add(s.t.InitTimeout))
	}
	acked := false
	for {
		data, err := s.c.read()
		if err != nil {
			var ne net.Error
			if !acked && errors.As(err, &ne) && ne.Timeout() {
				s.close(CloseConnectionInitialisationTimeout, "Connection initialisation timeout")
				return
			}
			s.readFailed(err)
			return
		}
		start := graphql.Now()
		more := true
		aside(func() {
			if acked {
				s.handle(data, start)
			} else {
				acked, more = s.init(data)
			}
		})
		if !more {
			return
		}
	}
}

// handle handles a message after connection_ack.
func (s *session) handle(data []byte, start time.Time) {
	m, reason := parseClientMessage(data)
	if reason != "" {
		s.close(CloseBadRequest, reason) // the next read ends the session
		return
	}
	switch m.Type {
	case msgConnectionInit:
		s.close(CloseTooManyInitialisationRequests, "Too many initialisation requests")
	case msgPing:
		s.send(message{Type: msgPong, Payload: m.Payload})
	case msgPong:
		s.c.pong()
	case msgSubscribe:
		s.subscribe(m, start)
	case msgComplete:
		s.complete(m.ID)
	}
}

// init handles a message before connection_ack: ping is answered, pong
// ignored, a subscribe closes the connection (the client is not yet
// authorised), and connection_init is acknowledged if the InitFunc accepts.
// It reports whether the session is acknowledged, and whether it goes on.
func (s *session) init(data []byte) (acked, more bool) {
	m, reason := parseClientMessage(data)
	switch {
	case reason != "":
		s.close(CloseBadRequest, reason)
		return false, false
	case m.Type == msgPing:
		s.send(message{Type: msgPong, Payload: m.Payload})
	case m.Type == msgSubscribe:
		s.close(CloseUnauthorized, "Unauthorized")
		return false, false
	case m.Type == msgConnectionInit:
		ok := s.accept(m.Payload)
		return ok, ok
	}
	return false, true
}

// accept runs the InitFunc on connection_init's payload and acknowledges.
func (s *session) accept(payload json.RawMessage) bool {
	var p transport.InitPayload
	if len(payload) > 0 {
		_ = json.Unmarshal(payload, &p) // an object: parseClientMessage checked
	}
	var ack *transport.InitPayload
	if s.t.InitFunc != nil {
		ctx, a, err := s.t.InitFunc(s.ctx, p)
		if err != nil {
			s.close(refusalFrom(ctx))
			return false
		}
		s.ctx, ack = ctx, a
	}
	m := message{Type: msgConnectionAck}
	if ack != nil {
		b, err := json.Marshal(*ack)
		if err != nil {
			s.close(websocket.CloseInternalServerErr, "connection_ack payload: "+err.Error())
			return false
		}
		m.Payload = b
	}
	_ = s.c.SetReadDeadline(time.Time{})
	s.send(m)
	s.c.startPings()
	return true
}

// subscribe starts an operation, unless its id is taken or the cap reached.
func (s *session) subscribe(m message, start time.Time) {
	s.mu.Lock()
	switch {
	case s.ops[m.ID] != nil:
		s.mu.Unlock()
		s.close(CloseSubscriberAlreadyExists, subscriberExists(m.ID))
		return
	case s.max > 0 && len(s.ops) >= s.max:
		s.mu.Unlock()
		s.send(message{Type: msgError, ID: m.ID, Payload: s.c.tooMany()})
		return
	}
	op := &operation{s: s, id: m.ID}
	s.ops[m.ID] = op
	s.mu.Unlock()

	ctx := graphql.StartOperationTrace(s.ctx)
	op.ctx = ctx
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(m.Payload))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		s.fail(op, gqlerror.List{{Message: "invalid json"}})
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	rc, errs := s.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := s.exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			s.fail(op, resp.Errors)
			return
		}
		s.next(op, &graphql.Response{Errors: errs})
		s.finish(op)
		return
	}
	ctx, op.cancel = context.WithCancel(graphql.WithOperationContext(ctx, rc))
	op.ctx = ctx
	s.dispatch(op, rc)
}

// dispatch runs the operation's resolver (a subscription's runs here, aside
// from the reading goroutine, before the next message is read) and then delivers: on demand if it claimed its stream,
// else from a goroutine of its own.
func (s *session) dispatch(op *operation, rc *graphql.OperationContext) {
	defer s.recover(op)
	handler, ctx := s.exec.DispatchOperation(ondemand.Offer(op.ctx, op), rc)
	src := ondemand.Claimed(ctx)
	s.mu.Lock()
	op.ctx = ctx
	op.handler = handler
	op.src = src
	if sh, ok := src.(ondemand.Shared); ok {
		if op.key = operationKey(rc); op.key != "" {
			op.shared = sh
		}
	}
	if src != nil {
		s.schedule(op) // for what arrived while the resolver ran, if anything
	}
	s.mu.Unlock()
	if src == nil {
		go s.loop(op)
	}
}

// complete is the client's complete: the operation ends and nothing more is
// sent for it; its id is free at once.
func (s *session) complete(id string) {
	s.mu.Lock()
	op := s.ops[id]
	delete(s.ops, id)
	s.mu.Unlock()
	if op != nil && op.cancel != nil {
		op.cancel()
	}
}

// live reports whether op is still the session's operation for its id.
func (s *session) live(op *operation) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ops[op.id] == op
}

// leave removes op from the session; false if it had left already.
func (s *session) leave(op *operation) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ops[op.id] != op {
		return false
	}
	delete(s.ops, op.id)
	return true
}

func (s *session) next(op *operation, resp *graphql.Response) {
	s.nextPayload(op, encodeResponse(resp))
}

// nextPayload sends a next message with an encoded response.
func (s *session) nextPayload(op *operation, b []byte) {
	if s.live(op) {
		s.send(message{Type: msgNext, ID: op.id, Payload: b})
	}
}

func encodeResponse(resp *graphql.Response) []byte {
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(graphql.Response{Errors: gqlerror.List{{Message: "encoding the response: " + err.Error()}}})
	}
	return b
}

// finish completes op, unless it has left already.
func (s *session) finish(op *operation) {
	if s.leave(op) {
		s.send(message{Type: msgComplete, ID: op.id})
	}
	if op.cancel != nil {
		op.cancel()
	}
}

// fail ends op with an error message (no complete follows one).
func (s *session) fail(op *operation, errs gqlerror.List) {
	if s.leave(op) {
		b, err := json.Marshal(errs)
		if err != nil {
			b = []byte(`[{"message":"internal error"}]`)
		}
		s.send(message{Type: msgError, ID: op.id, Payload: b})
	}
	if op.cancel != nil {
		op.cancel()
	}
}

// send writes one message. A write that fails (Options.WriteTimeout, a
// broken connection) ends the connection: the reader sees it closed.
func (s *session) send(m message) {
	if err := s.c.writeData(m.appendJSON(make([]byte, 0, 64+len(m.Payload)))); err != nil {
		s.writeFailed(err)
	}
}

// writeFailed ends a connection that could not be written to: the next read
// fails and ends the session.
func (s *session) writeFailed(err error) {
	if s.t.ErrorFunc != nil {
		s.t.ErrorFunc(s.ctx, transport.WebsocketError{Err: err})
	}
	_ = s.c.ws.NetConn().Close()
}

// close sends a close frame; the next read ends the session.
func (s *session) close(code int, reason string) {
	if s.c.closeWith(code, reason) {
		s.mu.Lock()
		s.closeCode = code
		s.mu.Unlock()
	}
}

// readFailed handles the end of reading: the client closed, this side did,
// a pong went missing (the read deadline of Options.PingInterval), or the
// connection broke.
func (s *session) readFailed(err error) {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, transport.ErrWebsocketClosed) {
		return
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		s.close(websocket.CloseNormalClosure, "no pong within two ping intervals")
		return
	}
	if s.t.ErrorFunc != nil {
		s.t.ErrorFunc(s.ctx, transport.WebsocketError{Err: err, IsReadError: true})
	}
}

// end ends every operation and the connection.
func (s *session) end() {
	s.mu.Lock()
	ops := s.ops
	s.ops = nil
	code := s.closeCode
	s.mu.Unlock()
	for _, op := range ops {
		if op.cancel != nil {
			op.cancel()
		}
	}
	_ = s.c.Close()
	if s.t.CloseFunc != nil {
		s.t.CloseFunc(s.ctx, code)
	}
}
