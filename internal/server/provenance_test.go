package server_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/store"
)

// Result submission, the preferred path (issue 9 point 6): an agent that ran a
// tool in its own runtime submits the result with createArtifact, its content
// saying produced_by {actor, skill, tool}; the write path stamps the three
// provenance edges, Artifact.provenance shows them as a produced_by step, and
// Actor.produced lists the artifact with the tool and skill it came from.

// provEnv is a server with a registered tool (checksum.sha256) and skill
// (stats.summary) for produced_by to name.
func provEnv(t *testing.T, opts ...apitest.Opts) *apitest.Env {
	t.Helper()
	env := apitest.New(t, opts...)
	b, err := os.ReadFile("../../tools/checksum/tool.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var reg struct{ RegisterTool struct{ Typename string } }
	env.OK(t, apitest.Token(t, "ada", auth.PermAdmin), `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { typename: __typename } }`,
		map[string]any{"m": m}, &reg)
	if reg.RegisterTool.Typename != "WriteSuccess" {
		t.Fatalf("register checksum.sha256: %+v", reg)
	}
	createH(t, env, apitest.Contributor(t, "carol"), map[string]any{"type": "skill", "title": "Summary statistics",
		"content": map[string]any{"name": "stats.summary", "version": "0.1.0"}})
	return env
}

func analysis(title string, producedBy any) map[string]any {
	content := map[string]any{"question": "What is the sha256 of the dataset?"}
	if producedBy != nil {
		content["produced_by"] = producedBy
	}
	return map[string]any{"type": "analysis", "title": title, "content": content}
}

type stampRow struct{ Predicate, Target, StampedBy string }

// stampsOn reads the provenance_edges of an artifact straight from the table.
func stampsOn(t *testing.T, env *apitest.Env, ref string) []stampRow {
	t.Helper()
	typ, id, _ := strings.Cut(unpinned(ref), ":")
	rows, err := env.Pool.Query(context.Background(), `SELECT p.predicate, p.target, p.stamped_by FROM provenance_edges p
		JOIN artifacts a ON a.pk = p.source_pk WHERE a.type = $1 AND a.id = $2 ORDER BY p.predicate`, typ, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []stampRow
	for rows.Next() {
		var r stampRow
		if err := rows.Scan(&r.Predicate, &r.Target, &r.StampedBy); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func targets(rows []stampRow) string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Predicate+"→"+r.Target)
	}
	return strings.Join(out, " ")
}

type provStep struct {
	Operation string
	Actor     struct{ ID string }
	RequestID string
	Tool      *string
	Skill     *string
	Stamps    []struct {
		Predicate, Target string
		Revision          int
	}
}

func provenanceOf(t *testing.T, env *apitest.Env, token, ref string) []provStep {
	t.Helper()
	var out struct {
		Artifact struct{ Provenance []provStep }
	}
	env.OK(t, token, `query($r: Ref!) { artifact(ref: $r) { provenance { operation actor { id } requestId tool skill stamps { predicate target revision } } } }`,
		map[string]any{"r": ref}, &out)
	return out.Artifact.Provenance
}

type producedEdge struct {
	Cursor string
	Node   struct{ Ref string }
	Tool   *string
	Skill  *string
}

// produced reads Actor.produced of the creator of ref, as token sees it.
func produced(t *testing.T, env *apitest.Env, token, ref string, args map[string]any) []producedEdge {
	t.Helper()
	vars := map[string]any{"r": ref}
	for k, v := range args {
		vars[k] = v
	}
	var out struct {
		Artifact struct {
			CreatedBy struct {
				Produced struct{ Edges []producedEdge }
			}
		}
	}
	env.OK(t, token, `query($r: Ref!, $via: String, $first: Int, $after: Cursor) { artifact(ref: $r) { createdBy {
	  produced(via: $via, first: $first, after: $after) { edges { cursor node { ref } tool skill } } } } }`, vars, &out)
	return out.Artifact.CreatedBy.Produced.Edges
}

func TestSubmittedResultIsStampedAndReadBack(t *testing.T) {
	env := provEnv(t)
	alice := apitest.Contributor(t, "alice")
	in := analysis("sha256 of the dataset", map[string]any{"tool": "checksum.sha256", "skill": "stats.summary", "tool_version": "1.0.0"})
	in["idempotencyKey"] = "submit-1"
	a := mustWrite(t, env, alice, "createArtifact", "CreateArtifactInput", in)
	// The same submission again (its idempotency key) stamps nothing more.
	if again := mustWrite(t, env, alice, "createArtifact", "CreateArtifactInput", in); !again.IdempotentReplay || again.Ref != a.Ref {
		t.Fatalf("replay: %+v", again)
	}
	want := "produced_by_actor→actor:alice produced_by_skill→skill:stats.summary produced_by_tool→tool:checksum.sha256"
	if got := stampsOn(t, env, a.Ref); targets(got) != want || got[0].StampedBy != "alice" {
		t.Fatalf("stamps %+v\nwant %s", got, want)
	}

	// Artifact.provenance: the create, then the produced_by step.
	steps := provenanceOf(t, env, apitest.Contributor(t, "bob"), unpinned(a.Ref))
	if len(steps) != 2 || steps[0].Operation != "createArtifact" || steps[1].Operation != "produced_by" {
		t.Fatalf("provenance %+v", steps)
	}
	p := steps[1]
	if p.Actor.ID != "alice" || p.Tool == nil || *p.Tool != "checksum.sha256" || p.Skill == nil || *p.Skill != "stats.summary" ||
		p.RequestID != steps[0].RequestID || len(p.Stamps) != 3 || p.Stamps[0].Revision != 1 {
		t.Errorf("produced_by step %+v", p)
	}

	// Actor.produced, filtered by the tool or skill it came via.
	bob := apitest.Contributor(t, "bob")
	for _, c := range []struct {
		via  any
		want int
	}{{nil, 1}, {"checksum.sha256", 1}, {"stats.summary", 1}, {"tool:checksum.sha256", 1}, {"skill:stats.summary", 1},
		{"tool:stats.summary", 0}, {"pk.nca", 0}} {
		edges := produced(t, env, bob, a.Ref, map[string]any{"via": c.via})
		if len(edges) != c.want {
			t.Errorf("produced(via: %v): %d edges, want %d", c.via, len(edges), c.want)
			continue
		}
		if c.want == 1 {
			e := edges[0]
			if unpinned(e.Node.Ref) != unpinned(a.Ref) || e.Tool == nil || *e.Tool != "checksum.sha256" || e.Skill == nil || *e.Skill != "stats.summary" {
				t.Errorf("produced(via: %v): %+v", c.via, e)
			}
		}
	}
	r := env.Post(t, bob, `query($r: Ref!) { artifact(ref: $r) { createdBy { produced(via: "table:x") { edges { cursor } } } } }`, map[string]any{"r": a.Ref})
	if len(r.Errors) != 1 || r.Errors[0].Code() != "VALIDATION_FAILED" || !strings.Contains(r.Errors[0].Message, "via") {
		t.Errorf("a via that is neither a name nor tool:/skill: → %s", r.Raw)
	}

	// A new version saying produced_by again, with the actor now explicit and
	// a skill added, stamps the skill alone: (source, predicate, target) is
	// unique, and the edges already there are skipped, not an error.
	h := createH(t, env, alice, map[string]any{"title": "TREM2 loss raises amyloid",
		"content": map[string]any{"produced_by": map[string]any{"tool": "checksum.sha256"}}})
	u := update(t, env, alice, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": h.ContentHash,
		"content": map[string]any{"description": "TREM2 loss raises amyloid load",
			"produced_by": map[string]any{"actor": "alice", "tool": "checksum.sha256", "skill": "stats.summary"}}})
	if u.Typename != "WriteSuccess" {
		t.Fatalf("update: %+v", u)
	}
	if got := stampsOn(t, env, h.Ref); targets(got) != want {
		t.Errorf("after the update: %s", targets(got))
	}
	steps = provenanceOf(t, env, bob, unpinned(h.Ref))
	if len(steps) != 3 || steps[1].Operation != "produced_by" || len(steps[1].Stamps) != 2 || steps[1].Skill != nil ||
		steps[2].Operation != "produced_by" || len(steps[2].Stamps) != 1 || steps[2].Stamps[0].Revision != 2 || *steps[2].Skill != "stats.summary" {
		t.Errorf("after the update: %+v", steps)
	}
	// The first version shows the stamps made by then.
	if old := provenanceOf(t, env, bob, h.Ref); len(old) != 2 || len(old[1].Stamps) != 2 {
		t.Errorf("provenance of the first version: %+v", old)
	}
}

