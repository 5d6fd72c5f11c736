package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/e2e"
)

// The README's tour, end to end against the real binary on the embedded default:
// start with no database configured, mint a token, create and read an artifact
// over HTTP, stop with SIGTERM, and check the private cluster stopped too.
func TestServeOnEmbeddedDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dataDir := e2e.DataDir(t)
	p := e2e.Start(t, e2e.Opts{DataDir: dataDir})
	tok := e2e.Token(t, dataDir, "ada", "contributor")

	data, errs := p.GraphQL(t, tok, `mutation { createArtifact(input: {type: "hypothesis", title: "TREM2 R47H impairs microglial phagocytosis",
	  content: {target_gene: "TREM2", confidence: 0.7}}) { __typename ... on WriteSuccess { ref } } }`, nil)
	if len(errs) > 0 {
		t.Fatalf("create: %v", errs)
	}
	res := data["createArtifact"].(map[string]any)
	if res["__typename"] != "WriteSuccess" {
		t.Fatalf("create: %v", res)
	}
	ref := res["ref"].(string)
	data, errs = p.GraphQL(t, tok, `query($r: Ref!) { artifact(ref: $r) { title ... on Hypothesis { targetGene } } }`, map[string]any{"r": ref})
	if len(errs) > 0 {
		t.Fatalf("read: %v", errs)
	}
	got := data["artifact"].(map[string]any)
	if got["title"] != "TREM2 R47H impairs microglial phagocytosis" || got["targetGene"] != "TREM2" {
		t.Fatalf("read back %v", got)
	}
	// A validation failure, as in the tour.
	data, _ = p.GraphQL(t, tok, `mutation { createArtifact(input: {type: "hypothesis", title: "x", content: {confidence: "high"}}) { __typename } }`, nil)
	if data["createArtifact"].(map[string]any)["__typename"] != "ValidationFailed" {
		t.Errorf("bad content: %v", data)
	}

	// Step 10, a debate: started, its first round answered by an agent
	// before the restart, its synthesis after it (the next packet comes
	// from durable state, not from the process that issued it).
	agent := e2e.Token(t, dataDir, "agent-theorist", "contributor")
	start := invokeTool(t, p, tok, "debate.start", map[string]any{"topic": "Does TREM2 R47H act through reduced phagocytosis?",
		"personas": []string{"theorist"}, "k": 1, "about": ref})
	session, packet := start["session"].(string), start["packet"].(string)
	claimPacket(t, p, agent, packet)
	argued := invokeTool(t, p, agent, "debate.argue", map[string]any{"packet": packet, "argument": "R47H lowers ligand binding [PMID:23150908].",
		"citations": []string{"PMID:23150908"}})
	synthPacket, _ := argued["next_packet"].(string)
	if synthPacket == "" {
		t.Fatalf("argue: %v", argued)
	}

	pidFile := filepath.Join(dataDir, "postgres", "data", "postmaster.pid")
	pm := postmasterPID(t, pidFile)
	if err := p.Signal(t, syscall.SIGTERM, 60*time.Second); err != nil {
		t.Fatalf("scidex exited with %v after SIGTERM\n%s", err, p.Log())
	}
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("postmaster.pid still there after SIGTERM (%v)", err)
	}
	if err := syscall.Kill(pm, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("postmaster %d still running after scidex stopped (kill 0: %v)", pm, err)
	}
	if !strings.Contains(p.Log(), "embedded PostgreSQL stopped") {
		t.Errorf("log does not say the cluster stopped:\n%s", p.Log())
	}

	// A second start reuses the cluster and sees the data.
	p2 := e2e.Start(t, e2e.Opts{DataDir: dataDir})
	data, _ = p2.GraphQL(t, tok, `query($r: Ref!) { artifact(ref: $r) { title } }`, map[string]any{"r": ref})
	if data["artifact"] == nil {
		t.Errorf("artifact lost across restart")
	}
	replay := invokeTool(t, p2, tok, "debate.replay", map[string]any{"session": session})
	if next, _ := replay["next"].(map[string]any); next == nil || next["packet"] != synthPacket || next["persona"] != "synthesizer" {
		t.Fatalf("replay after restart: %v", replay)
	}
	claimPacket(t, p2, agent, synthPacket)
	invokeTool(t, p2, agent, "debate.argue", map[string]any{"packet": synthPacket, "synthesis": "One argument, unopposed.", "verdict": "inconclusive"})
	replay = invokeTool(t, p2, tok, "debate.replay", map[string]any{"session": session})
	rounds, _ := replay["rounds"].([]any)
	if replay["state"] != "concluded" || len(rounds) != 1 || replay["synthesis"] == nil {
		t.Errorf("replay of the concluded debate: %v", replay)
	}
	if err := p2.Signal(t, syscall.SIGINT, 60*time.Second); err != nil {
		t.Errorf("second run exit: %v", err)
	}
}

// invokeTool invokes a tool and wants it succeeded; it returns the result.
func invokeTool(t *testing.T, p *e2e.Proc, token, name string, args map[string]any) map[string]any {
	t.Helper()
	data, errs := p.GraphQL(t, token, `mutation($n: String!, $a: JSON!) { invokeTool(input: {name: $n, args: $a}) {
	  __typename ... on ToolCall { status result error } ... on Problem { message } } }`, map[string]any{"n": name, "a": args})
	c, _ := data["invokeTool"].(map[string]any)
	if len(errs) > 0 || c == nil || c["status"] != "SUCCEEDED" {
		t.Fatalf("%s: %v %v", name, c, errs)
	}
	res, _ := c["result"].(map[string]any)
	return res
}

func claimPacket(t *testing.T, p *e2e.Proc, token, packet string) {
	t.Helper()
	data, errs := p.GraphQL(t, token, `mutation($r: Ref) { claimWorkPacket(input: {ref: $r}) { __typename ... on Problem { message } } }`, map[string]any{"r": packet})
	if c, _ := data["claimWorkPacket"].(map[string]any); len(errs) > 0 || c["__typename"] != "AgentWorkPacket" {
		t.Fatalf("claim %s: %v %v", packet, data, errs)
	}
}

func postmasterPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return pid
}

// Without PostgreSQL binaries and without DATABASE_URL the server says what to
// install or set, and exits non-zero.
func TestServeWithoutPostgres(t *testing.T) {
	cmd := e2e.Command(t, "serve", "--data-dir", e2e.DataDir(t), "--addr", "127.0.0.1:0")
	cmd.Env = append(cmd.Env, "SCIDEX_PG_BIN="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("want a non-zero exit, got %v\n%s", err, out)
	}
	for _, want := range []string{"apt-get install", "DATABASE_URL", "SCIDEX_PG_BIN"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output does not mention %q:\n%s", want, out)
		}
	}
}
