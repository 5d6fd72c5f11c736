package mcp

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/scidex/substrate/internal/problem"
)

// DefaultMaxResponseBytes is what one /mcp request may answer when
// Options.MaxResponseBytes is 0: the GraphQL server's own default.
const DefaultMaxResponseBytes = 8 << 20

// answerBudget is what one /mcp request may still answer. Every GraphQL
// answer a tool or resource read of the request gets is charged to it, so a
// JSON-RPC batch (2025-03-26: many calls in one request) is held to the one
// response cap as a single call is, and its memory with it: once the budget
// is spent, the rest of the batch's calls are refused without running.
type answerBudget struct {
	mu    sync.Mutex
	limit int64
	left  int64
}

type answerBudgetKey struct{}

func withAnswerBudget(ctx context.Context, limit int64) context.Context {
	return context.WithValue(ctx, answerBudgetKey{}, &answerBudget{limit: limit, left: limit})
}

// answerBudgetFrom is ctx's budget; nil (no bound: stdio, where each
// message is answered on its own) when there is none.
func answerBudgetFrom(ctx context.Context) *answerBudget {
	b, _ := ctx.Value(answerBudgetKey{}).(*answerBudget)
	return b
}

// charge takes n bytes; false when they do not fit (the budget is then
// spent: nothing later fits either), and the refusal says so.
func (b *answerBudget) charge(n int64) (ok bool, refusal *response) {
	if b == nil {
		return true, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if n <= b.left {
		b.left -= n
		return true, nil
	}
	alone := b.left == b.limit
	b.left = 0
	if alone {
		return false, budgetError("this answer is " + strconv.FormatInt(n, 10) + " bytes (its data twice: the text copy and the structured content), over the " +
			strconv.FormatInt(b.limit, 10) + "-byte response cap of an /mcp request: select less, or page with first/after")
	}
	return false, b.refusal()
}

func (b *answerBudget) spent() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left == 0
}

// refusal is the answer of a call past the budget: a GraphQL-shaped error
// the result mapping turns into an isError result.
func (b *answerBudget) refusal() *response {
	return budgetError("this answer does not fit the " + strconv.FormatInt(b.limit, 10) +
		"-byte response cap of one /mcp request, which the request's earlier answers used (a JSON-RPC batch shares one cap): send the call on its own, or select less")
}

func budgetError(msg string) *response {
	return &response{status: http.StatusOK, Errors: []gqlError{{Message: msg, Extensions: map[string]any{"code": string(problem.ValidationFailed)}}}}
}