// Actor.produced pages newest first, and lists only what the reader may read.
func TestProducedPagesAndHidesWhatTheReaderMayNotRead(t *testing.T) {
	env := provEnv(t)
	alice := apitest.Contributor(t, "alice")
	var refs []string
	for _, title := range []string{"first", "second", "third"} {
		refs = append(refs, unpinned(mustWrite(t, env, alice, "createArtifact", "CreateArtifactInput",
			analysis(title+" result", map[string]any{"tool": "checksum.sha256"})).Ref))
	}
	bob := apitest.Contributor(t, "bob")
	page1 := produced(t, env, bob, refs[0], map[string]any{"first": 2})
	page2 := produced(t, env, bob, refs[0], map[string]any{"first": 2, "after": page1[len(page1)-1].Cursor})
	var got []string
	for _, e := range append(page1, page2...) {
		got = append(got, unpinned(e.Node.Ref))
	}
	if want := []string{refs[2], refs[1], refs[0]}; !slices.Equal(got, want) {
		t.Fatalf("pages %v, want %v", got, want)
	}
	// The second made readable by its participants only: gone for bob, still
	// there for its creator.
	typ, id, _ := strings.Cut(refs[1], ":")
	if _, err := env.Pool.Exec(context.Background(), `UPDATE artifacts SET visibility = 'participants' WHERE type = $1 AND id = $2`, typ, id); err != nil {
		t.Fatal(err)
	}
	if n := len(produced(t, env, bob, refs[0], nil)); n != 2 {
		t.Errorf("bob sees %d of alice's results, want 2", n)
	}
	if n := len(produced(t, env, alice, refs[0], nil)); n != 3 {
		t.Errorf("alice sees %d of her results, want 3", n)
	}
}

