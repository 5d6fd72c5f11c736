// Package wsconn serves GraphQL over websockets on gorilla/websocket, with
// the graphql-transport-ws subprotocol behaving exactly as its specification
// says (https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md).
//
// # Why this package exists
//
// gqlgen's transport.Websocket speaks both GraphQL websocket subprotocols,
// but on graphql-transport-ws it closes with 1002 (or 1000) where the
// protocol asks for specific close codes, answers a ping sent before
// connection_init with a close, echoes a complete after the client's own,
// and keeps three goroutines per connection and one more per subscription.
// [Transport] serves graphql-transport-ws itself (transport.go): one
// goroutine per connection, reading; a message is written by the goroutine
// that has it, a subscription whose resolver claims its stream
// (internal/ondemand) costs no goroutine while idle, and subscribers of one
// operation who are the same reader share each event's encoded response
// (shared.go). It enforces the protocol:
//
//   - 4400: a message that is not JSON, is not an object, lacks "type", has an
//     unknown type or one only the server may send, or lacks a field its type
//     requires (a subscribe without "id" or "payload.query", for example). The
//     reason says what was wrong.
//   - 4401 "Unauthorized": a subscribe before the server's connection_ack.
//   - 4403 "Forbidden": the InitFunc refused connection_init. When the InitFunc
//     chose a close code and reason with [Refuse], they are kept.
//   - 4408 "Connection initialisation timeout": no connection_init within
//     transport.Websocket.InitTimeout.
//   - 4409 "Subscriber for <id> already exists": a subscribe whose id is still
//     active, that is, from its subscribe until the server sends complete or
//     error for it or the client sends complete for it.
//   - 4429 "Too many initialisation requests": a second connection_init.
//
// Ping is answered with pong at any time, before connection_init as well;
// unsolicited pongs are ignored. Once the client has sent complete for an
// operation, nothing more about it is sent, and its id is free at once;
// after an error message no complete follows, as the protocol asks.
//
// The legacy graphql-ws subprotocol (also used when the client asks for no
// subprotocol) is left to gqlgen's transport, on the gorilla
// [Implementation] that [New] returns, with one addition: the same cap on
// operations at once (a start beyond it gets an error and a complete for its
// id). That Implementation never negotiates graphql-transport-ws itself.
//
// # Wiring
//
// Add the Transport, with the Implementation, to gqlgen's server and wrap the
// gqlgen handler in [Middleware], which lets [CloseConn] and [CloseAt] find the
// connection from any context gqlgen derives from the upgrade request (the
// InitFunc's and every resolver's):
//
//	srv := handler.New(schema)
//	srv.AddTransport(wsconn.Transport{Websocket: transport.Websocket{
//		Implementation: wsconn.New(wsconn.Options{
//			AllowedOrigins:   []string{"https://scidex.example"},
//			MaxSubscriptions: 100,
//			ReadLimit:        1 << 20,
//			WriteTimeout:     10 * time.Second,
//			PingInterval:     25 * time.Second, // graphql-transport-ws, from a timer
//		}),
//		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
//			claims, err := verify(p.Authorization())
//			if err != nil {
//				return ctx, nil, err // the client sees 4403 Forbidden
//			}
//			wsconn.CloseAt(ctx, claims.ExpiresAt) // 4401 Token expired when it expires
//			return withClaims(ctx, claims), nil, nil
//		},
//		InitTimeout:           10 * time.Second,
//		KeepAlivePingInterval: 25 * time.Second, // legacy graphql-ws "ka"
//	}})
//	srv.AddTransport(transport.POST{})
//	mux.Handle("/graphql", wsconn.Middleware(srv))
//
// Every handler between Middleware and gqlgen must pass http.Hijacker through
// (http.TimeoutHandler, for one, does not). Middleware serves an upgrade on a
// goroutine of its own and returns once the connection is hijacked, so that
// net/http lets go of the request's state: handlers around it see the
// request end at the upgrade, not when the websocket closes.
//
// # Origins
//
// The upgrade is refused with 403 unless the request has no Origin header (a
// non-browser client), its Origin's host equals the request's Host, or the
// Origin is one of Options.AllowedOrigins.
//
// # Callbacks
//
// On graphql-transport-ws CloseFunc receives the code this side closed with
// (1000 when the client closed), and protocol violations are not reported to
// ErrorFunc. A missing pong (Options.PingInterval, else PingPongInterval)
// ends the connection with 1000, as the protocol defines no code for it.
package wsconn
