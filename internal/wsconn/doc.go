// Package wsconn serves GraphQL over websockets on gorilla/websocket, with
// the graphql-transport-ws subprotocol behaving exactly as its specification
// says.
//
// [Transport] is the transport to use: it serves graphql-transport-ws itself
// (transport.go: one goroutine per connection, reading; writes on demand; a
// subscription whose resolver claims its stream, internal/ondemand, costs no
// goroutine while idle, and subscribers of one operation who are the same
// reader share each event's encoded response) and hands the legacy
// graphql-ws to gqlgen's transport.Websocket on the [Implementation] below.
// The rest of this comment describes that Implementation, which also guards
// graphql-transport-ws when gqlgen's transport serves it directly (no longer
// done by the server).
//
// # Why this package exists
//
// gqlgen's transport.Websocket speaks both GraphQL websocket subprotocols:
// graphql-transport-ws (https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md)
// and the legacy graphql-ws of subscriptions-transport-ws. It talks to the
// network through a [transport.WebsocketImplementation]; its default is
// coder/websocket, and [New] returns one built on gorilla/websocket instead.
//
// For graphql-transport-ws gqlgen closes the socket with 1002 (or 1000) where
// the protocol asks for specific close codes, answers a ping sent before
// connection_init with a close, and echoes a complete after the client's own
// complete. The connection returned by [New] watches every message that passes
// between gqlgen and the socket and enforces the protocol:
//
//   - 4400: a message that is not JSON, is not an object, lacks "type", has an
//     unknown type or one only the server may send, or lacks a field its type
//     requires (a subscribe without "id" or "payload.query", for example). The
//     reason says what was wrong.
//   - 4401 "Unauthorized": a subscribe before the server's connection_ack.
//     gqlgen reads the next message only after it has answered
//     connection_init, so a subscribe sent right behind connection_init is
//     judged after the ack and accepted.
//   - 4403 "Forbidden": the InitFunc refused connection_init. When the InitFunc
//     chose a close code with transport.WithWebsocketCloseCode that code is
//     kept, and a reason set with transport.AppendCloseReason is kept too.
//   - 4408 "Connection initialisation timeout": no connection_init within
//     transport.Websocket.InitTimeout.
//   - 4409 "Subscriber for <id> already exists": a subscribe whose id is still
//     active, that is, from its subscribe until the server sends complete or
//     error for it or the client sends complete for it.
//   - 4429 "Too many initialisation requests": a second connection_init.
//
// Ping is answered with pong at any time, before connection_init as well;
// unsolicited pongs are ignored. Once the client has sent complete for an
// operation, nothing more about it is sent, and after an error message no
// complete follows, as the protocol asks. gqlgen keys its operations by the
// client's id and an id reused right after complete could collide with the
// ending operation; this package hands gqlgen its own unique ids and maps them
// back, so reusing an id is always safe.
//
// The legacy graphql-ws subprotocol (also used when the client asks for no
// subprotocol) is left as gqlgen implements it, with one addition: the same
// cap on operations at once (a start beyond it gets an error and a complete
// for its id).
//
// # Wiring
//
// Give the implementation to gqlgen's websocket transport and wrap the gqlgen
// handler in [Middleware], which lets [CloseConn] and [CloseAt] find the
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
// # What stays gqlgen's
//
// gqlgen's CloseFunc and ErrorFunc see gqlgen's own view: CloseFunc receives
// the code gqlgen meant to send (often 1000), not the one this package put on
// the wire, and protocol violations are not reported to ErrorFunc. A missing
// pong (Options.PingInterval, or gqlgen's PingPongInterval) ends the
// connection with 1000, as the protocol defines no code for it.
package wsconn