// A stamp that cannot be made never fails the write: it is logged, and what
// can be stamped is.
func TestFailedStampIsLoggedAndTheWriteStands(t *testing.T) {
	env := provEnv(t)
	alice := apitest.Contributor(t, "alice")
	for _, c := range []struct {
		name       string
		producedBy map[string]any
		want, log  string
	}{
		{"a tool that is not registered", map[string]any{"tool": "no.such.tool", "skill": "stats.summary"},
			"produced_by_actor→actor:alice produced_by_skill→skill:stats.summary", `target=tool:no.such.tool reason="no tool named \"no.such.tool\" is registered"`},
		{"a skill that is not registered", map[string]any{"skill": "no.such.skill"},
			"produced_by_actor→actor:alice", `no skill named \"no.such.skill\" is registered`},
		{"an actor alice does not act for", map[string]any{"actor": "mallory", "tool": "checksum.sha256"},
			"produced_by_tool→tool:checksum.sha256", `target=actor:mallory reason="the submitter alice neither is mallory nor acts for it`},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := mutate(t, env, alice, "createArtifact", "CreateArtifactInput", analysis(c.name, c.producedBy))
			if a.Typename != "WriteSuccess" {
				t.Fatalf("the write failed: %+v", a)
			}
			if got := targets(stampsOn(t, env, a.Ref)); got != c.want {
				t.Errorf("stamps %q, want %q", got, c.want)
			}
			if !env.Log.Contains("provenance stamp refused") || !env.Log.Contains(c.log) {
				t.Errorf("the log does not say %s:\n%s", c.log, env.Log.String())
			}
		})
	}
}

