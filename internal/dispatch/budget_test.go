package dispatch_test

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/budget"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/inprocess"
)

const budgetFields = `actor limitUsd period spentUsd heldUsd remainingUsd operatorDefault updatedBy resetsAt`

type budgetOut struct {
	Actor           string
	LimitUsd        *float64
	Period          string
	SpentUsd        float64
	HeldUsd         float64
	RemainingUsd    *float64
	OperatorDefault bool
	UpdatedBy       string
	ResetsAt        *string
}

func setBudget(t *testing.T, e *apitest.Env, token string, in map[string]any) (typename, message string, b budgetOut) {
	t.Helper()
	var out struct {
		SetBudget struct {
			Typename string `json:"__typename"`
			Message  string
			budgetOut
		}
	}
	e.OK(t, token, `mutation($in: SetBudgetInput!) { setBudget(input: $in) { __typename ... on Budget { `+budgetFields+` } ... on Problem { message } } }`,
		map[string]any{"in": in}, &out)
	return out.SetBudget.Typename, out.SetBudget.Message, out.SetBudget.budgetOut
}

func readBudget(t *testing.T, e *apitest.Env, token string) budgetOut {
	t.Helper()
	var out struct{ Budget budgetOut }
	e.OK(t, token, `{ budget { `+budgetFields+` } }`, nil, &out)
	return out.Budget
}

const invokeBudgetQ = `mutation($n: String!, $a: JSON!, $async: Boolean) { invokeTool(input: {name: $n, args: $a, async: $async}) {
  __typename
  ... on ToolCall { artifactId status costUsd costEstimateUsd }
  ... on BudgetExceeded { code message retryable estimateUsd budget { spentUsd heldUsd remainingUsd limitUsd } }
  ... on Problem { code message } } }`

type budgetCall struct {
	Typename        string `json:"__typename"`
	ArtifactID      string
	Status          string
	CostUsd         *float64
	CostEstimateUsd *float64
	Code, Message   string
	Retryable       bool
	EstimateUsd     float64
	Budget          struct {
		SpentUsd, HeldUsd float64
		RemainingUsd      *float64
		LimitUsd          *float64
	}
}

