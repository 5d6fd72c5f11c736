package dispatch_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/inprocess"
)

// stamps lists an artifact's provenance edges, "predicate→target", oldest first.
func stamps(t *testing.T, e *apitest.Env, ref string) []string {
	t.Helper()
	typ, id, _ := strings.Cut(strings.SplitN(ref, "@", 2)[0], ":")
	rows, err := e.Pool.Query(context.Background(), `SELECT p.predicate || '→' || p.target FROM provenance_edges p
		JOIN artifacts a ON a.pk = p.source_pk WHERE a.type = $1 AND a.id = $2 ORDER BY p.pk`, typ, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A finished call's result artifact is stamped produced_by_tool and
// produced_by_actor (the caller); replaying the invocation with its
// idempotency key returns the same call and stamps nothing more.
func TestGateRunResultIsStamped(t *testing.T) {
	e := env(t, nil)
	activate(t, e, manifest(t, "gate_run"))
	var h struct {
		CreateArtifact struct{ Ref string }
	}
	e.OK(t, alice(t), `mutation { createArtifact(input: {type: "hypothesis", title: "TREM2 loss raises amyloid load", content: {}}) { ... on WriteSuccess { ref } } }`, nil, &h)
	args := map[string]any{"target": h.CreateArtifact.Ref, "gate": "artifact.basic"}

	c := invoke(t, e, alice(t), "gate_run", args, map[string]any{"k": "gate-1"})
	if c.Typename != "ToolCall" || c.Status != "SUCCEEDED" || c.ResultRef == nil || !strings.HasPrefix(*c.ResultRef, "gate_result:") {
		t.Fatalf("gate_run: %+v", c)
	}
	want := []string{"produced_by_actor→actor:alice", "produced_by_tool→tool:gate_run"}
	if got := stamps(t, e, *c.ResultRef); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("stamps %v, want %v", got, want)
	}
	again := invoke(t, e, alice(t), "gate_run", args, map[string]any{"k": "gate-1"})
	if again.ArtifactID != c.ArtifactID {
		t.Fatalf("the replay made another call: %+v", again)
	}
	if got := stamps(t, e, *c.ResultRef); len(got) != 2 {
		t.Errorf("after the replay: %v", got)
	}
	if n := count(t, e, "type = 'gate_result'"); n != 1 {
		t.Errorf("%d gate results", n)
	}

	// Read back: the gate_result's provenance ends with the tool, and alice's
	// produced lists it via gate_run.
	var out struct {
		Artifact struct {
			Provenance []struct {
				Operation string
				Actor     struct{ ID string }
				Tool      *string
			}
			CreatedBy struct {
				Produced struct {
					Edges []struct {
						Node struct{ Ref string }
						Tool *string
					}
				}
			}
		}
	}
	e.OK(t, bob(t), `query($r: Ref!) { artifact(ref: $r) { provenance { operation actor { id } tool }
	  createdBy { produced(via: "tool:gate_run") { edges { node { ref } tool } } } } }`, map[string]any{"r": *c.ResultRef}, &out)
	p := out.Artifact.Provenance
	if last := p[len(p)-1]; last.Operation != "produced_by" || last.Actor.ID != "alice" || last.Tool == nil || *last.Tool != "gate_run" {
		t.Errorf("provenance %+v", p)
	}
	if edges := out.Artifact.CreatedBy.Produced.Edges; len(edges) != 1 || edges[0].Node.Ref != *c.ResultRef || *edges[0].Tool != "gate_run" {
		t.Errorf("alice's produced via gate_run: %+v", edges)
	}
}

// A call worked by the queue stamps its result too, as the caller.
func TestQueuedCallResultIsStamped(t *testing.T) {
	e := env(t, nil)
	activate(t, e, manifest(t, "gate_run"))
	var h struct {
		CreateArtifact struct{ Ref string }
	}
	e.OK(t, alice(t), `mutation { createArtifact(input: {type: "hypothesis", title: "TREM2 loss raises amyloid load", content: {}}) { ... on WriteSuccess { ref } } }`, nil, &h)
	c := invoke(t, e, alice(t), "gate_run", map[string]any{"target": h.CreateArtifact.Ref, "gate": "artifact.basic"}, map[string]any{"async": true})
	waitStatus(t, e, alice(t), c.ArtifactID, "SUCCEEDED")
	var call struct{ ToolCall struct{ ResultRef string } }
	e.OK(t, alice(t), `query($id: ID!) { toolCall(id: $id) { resultRef } }`, map[string]any{"id": c.ArtifactID}, &call)
	// The stamp follows the call's final write: wait for it.
	want := "produced_by_actor→actor:alice produced_by_tool→tool:gate_run"
	var got string
	until(t, e, call.ToolCall.ResultRef, "the result's provenance stamps", func() bool {
		got = strings.Join(stamps(t, e, call.ToolCall.ResultRef), " ")
		return got == want
	})
}

// A tool whose output names an artifact the caller did not write gets no
// stamp on it: a tool cannot attribute someone else's artifact to its caller.
func TestResultNamingAnotherActorsArtifactIsNotStamped(t *testing.T) {
	var bobs string
	e := env(t, map[string]inprocess.Func{"test.claim": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"value": 1, "result_ref": bobs})
	}})
	activate(t, e, testTool("test.claim", "test.claim"))
	var h struct {
		CreateArtifact struct{ Ref string }
	}
	e.OK(t, bob(t), `mutation { createArtifact(input: {type: "hypothesis", title: "Bob's own hypothesis", content: {}}) { ... on WriteSuccess { ref } } }`, nil, &h)
	bobs = h.CreateArtifact.Ref
	c := invoke(t, e, alice(t), "test.claim", map[string]any{"value": 1})
	if c.Status != "SUCCEEDED" || c.ResultRef == nil || *c.ResultRef != bobs {
		t.Fatalf("call %+v", c)
	}
	if got := stamps(t, e, bobs); len(got) != 0 {
		t.Errorf("bob's hypothesis was stamped %v", got)
	}
	if !e.Log.Contains("provenance stamp refused") || !e.Log.Contains("no such artifact written by the request's actor") {
		t.Errorf("the refusal is not logged:\n%s", e.Log.String())
	}
}
