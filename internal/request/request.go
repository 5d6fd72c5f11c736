// Package request carries who is asking and when, built once per request by the
// server and stamped by the write path on everything a request changes.
package request

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"strings"
	"time"

	"github.com/scidex/substrate/internal/auth"
)

// Context is the identity and clock of one request. Agents never pass identity
// in arguments: it comes from the verified token only.
type Context struct {
	Actor           auth.Actor
	Anonymous       bool
	SessionID       string
	ParentSessionID string
	// TaskID is the task the session works on (the token's task_id), if any.
	TaskID string
	// DelegationChain is on whose behalf the actor acts, outermost first: each
	// step's actor, session and task, as the token carried them.
	DelegationChain auth.DelegationChain
	RequestID       string
	// Now is frozen at the start of the request so every row a request writes
	// carries the same time.
	Now time.Time
	// ExpiresAt is when the request's token expires (zero when anonymous): a
	// websocket authenticated by it closes then.
	ExpiresAt time.Time
}

type ctxKey struct{}

// With returns ctx carrying rc.
func With(ctx context.Context, rc *Context) context.Context {
	return context.WithValue(ctx, ctxKey{}, rc)
}

// From returns the request Context of ctx, or nil outside a request.
func From(ctx context.Context) *Context {
	rc, _ := ctx.Value(ctxKey{}).(*Context)
	return rc
}

// IDFrom returns the request id of ctx, or "" outside a request.
func IDFrom(ctx context.Context) string {
	if rc := From(ctx); rc != nil {
		return rc.RequestID
	}
	return ""
}

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewID returns a fresh request id: "req_" and 16 random characters.
func NewID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return "req_" + strings.ToLower(idEncoding.EncodeToString(b[:]))
}

// FromPrincipal builds the Context of a request made with a verified token.
func FromPrincipal(p *auth.Principal, requestID string, now time.Time) *Context {
	return &Context{
		Actor:           p.Actor,
		SessionID:       p.SessionID,
		ParentSessionID: p.ParentSessionID,
		TaskID:          p.TaskID,
		DelegationChain: p.DelegationChain,
		RequestID:       requestID,
		Now:             Clock(now),
		ExpiresAt:       p.ExpiresAt,
	}
}

// Clock is how a request's frozen time is taken: UTC, to the microsecond
// PostgreSQL keeps, so what a write returns is what a read returns later.
func Clock(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// System returns the Context the server uses for its own writes (seeding the
// schema registry, say). Its actor is "system" with every permission.
func System(requestID string, now time.Time) *Context {
	return &Context{
		Actor:     auth.System(),
		RequestID: requestID,
		Now:       Clock(now),
	}
}