func invokeBudget(t *testing.T, e *apitest.Env, token, name string, async bool) budgetCall {
	t.Helper()
	var out struct{ InvokeTool budgetCall }
	args := map[string]any{"value": 1}
	if name == "review.skeptic" {
		args = map[string]any{"query": "TREM2"}
	}
	e.OK(t, token, invokeBudgetQ, map[string]any{"n": name, "a": args, "async": async}, &out)
	return out.InvokeTool
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// A call that would spend past its caller's budget is refused before it
// runs, with BudgetExceeded saying what it costs and what is left, and
// nothing is recorded; only admins set budgets and read another's.
func TestBudgetRefusesBeforeRun(t *testing.T) {
	var runs atomic.Int64
	e := env(t, map[string]inprocess.Func{"test.counted": func(_ context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		runs.Add(1)
		return args, nil
	}})
	activate(t, e, testTool("test.paid", "test.counted", func(m map[string]any) { m["cost_model"] = map[string]any{"fixed_usd": 0.4} }))
	if tn, msg, _ := setBudget(t, e, alice(t), map[string]any{"actor": "alice", "limitUsd": 100}); tn != "PermissionDenied" {
		t.Fatalf("alice set her own budget: %s %s", tn, msg)
	}
	if tn, _, b := setBudget(t, e, admin(t), map[string]any{"actor": "alice", "limitUsd": 1}); tn != "Budget" || *b.LimitUsd != 1 || b.OperatorDefault || b.UpdatedBy != "ada" {
		t.Fatalf("setBudget: %s %+v", tn, b)
	}
	if tn, msg, _ := setBudget(t, e, admin(t), map[string]any{"actor": "alice", "limitUsd": -1}); tn != "ValidationFailed" {
		t.Fatalf("a negative budget: %s %s", tn, msg)
	}
	for i := range 2 {
		c := invokeBudget(t, e, alice(t), "test.paid", false)
		if c.Typename != "ToolCall" || c.Status != "SUCCEEDED" || !near(*c.CostUsd, 0.4) || !near(*c.CostEstimateUsd, 0.4) {
			t.Fatalf("call %d: %+v", i, c)
		}
	}
	calls := count(t, e, "type = 'tool_call'")
	c := invokeBudget(t, e, alice(t), "test.paid", false)
	if c.Typename != "BudgetExceeded" || c.Code != "BUDGET_EXCEEDED" || c.Retryable || !near(c.EstimateUsd, 0.4) ||
		!near(*c.Budget.RemainingUsd, 0.2) || !near(c.Budget.SpentUsd, 0.8) {
		t.Fatalf("the third call: %+v", c)
	}
	if n := count(t, e, "type = 'tool_call'"); n != calls || runs.Load() != 2 {
		t.Fatalf("a refused call was recorded (%d calls, was %d) or ran (%d runs)", n, calls, runs.Load())
	}
	// Asynchronous calls are held too, when they are queued.
	if c := invokeBudget(t, e, alice(t), "test.paid", true); c.Typename != "BudgetExceeded" {
		t.Fatalf("a queued call past the budget: %+v", c)
	}
	b := readBudget(t, e, alice(t))
	if !near(b.SpentUsd, 0.8) || b.HeldUsd != 0 || !near(*b.RemainingUsd, 0.2) || b.Period != "NONE" || b.ResetsAt != nil {
		t.Fatalf("alice's budget: %+v", b)
	}
	// Another actor has no budget (the operator set no default): no limit,
	// spending counted once a budget exists.
	if c := invokeBudget(t, e, bob(t), "test.paid", false); c.Typename != "ToolCall" {
		t.Fatalf("bob's call: %+v", c)
	}
	if b := readBudget(t, e, bob(t)); b.LimitUsd != nil || b.RemainingUsd != nil || !b.OperatorDefault {
		t.Fatalf("bob's budget: %+v", b)
	}
	if r := e.Post(t, bob(t), `{ budget(actor: "alice") { spentUsd } }`, nil); len(r.Errors) != 1 || r.Errors[0].Code() != "PERMISSION_DENIED" {
		t.Fatalf("bob read alice's budget: %s", r.Raw)
	}
	// A raised limit lets the call through; the debit event says what is left.
	setBudget(t, e, admin(t), map[string]any{"actor": "alice", "limitUsd": 2})
	if c := invokeBudget(t, e, alice(t), "test.paid", false); c.Typename != "ToolCall" {
		t.Fatalf("after the raise: %+v", c)
	}
	var poll struct {
		Poll struct {
			Events []struct{ Payload map[string]any }
		}
	}
	e.OK(t, alice(t), `{ poll(types: ["agent.budget_debited"], from: START, limit: 100) { events { payload } } }`, nil, &poll)
	last := poll.Poll.Events[len(poll.Poll.Events)-1].Payload
	if !near(last["remaining_usd"].(float64), 0.8) || !near(last["spent_usd"].(float64), 1.2) {
		t.Fatalf("the last debit: %v", last)
	}
	e.OK(t, alice(t), `{ poll(types: ["agent.budget_set"], from: START) { events { payload } } }`, nil, &poll)
	if len(poll.Poll.Events) != 2 {
		t.Fatalf("alice sees %d budget_set events, want 2", len(poll.Poll.Events))
	}
	e.OK(t, bob(t), `{ poll(types: ["agent.budget_set"], from: START) { events { payload } } }`, nil, &poll)
	if len(poll.Poll.Events) != 0 {
		t.Fatalf("bob sees alice's budget events: %+v", poll.Poll.Events)
	}
}

// Concurrent calls cannot together spend past the budget: each holds its
// estimate while it runs, so of ten calls of $0.25 on a $1 budget exactly
// four run, and the holds become spending as they finish.
func TestBudgetHoldsConcurrentCalls(t *testing.T) {
	started, release := make(chan struct{}, 10), make(chan struct{})
	e := env(t, map[string]inprocess.Func{"test.held": func(ctx context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return args, nil
	}}, func(c *app.Config) {
		// The operator's default: every actor without a budget of its own.
		one := 1.0
		c.Tools.Budgets = budget.New(budget.Default{LimitUSD: &one, Period: budget.Day})
	})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the server closes, on a failure too
	activate(t, e, testTool("test.quarter", "test.held", func(m map[string]any) { m["cost_model"] = map[string]any{"fixed_usd": 0.25} }))
	var wg sync.WaitGroup
	results := make(chan budgetCall, 10)
	token := alice(t)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out struct{ InvokeTool budgetCall }
			r := e.Post(t, token, invokeBudgetQ, map[string]any{"n": "test.quarter", "a": map[string]any{"value": 1}}) // Post: no Fatal off the test goroutine
			if err := json.Unmarshal(r.Data, &out); err != nil || len(r.Errors) > 0 {
				t.Errorf("call: %s", r.Raw)
			}
			results <- out.InvokeTool
		}()
	}
	// Each call either starts (and blocks until released) or is refused;
	// a fifth start would be a call the budget could not hold.
	starts, refused := 0, 0
	for starts < 4 || refused < 6 {
		select {
		case <-started:
			if starts++; starts > 4 {
				t.Fatal("a fifth call started")
			}
		case c := <-results:
			if c.Typename != "BudgetExceeded" || !c.Retryable {
				t.Fatalf("refused: %+v (a daily budget's refusal is retryable once the period holds it)", c)
			}
			refused++
		}
	}
	b := readBudget(t, e, alice(t))
	if !near(b.HeldUsd, 1) || b.SpentUsd != 0 || !b.OperatorDefault || b.Period != "DAY" || b.ResetsAt == nil {
		t.Fatalf("four calls running: %+v", b)
	}
	once.Do(func() { close(release) })
	wg.Wait()
	close(results)
	for c := range results {
		if c.Typename != "ToolCall" || c.Status != "SUCCEEDED" {
			t.Fatalf("a running call: %+v", c)
		}
	}
	if b := readBudget(t, e, alice(t)); !near(b.SpentUsd, 1) || b.HeldUsd != 0 || *b.RemainingUsd != 0 {
		t.Fatalf("after: %+v", b)
	}
}

