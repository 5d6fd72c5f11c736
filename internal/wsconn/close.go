package wsconn

import (
	"context"
	"time"
	"unicode/utf8"
)

// Close codes of the graphql-transport-ws protocol.
const (
	CloseBadRequest                      = 4400 // invalid message
	CloseUnauthorized                    = 4401 // subscribe before connection_ack; expired token
	CloseForbidden                       = 4403 // connection_init refused
	CloseConnectionInitialisationTimeout = 4408 // no connection_init in time
	CloseSubscriberAlreadyExists         = 4409 // subscribe with an active id
	CloseTooManyInitialisationRequests   = 4429 // second connection_init
)

// maxCloseReason is the longest close reason a close frame can carry: a
// control frame payload is at most 125 bytes, two of which hold the code.
const maxCloseReason = 123

// CloseConn closes the websocket connection that ctx belongs to, sending a
// close frame with code and reason (cut to 123 bytes). ctx is a context gqlgen
// derived from the upgrade request: the one given to the InitFunc or to a
// resolver, which requires the handler to be wrapped in [Middleware]. gqlgen
// then ends the connection's operations. code must be one a server may send:
// 1000-1003, 1007-1014 or 3000-4999.
//
// CloseConn reports whether it closed the connection; it returns false when
// ctx has no connection, when the connection is already closing and when code
// is not valid.
func CloseConn(ctx context.Context, code int, reason string) bool {
	if !validCloseCode(code) {
		return false
	}
	c := connFrom(ctx)
	if c == nil {
		return false
	}
	return c.closeWith(code, reason)
}

// CloseAt arranges for the connection ctx belongs to (see [CloseConn]) to be
// closed with 4401 "Token expired" at t. The InitFunc calls it with the
// expiry of the token that authenticated the connection. A later call
// replaces the earlier one; a zero t cancels it. CloseAt reports whether ctx
// has an open connection.
func CloseAt(ctx context.Context, t time.Time) bool {
	c := connFrom(ctx)
	if c == nil {
		return false
	}
	return c.closeAt(t)
}

// validCloseCode reports whether a server may put code in a close frame
// (RFC 6455 section 7.4).
func validCloseCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// clampReason cuts reason to maxCloseReason bytes on a rune boundary.
func clampReason(reason string) string {
	return clampTo(reason, maxCloseReason)
}

// subscriberExists is the 4409 reason for id, with id shortened if needed so
// that the reason fits in a close frame.
func subscriberExists(id string) string {
	const prefix, suffix, ellipsis = "Subscriber for ", " already exists", "…"
	if room := maxCloseReason - len(prefix) - len(suffix); len(id) > room {
		id = clampTo(id, room-len(ellipsis)) + ellipsis
	}
	return prefix + id + suffix
}

// clampTo cuts s to at most n bytes on a rune boundary.
func clampTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
