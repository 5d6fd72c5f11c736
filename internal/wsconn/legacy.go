package wsconn

import (
	"encoding/json"
	"sync"
)

// Legacy graphql-ws (subscriptions-transport-ws) message types this package
// looks at; gqlgen speaks the rest of that protocol itself.
const (
	legacyStart    = "start"
	legacyError    = "error"
	legacyComplete = "complete"
)

// legacyCap caps the operations one legacy graphql-ws connection runs at once
// (Options.MaxSubscriptions), as the session does on graphql-transport-ws.
// An operation counts from its start until gqlgen writes its complete or its
// error: gqlgen ends an operation that fails while running with an error and
// no complete.
type legacyCap struct {
	c   *conn
	max int

	mu     sync.Mutex
	active map[string]bool // ids started and not yet ended
}

func newLegacyCap(c *conn, maxSubs int) *legacyCap {
	return &legacyCap{c: c, max: maxSubs, active: map[string]bool{}}
}

// inbound reports whether gqlgen should read data. A start over the cap is
// answered with an error and a complete for its id, and goes no further.
func (l *legacyCap) inbound(data []byte) bool {
	var m struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if json.Unmarshal(data, &m) != nil || m.Type != legacyStart {
		return true // gqlgen answers malformed messages itself
	}
	l.mu.Lock()
	full := !l.active[m.ID] && len(l.active) >= l.max
	if !full {
		l.active[m.ID] = true
	}
	l.mu.Unlock()
	if !full {
		return true
	}
	_ = l.c.writeData(message{Type: legacyError, ID: m.ID, Payload: l.c.tooMany()}.encode())
	_ = l.c.writeData(message{Type: legacyComplete, ID: m.ID}.encode())
	return false
}

// outbound notes the end of an operation in a message gqlgen writes.
func (l *legacyCap) outbound(typ, id string) {
	if typ != legacyComplete && typ != legacyError {
		return
	}
	l.mu.Lock()
	delete(l.active, id)
	l.mu.Unlock()
}
