package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/wsconn"
)

// Websocket defaults.
const (
	DefaultMaxSubscriptions = 100
	wsInitTimeout           = 10 * time.Second
	wsKeepAlive             = 15 * time.Second // legacy graphql-ws "ka" messages
	wsPingPong              = 25 * time.Second // graphql-transport-ws ping; no pong in 2x this ends the socket
	wsWriteTimeout          = 10 * time.Second
)

// websocket is the graphql-transport-ws (and legacy graphql-ws) transport on
// gorilla/websocket. A connection authenticates once, in connection_init:
// {"Authorization": "Bearer <jwt>"} (or {"token": "<jwt>"}); without one it
// uses what the upgrade request carried (an Authorization header, or the
// scidex_jwt cookie from this server's own pages). A connection without a
// token is refused with 4403 unless anonymous reads are on; a connection
// closes with 4401 when its token expires.
func (s *Server) websocket() wsconn.Transport {
	s.ws = wsconn.New(wsconn.Options{
		AllowedOrigins:   s.opts.AllowedOrigins,
		MaxSubscriptions: s.opts.MaxSubscriptions,
		TooManyFunc:      tooManySubscriptions,
		ReadLimit:        s.opts.MaxBodyBytes,
		WriteTimeout:     wsWriteTimeout,
		// graphql-transport-ws pings from a timer, not gqlgen's
		// PingPongInterval goroutine per connection (bench/fanout).
		PingInterval: wsPingPong,
	})
	// graphql-transport-ws is served by wsconn (one goroutine per
	// connection, writes on demand); the legacy graphql-ws by gqlgen.
	return wsconn.Transport{Websocket: transport.Websocket{
		Implementation:        s.ws,
		InitFunc:              s.wsInit,
		InitTimeout:           wsInitTimeout,
		KeepAlivePingInterval: wsKeepAlive,
	}}
}

// CloseWebsockets closes every open websocket with 1001 ("going away": the
// client reconnects and resumes from its cursor) and waits until they are
// closed or ctx ends. http.Server.Shutdown does neither for hijacked
// connections; run this from its RegisterOnShutdown, once the listener is
// closed and no new socket can open.
func (s *Server) CloseWebsockets(ctx context.Context) (int, error) {
	return s.ws.Shutdown(ctx, "the server is shutting down; reconnect and resume from your cursor")
}

// tooManySubscriptions is the error of a subscribe beyond the cap, with the
// code and the request id of the connection (its upgrade request's) that every
// error outside a union carries.
func tooManySubscriptions(ctx context.Context, max int) *gqlerror.Error {
	return &gqlerror.Error{
		Message:    fmt.Sprintf("too many subscriptions on this connection (max %d, --max-subscriptions): complete one first, or open another connection", max),
		Extensions: map[string]any{"code": string(problem.ValidationFailed), "reason": "TOO_MANY_SUBSCRIPTIONS", "requestId": request.IDFrom(ctx)},
	}
}

type wsKey struct{}

func (s *Server) wsInit(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	refuse := func(msg string) (context.Context, *transport.InitPayload, error) {
		return wsconn.Refuse(ctx, wsconn.CloseForbidden, "Forbidden: "+msg), nil, errors.New(msg)
	}
	rc := request.From(ctx)
	if rc == nil {
		return refuse("no request context")
	}
	if token := auth.TokenFromInitPayload(payload); token != "" {
		now := s.opts.Now()
		p, err := s.tokens.verify(ctx, s.opts.Verifier, token, now)
		if err != nil {
			s.log.Info("websocket token refused", "request_id", rc.RequestID, "reason", auth.Reason(err), "cause", causeOf(err))
			return refuse("unauthenticated: " + auth.Reason(err))
		}
		rc = request.FromPrincipal(p, rc.RequestID, now)
	}
	if rc.Anonymous && !s.opts.AnonymousRead {
		return refuse(`unauthenticated: send {"Authorization": "Bearer <jwt>"} in connection_init`)
	}
	ctx = context.WithValue(request.With(ctx, rc), wsKey{}, true)
	if !rc.ExpiresAt.IsZero() {
		wsconn.CloseAt(ctx, rc.ExpiresAt)
	}
	return ctx, nil, nil
}

// perOperation gives each operation on a websocket its own request id and
// clock: the connection's identity stays, but writes made over one socket are
// separate requests.
func (s *Server) perOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if on, _ := ctx.Value(wsKey{}).(bool); !on {
		return next(ctx)
	}
	rc := request.From(ctx)
	if rc == nil {
		return next(ctx)
	}
	op := *rc
	op.RequestID = request.NewID()
	op.Now = request.Clock(s.opts.Now())
	return next(request.With(ctx, &op))
}
