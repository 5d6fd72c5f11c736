package mcp_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
)

// The leaderboard tool is listed and answers: a duel between two hypotheses
// (add_signal with an opponent) puts the winner first at 1516 under the
// hypothesis schema's elo view (K = 32); a page over 100 is refused before
// anything runs, and an unknown view is refused naming the declared ones.
func TestLeaderboardTool(t *testing.T) {
	e := env(t, mcp.Options{Mutations: mcp.MutationsAll})
	cs := mustConnect(t, e, apitest.Contributor(t, "ada"))
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, tl := range lt.Tools {
		listed = listed || tl.Name == "leaderboard"
	}
	if !listed {
		t.Fatal("no leaderboard tool in tools/list")
	}
	refs := make([]string, 2)
	for i, title := range []string{"TREM2 R47H impairs phagocytosis", "APOE4 drives tau spread"} {
		var out struct {
			CreateArtifact struct{ Ref string }
		}
		data(t, cs, "create_artifact", call(t, cs, "create_artifact", map[string]any{"input": map[string]any{"type": "hypothesis", "title": title, "content": map[string]any{}}}), &out)
		refs[i], _, _ = strings.Cut(out.CreateArtifact.Ref, "@")
	}
	var sig struct {
		AddSignal struct {
			Typename string `json:"__typename"`
		}
	}
	data(t, cs, "add_signal", call(t, cs, "add_signal", map[string]any{"input": map[string]any{"ref": refs[1], "opponent": refs[0], "kind": "duel", "value": 1}}), &sig)
	if sig.AddSignal.Typename != "WriteSuccess" {
		t.Fatalf("add_signal duel: %+v", sig)
	}
	var lb struct {
		Leaderboard struct {
			Kind  string
			Edges []struct {
				Node struct {
					Rank     int
					Score    float64
					Wins     int
					Artifact struct{ Ref string }
				}
			}
		}
	}
	data(t, cs, "leaderboard", call(t, cs, "leaderboard", map[string]any{"type": "hypothesis", "view": "elo", "first": 10}), &lb)
	if b := lb.Leaderboard; b.Kind != "ELO" || len(b.Edges) != 2 || !strings.HasPrefix(b.Edges[0].Node.Artifact.Ref, refs[1]+"@") || b.Edges[0].Node.Rank != 1 ||
		math.Abs(b.Edges[0].Node.Score-1516) > 1e-9 || b.Edges[0].Node.Wins != 1 || math.Abs(b.Edges[1].Node.Score-1484) > 1e-9 {
		t.Errorf("leaderboard: %+v", b)
	}
	if res := call(t, cs, "leaderboard", map[string]any{"type": "hypothesis", "view": "elo", "first": 101}); !res.IsError || !strings.Contains(text(res), "first") {
		t.Errorf("first 101: %s", text(res))
	}
	if msg := toolError(t, call(t, cs, "leaderboard", map[string]any{"type": "hypothesis", "view": "glicko"})); msg["code"] != "VALIDATION_FAILED" ||
		!strings.Contains(msg["message"].(string)+text(call(t, cs, "leaderboard", map[string]any{"type": "hypothesis", "view": "glicko"})), "elo, forecasters, market, trending") {
		t.Errorf("unknown view: %v", msg)
	}
}
