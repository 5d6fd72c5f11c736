package wsconn

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
)

// guard enforces graphql-transport-ws on one connection by watching the
// messages between the client and gqlgen.
//
// gqlgen keys operations by id and forgets one only after it has written the
// operation's last message, so an id the client reuses at once (which the
// protocol allows after complete) could collide with the ending operation.
// The guard therefore gives gqlgen its own ids, never reused, and maps them
// back on the way out; messages for an operation the client no longer knows
// are dropped.
type guard struct {
	c   *conn
	max int // Options.MaxSubscriptions

	mu       sync.Mutex
	initSeen bool              // connection_init passed to gqlgen
	acked    bool              // connection_ack sent
	lastID   uint64            // last id given to gqlgen
	byClient map[string]string // active client id -> gqlgen id
	byServer map[string]string // gqlgen id -> client id, for the same operations
}

func newGuard(c *conn, maxSubs int) *guard {
	return &guard{c: c, max: maxSubs, byClient: map[string]string{}, byServer: map[string]string{}}
}

// inbound handles a message from the client. It returns what gqlgen should
// read, or nil when the guard has answered the message, dropped it or closed
// the connection.
func (g *guard) inbound(data []byte) []byte {
	m, reason := parseClientMessage(data)
	if reason != "" {
		g.c.closeWith(CloseBadRequest, reason)
		return nil
	}
	switch m.Type {
	case msgConnectionInit:
		g.mu.Lock()
		again := g.initSeen
		g.initSeen = true
		g.mu.Unlock()
		if again {
			g.c.closeWith(CloseTooManyInitialisationRequests, "Too many initialisation requests")
			return nil
		}
		return m.encode()

	case msgPing, msgPong:
		g.mu.Lock()
		early := !g.initSeen
		g.mu.Unlock()
		if !early {
			if m.Type == msgPong {
				g.c.pong()
			}
			return m.encode() // gqlgen answers ping and tracks pong
		}
		// gqlgen's init accepts nothing but connection_init, so the guard
		// answers pings itself until then and ignores pongs.
		if m.Type == msgPing {
			_ = g.c.writeData(message{Type: msgPong, Payload: m.Payload}.encode())
		}
		return nil

	case msgSubscribe:
		return g.subscribe(m)

	case msgComplete:
		g.mu.Lock()
		sid, ok := g.byClient[m.ID]
		if ok {
			delete(g.byClient, m.ID)
			delete(g.byServer, sid)
		}
		g.mu.Unlock()
		if !ok {
			return nil // unknown or finished operation: ignore
		}
		return message{Type: msgComplete, ID: sid}.encode()
	}
	return nil // parseClientMessage admits no other type
}

// subscribe checks a subscribe against the connection's state and passes it on
// under a fresh gqlgen id.
func (g *guard) subscribe(m message) []byte {
	g.mu.Lock()
	switch {
	case !g.acked:
		g.mu.Unlock()
		g.c.closeWith(CloseUnauthorized, "Unauthorized")
		return nil
	case g.byClient[m.ID] != "":
		g.mu.Unlock()
		g.c.closeWith(CloseSubscriberAlreadyExists, subscriberExists(m.ID))
		return nil
	case g.max > 0 && len(g.byClient) >= g.max:
		g.mu.Unlock()
		_ = g.c.writeData(message{Type: msgError, ID: m.ID, Payload: g.c.tooMany()}.encode())
		return nil
	}
	g.lastID++
	sid := strconv.FormatUint(g.lastID, 10)
	g.byClient[m.ID] = sid
	g.byServer[sid] = m.ID
	g.mu.Unlock()
	m.ID = sid
	return m.encode()
}

// outbound handles a message gqlgen wrote (b, its JSON). It returns what to
// send, or nil to send nothing.
func (g *guard) outbound(b []byte) []byte {
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		return b
	}
	m, ok := g.outboundMessage(m)
	switch {
	case !ok:
		return nil
	case m.Type == msgNext || m.Type == msgError || m.Type == msgComplete:
		return m.encode()
	}
	return b
}

// outboundMessage handles a message gqlgen wrote: it notes the ack and gives
// an operation's messages the client's id back. It reports false when nothing
// should be sent.
func (g *guard) outboundMessage(m message) (message, bool) {
	switch m.Type {
	case msgConnectionAck:
		g.mu.Lock()
		g.acked = true // before the client can see it
		g.mu.Unlock()
		g.c.startPings()
	case msgNext, msgError, msgComplete:
		g.mu.Lock()
		cid, ok := g.byServer[m.ID]
		if ok && m.Type != msgNext {
			delete(g.byServer, m.ID)
			delete(g.byClient, cid)
		}
		g.mu.Unlock()
		if !ok {
			// Completed by the client, or a complete after an error: the
			// protocol sends nothing more for the operation.
			return m, false
		}
		m.ID = cid
	}
	return m, true
}

// closeCode maps the close gqlgen asks for to the code graphql-transport-ws
// prescribes for the same situation.
func (g *guard) closeCode(code int, reason string) (int, string) {
	g.mu.Lock()
	initSeen, acked := g.initSeen, g.acked
	g.mu.Unlock()
	switch {
	case code == 1002 && strings.EqualFold(reason, "connection initialisation timeout"):
		// gqlgen's InitTimeout.
		return CloseConnectionInitialisationTimeout, "Connection initialisation timeout"
	case initSeen && !acked:
		// Between connection_init and connection_ack gqlgen closes only when
		// the InitFunc returned an error, with the code and reason the
		// InitFunc put in its context or 1000 "terminated".
		if code == 1000 {
			code = CloseForbidden
		}
		if reason == "terminated" || reason == "" {
			switch code {
			case CloseForbidden:
				reason = "Forbidden"
			case CloseUnauthorized:
				reason = "Unauthorized"
			}
		}
	}
	return code, reason
}
