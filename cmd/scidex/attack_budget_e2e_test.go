package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// Issue 15, budgets (SPEC-002 §6), against the real binary started with an
// operator default budget: an agent that tries to spend past it — call after
// call, many calls at once, queued calls, raising its own budget — is refused
// BudgetExceeded before anything runs, and nothing is recorded. Before, no
// call was ever refused for its cost.
func TestAttackSpendPastTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := "attack-budget-secret-0123456789abcdef-01234567"
	dbURL := dbtest.URL(t)
	env := []string{"DATABASE_URL=" + dbURL, "SCIDEX_JWT_SECRET=" + secret, "SCIDEX_BUDGET_DEFAULT_PERIOD=day"}
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env, Args: []string{"--budget-default-usd", "1"}})
	admin := mint(t, secret, "ada", auth.PermAdmin)
	mallory := mint(t, secret, "mallory", auth.PermContributor)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// A priced tool over a compiled-in function, reviewed and active.
	m := map[string]any{"name": "priced.sha256", "version": "1.0.0", "summary": "sha256, at a price", "runtime": "in_process",
		"runtime_config": map[string]any{"function": "checksum.sha256"},
		"input_schema":   map[string]any{"type": "object", "required": []any{"text"}, "properties": map[string]any{"text": map[string]any{"type": "string"}}},
		"output_schema":  map[string]any{"type": "object"},
		"cost_model":     map[string]any{"fixed_usd": 0.3}}
	var reg struct {
		RegisterTool struct {
			Typename string `json:"__typename"`
			Ref      string
		}
	}
	if err := gql(ctx, srv.URL, admin, `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { __typename ... on WriteSuccess { ref } } }`,
		map[string]any{"m": m}, &reg); err != nil || reg.RegisterTool.Typename != "WriteSuccess" {
		t.Fatalf("register: %+v %v", reg, err)
	}
	var hash struct{ Artifact struct{ ContentHash string } }
	if err := gql(ctx, srv.URL, admin, `{ artifact(ref: "tool:priced.sha256") { contentHash } }`, nil, &hash); err != nil {
		t.Fatal(err)
	}
	if err := gql(ctx, srv.URL, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:priced.sha256", baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"h": hash.Artifact.ContentHash}, &struct{}{}); err != nil {
		t.Fatal(err)
	}

	type answer struct {
		InvokeTool struct {
			Typename     string `json:"__typename"`
			ArtifactID   string
			Status       string
			Code         string
			Message      string
			Retryable    bool
			RetryAfterMs *int
			EstimateUsd  float64
			Budget       struct{ RemainingUsd float64 }
		}
	}
	invoke := func(text string, async bool) (answer, error) {
		var a answer
		err := gql(ctx, srv.URL, mallory, `mutation($a: JSON!, $async: Boolean) { invokeTool(input: {name: "priced.sha256", args: $a, async: $async}) {
		  __typename ... on ToolCall { artifactId status }
		  ... on BudgetExceeded { code message retryable retryAfterMs estimateUsd budget { remainingUsd } } ... on Problem { code message } } }`,
			map[string]any{"a": map[string]any{"text": text}, "async": async}, &a)
		return a, err
	}
	db, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	calls := func() int {
		t.Helper()
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM artifacts WHERE type = 'tool_call' AND created_by = 'mallory'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Call after call: three fit the $1 default, the fourth does not.
	for i := range 3 {
		if a, err := invoke("abc", false); err != nil || a.InvokeTool.Status != "SUCCEEDED" {
			t.Fatalf("call %d: %+v %v", i, a, err)
		}
	}
	a, err := invoke("abc", false)
	if err != nil || a.InvokeTool.Typename != "BudgetExceeded" || a.InvokeTool.Code != "BUDGET_EXCEEDED" ||
		!a.InvokeTool.Retryable || a.InvokeTool.RetryAfterMs == nil || *a.InvokeTool.RetryAfterMs <= 0 || a.InvokeTool.EstimateUsd != 0.3 {
		t.Fatalf("the fourth call: %+v %v", a, err)
	}
	if n := calls(); n != 3 {
		t.Fatalf("%d calls recorded, want 3: a refused call was recorded", n)
	}

	// Raising her own budget: refused.
	var set struct {
		SetBudget struct {
			Typename string `json:"__typename"`
		}
	}
	if err := gql(ctx, srv.URL, mallory, `mutation { setBudget(input: {actor: "mallory", limitUsd: 1000}) { __typename } }`, nil, &set); err != nil ||
		set.SetBudget.Typename != "PermissionDenied" {
		t.Fatalf("mallory raised her budget: %+v %v", set, err)
	}

	// An admin gives her $1.20 more: of eight queued calls at once, four fit.
	if err := gql(ctx, srv.URL, admin, `mutation { setBudget(input: {actor: "mallory", limitUsd: 2.1, period: DAY}) { __typename } }`, nil, &set); err != nil ||
		set.SetBudget.Typename != "Budget" {
		t.Fatalf("the admin's raise: %+v %v", set, err)
	}
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		queued, refused int
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := invoke("at once", true)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case a.InvokeTool.Typename == "ToolCall":
				queued++
			case a.InvokeTool.Typename == "BudgetExceeded":
				refused++
			default:
				t.Errorf("a concurrent call: %+v", a)
			}
		}()
	}
	wg.Wait()
	if queued != 4 || refused != 4 {
		t.Fatalf("%d queued, %d refused: want 4 and 4", queued, refused)
	}
	// What she sees of her budget, once the queued calls finished: all spent.
	var b struct {
		Budget struct {
			SpentUsd, HeldUsd, RemainingUsd float64
		}
	}
	untilCall(t, srv.URL, mallory, func() bool {
		if err := gql(ctx, srv.URL, mallory, `{ budget { spentUsd heldUsd remainingUsd } }`, nil, &b); err != nil {
			t.Fatal(err)
		}
		return b.Budget.HeldUsd == 0
	})
	if b.Budget.SpentUsd < 2.1-1e-9 || b.Budget.HeldUsd != 0 || b.Budget.RemainingUsd > 1e-9 {
		t.Fatalf("her budget after: %+v", b.Budget)
	}
}
