package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
)

// DefaultMaxResponseBytes caps the data of one response: eight times the
// largest content (store.MaxContentBytes), so a page of large artifacts still
// fits while no request makes the server hold hundreds of megabytes.
const DefaultMaxResponseBytes = 8 << 20

// The response cap. The cost model (resolvers/complexity.go) bounds how many
// values a query asks for, but not how large each is: ten aliases of the
// content of a 1 MiB artifact cost 110 and answer 10 MB. gqlgen resolves the
// whole tree of values first (sharing the artifacts' bytes, not copying them)
// and then writes it into one buffer; that buffer and its copies are what grew
// the server by hundreds of megabytes per request. So every root field's value
// is written through a counting writer that stops copying once the response's
// budget is spent, and the response is then replaced by one error: the buffer
// never grows past the limit.

type responseBudgetKey struct{}

// responseBudget is the bytes one response may write. gqlgen writes a
// response's values one after another on the goroutine that asked for the
// response, so the budget needs no lock.
type responseBudget struct {
	limit int64
	used  int64
	over  bool
}

// charge counts n bytes and reports whether they fit.
func (b *responseBudget) charge(n int) bool {
	if b.over {
		return false
	}
	b.used += int64(n)
	if b.used > b.limit {
		b.over = true
		return false
	}
	return true
}

// capResponses gives every response (a query's, a mutation's, each event of a
// subscription) its budget and, when the budget ran out, answers with one error
// instead of the partial data.
func (s *Server) capResponses(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	b := &responseBudget{limit: s.opts.MaxResponseBytes}
	resp := next(context.WithValue(ctx, responseBudgetKey{}, b))
	if resp == nil {
		return resp
	}
	var oc *graphql.OperationContext
	if graphql.HasOperationContext(ctx) { // DispatchError's responses have none
		oc = graphql.GetOperationContext(ctx)
	}
	if !b.over && oc != nil && oc.Operation != nil && (oc.Operation.Operation == ast.Subscription || resp.Path != nil) && int64(len(resp.Data)) > b.limit {
		// gqlgen runs no root field middleware for a subscription's field, nor
		// for a deferred group's (a payload with a path), so capRootField
		// never sees them: their data is measured once written.
		b.over = true
	}
	if !b.over {
		return resp
	}
	msg := fmt.Sprintf("the response is larger than the limit of %d bytes (--max-response-bytes): "+
		"ask for fewer fields (content and document are whole JSON documents), fewer aliases or smaller pages (first, limit)", b.limit)
	if oc != nil && oc.Operation != nil && oc.Operation.Operation == ast.Mutation {
		msg += "; the mutation ran, only its response was dropped"
	}
	s.log.InfoContext(ctx, "response over the limit", "request_id", request.IDFrom(ctx), "limit", b.limit)
	out := tooLargeResponse(ctx, b.limit, msg)
	out.Extensions = resp.Extensions
	// A deferred group's stays in its place in the stream.
	out.Path, out.Label, out.HasNext = resp.Path, resp.Label, resp.HasNext
	return out
}

// tooLargeResponse is the response whose data went over the limit: null, and
// one RESPONSE_TOO_LARGE error saying so (msg).
func tooLargeResponse(ctx context.Context, limit int64, msg string) *graphql.Response {
	return &graphql.Response{
		Data: json.RawMessage("null"),
		Errors: gqlerror.List{{Message: msg, Extensions: map[string]any{
			"code": string(problem.ValidationFailed), "reason": "RESPONSE_TOO_LARGE", "limit": limit, "requestId": request.IDFrom(ctx),
		}}},
	}
}

// capRootField writes a root field's value through the response's budget.
func capRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	m := next(ctx)
	b, _ := ctx.Value(responseBudgetKey{}).(*responseBudget)
	if b == nil || m == graphql.Null || m == graphql.RequiredNull {
		// gqlgen tells a failed non-null field by these very values.
		return m
	}
	return cappedMarshaler{m: m, b: b}
}

type cappedMarshaler struct {
	m graphql.Marshaler
	b *responseBudget
}

// MarshalGQL writes the field's value into a buffer of its own, through the
// budget, and then into w in one piece: gqlgen writes a value in thousands of
// small pieces (the Prism page: ~3,000), each of which went through two
// writers' interfaces, and grew the response's buffer by doubling.
func (c cappedMarshaler) MarshalGQL(w io.Writer) {
	if c.b.over {
		// The response is dropped anyway: do not walk this field's values.
		_, _ = io.WriteString(w, "null")
		return
	}
	buf := cappedBuffers.Get().(*cappedBuffer)
	buf.b = c.b
	c.m.MarshalGQL(buf)
	_, _ = w.Write(buf.data)
	if cap(buf.data) <= maxPooledBuffer {
		buf.data, buf.b = buf.data[:0], nil
		cappedBuffers.Put(buf)
	}
}

// maxPooledBuffer is the largest buffer kept for the next response: pages of
// artifacts take tens of kilobytes; the rare large response's buffer goes.
const maxPooledBuffer = 256 << 10

var cappedBuffers = sync.Pool{New: func() any { return &cappedBuffer{data: make([]byte, 0, 16<<10)} }}

// cappedBuffer keeps what fits in the budget and drops the rest.
type cappedBuffer struct {
	data []byte
	b    *responseBudget
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.b.charge(len(p)) {
		c.data = append(c.data, p...)
	}
	return len(p), nil
}

// WriteString is Write for strings: gqlgen writes most of a response with
// io.WriteString, which without it would copy every string into a new slice
// (the Prism page: ~2,800 allocations, 5 % of its CPU).
func (c *cappedBuffer) WriteString(s string) (int, error) {
	if c.b.charge(len(s)) {
		c.data = append(c.data, s...)
	}
	return len(s), nil
}