// An actor acting for another (a delegated token) may attribute the result
// to an actor of its delegation chain.
func TestProducedByActorMayBeOneTheSubmitterActsFor(t *testing.T) {
	env := provEnv(t)
	tok := specToken(t, []any{map[string]any{"actor_id": "human:ada", "session_id": "s-ada"}})
	a := mustWrite(t, env, tok, "createArtifact", "CreateArtifactInput", analysis("on ada's behalf", map[string]any{"actor": "human:ada"}))
	got := stampsOn(t, env, a.Ref)
	if len(got) != 1 || got[0].Target != "actor:human:ada" || got[0].StampedBy != "agent:reviewer" {
		t.Fatalf("stamps %+v", got)
	}
	var out struct {
		Me struct {
			Produced struct{ Edges []producedEdge }
		}
	}
	env.OK(t, apitest.Contributor(t, "human:ada"), `{ me { produced { edges { node { ref } } } } }`, nil, &out)
	if e := out.Me.Produced.Edges; len(e) != 1 || e[0].Node.Ref != a.Ref {
		t.Errorf("ada's produced: %+v", e)
	}
}

// produced_by has one shape on every type; a malformed one is refused with
// the path of the problem, and nothing is written.
func TestProducedByShapeIsValidated(t *testing.T) {
	env := provEnv(t)
	alice := apitest.Contributor(t, "alice")
	before := env.Count(t, "artifacts")
	for _, c := range []struct {
		producedBy any
		path       string
	}{
		{"checksum.sha256", "content.produced_by"},
		{map[string]any{"tool": 42}, "content.produced_by.tool"},
		{map[string]any{"tool": "Checksum SHA"}, "content.produced_by.tool"},
		{map[string]any{"actor": ""}, "content.produced_by.actor"},
	} {
		r := mutate(t, env, alice, "createArtifact", "CreateArtifactInput", analysis("malformed", c.producedBy))
		if r.Typename != "ValidationFailed" || len(r.Problems) != 1 || r.Problems[0].Path != c.path {
			t.Errorf("produced_by %v: %s %+v, want a problem at %s", c.producedBy, r.Typename, r.Problems, c.path)
		}
	}
	// Not only on result types: a hypothesis may say what produced it.
	h := createH(t, env, alice, map[string]any{"title": "TREM2 loss raises amyloid", "content": map[string]any{"produced_by": map[string]any{"skill": "stats.summary"}}})
	if got := targets(stampsOn(t, env, h.Ref)); got != "produced_by_actor→actor:alice produced_by_skill→skill:stats.summary" {
		t.Errorf("hypothesis stamps %q", got)
	}
	if n := env.Count(t, "artifacts"); n != before+1 {
		t.Errorf("%d artifacts written, want 1 (the hypothesis)", n-before)
	}
}

// With stamping off (--stamp-provenance=false) nothing is stamped, and the
// provenance is the write's own.
func TestStampingOffStampsNothing(t *testing.T) {
	env := provEnv(t, apitest.Opts{Store: func(o *store.Opts) { o.NoProvenanceStamps = true }})
	a := mustWrite(t, env, apitest.Contributor(t, "alice"), "createArtifact", "CreateArtifactInput",
		analysis("unstamped", map[string]any{"tool": "checksum.sha256", "skill": "stats.summary"}))
	if n := env.Count(t, "provenance_edges"); n != 0 {
		t.Errorf("%d stamps with stamping off", n)
	}
	if steps := provenanceOf(t, env, apitest.Contributor(t, "bob"), a.Ref); len(steps) != 1 {
		t.Errorf("provenance %+v", steps)
	}
}