// Every finish settles the hold: a queued call's worker, a cancelled call,
// a lost call failed worker_lost, and a work packet's completion, which
// spends what the agent reports.
func TestBudgetSettlesEveryFinish(t *testing.T) {
	release := make(chan struct{})
	e := env(t, map[string]inprocess.Func{"test.wait": func(ctx context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		select {
		case <-release:
			return args, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}, func(c *app.Config) { c.Tools.SweepEvery = -1 })
	defer close(release)
	activate(t, e, testTool("test.paidwait", "test.wait", func(m map[string]any) { m["cost_model"] = map[string]any{"fixed_usd": 0.1} }))
	activate(t, e, skillTool()) // fixed $0.01 + the agent's $0.50
	setBudget(t, e, admin(t), map[string]any{"actor": "alice", "limitUsd": 1})

	// Queued, then cancelled: the hold is released, nothing spent.
	c := invokeBudget(t, e, alice(t), "test.paidwait", true)
	waitStatus(t, e, alice(t), c.ArtifactID, "RUNNING")
	if b := readBudget(t, e, alice(t)); !near(b.HeldUsd, 0.1) {
		t.Fatalf("a queued call holds: %+v", b)
	}
	var cancel struct {
		CancelToolCall struct {
			Typename string `json:"__typename"`
		}
	}
	e.OK(t, alice(t), `mutation($id: ID!) { cancelToolCall(input: {id: $id}) { __typename } }`, map[string]any{"id": c.ArtifactID}, &cancel)
	waitStatus(t, e, alice(t), c.ArtifactID, "CANCELLED")
	if b := readBudget(t, e, alice(t)); b.HeldUsd != 0 || b.SpentUsd != 0 {
		t.Fatalf("after the cancellation: %+v", b)
	}

	// Lost: its worker stops beating, and the recovery fails it.
	c = invokeBudget(t, e, alice(t), "test.paidwait", true)
	waitStatus(t, e, alice(t), c.ArtifactID, "RUNNING")
	if _, err := e.Pool.Exec(t.Context(), `UPDATE artifacts SET content = jsonb_set(content, '{worker}', '"dead-worker"') WHERE type = 'tool_call' AND id = $1`, c.ArtifactID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.App.Dispatch.RecoverLost(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, e, alice(t), c.ArtifactID, "FAILED")
	if b := readBudget(t, e, alice(t)); b.HeldUsd != 0 {
		t.Fatalf("after worker_lost: %+v", b)
	}

	// A skill_call holds the tool's price and the agent's budget until its
	// packet is completed, then spends what the agent reports.
	s := invokeBudget(t, e, alice(t), "review.skeptic", false)
	if s.Typename != "ToolCall" || !near(*s.CostEstimateUsd, 0.51) {
		t.Fatalf("skill_call: %+v", s)
	}
	if b := readBudget(t, e, alice(t)); !near(b.HeldUsd, 0.51) {
		t.Fatalf("a waiting packet holds: %+v", b)
	}
	if c := invokeBudget(t, e, alice(t), "review.skeptic", false); c.Typename != "BudgetExceeded" {
		t.Fatalf("a second packet past the budget: %+v", c)
	}
	p := claim(t, e, carol(t), workpacket.PacketType+":"+s.ArtifactID, 0)
	done := complete(t, e, carol(t), map[string]any{"ref": p.Ref, "status": "DONE", "resultRefs": []string{result(t, e, carol(t))},
		"spent": map[string]any{"usd": 0.2}})
	if done.Typename != "AgentWorkPacket" {
		t.Fatalf("complete: %+v", done)
	}
	if b := readBudget(t, e, alice(t)); b.HeldUsd != 0 || !near(b.SpentUsd, 0.21) {
		t.Fatalf("after the packet: %+v", b)
	}
}
