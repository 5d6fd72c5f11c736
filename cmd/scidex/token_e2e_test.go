package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/e2e"
)

// The README's delegated token, end to end: `scidex token --delegation …`
// mints a token the running server accepts, and the artifact it writes shows
// the whole lineage on provenance { delegation { … } }.
func TestDelegatedTokenFromTheCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dataDir := e2e.DataDir(t)
	p := e2e.Start(t, e2e.Opts{DataDir: dataDir})
	cmd := e2e.Command(t, "token", "--data-dir", dataDir, "--sub", "agent:reviewer", "--kind", "ai_local",
		"--permissions", "contributor", "--session", "s-reviewer", "--task", "task-42.1",
		"--delegation", "human:ada/s-ada,agent:orch/s-orch/task-42")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scidex token: %v", err)
	}
	tok := strings.TrimSpace(string(out))

	data, errs := p.GraphQL(t, tok, `mutation { createArtifact(input: {type: "hypothesis", title: "TREM2 R47H", content: {}}) {
	  ... on WriteSuccess { artifact { provenance { actor { id } sessionId taskId delegationChain
	    delegation { actor { id } sessionId taskId } } } } } }`, nil)
	if len(errs) > 0 {
		t.Fatalf("create: %v\n%s", errs, p.Log())
	}
	got, _ := json.Marshal(data["createArtifact"].(map[string]any)["artifact"].(map[string]any)["provenance"])
	want := `[{"actor":{"id":"agent:reviewer"},"delegation":[{"actor":{"id":"human:ada"},"sessionId":"s-ada","taskId":null},` +
		`{"actor":{"id":"agent:orch"},"sessionId":"s-orch","taskId":"task-42"}],"delegationChain":["human:ada","agent:orch"],` +
		`"sessionId":"s-reviewer","taskId":"task-42.1"}]`
	if string(got) != want {
		t.Errorf("provenance\n  %s\nwant\n  %s", got, want)
	}
}
