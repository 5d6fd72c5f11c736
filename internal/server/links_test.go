package server_test

import (
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/store"
)

func paper(t *testing.T, env *apitest.Env, tok, pmid string) result {
	t.Helper()
	return mustWrite(t, env, tok, "createArtifact", "CreateArtifactInput", map[string]any{"type": "paper", "id": "PMID:" + pmid,
		"title": "Paper " + pmid, "content": map[string]any{"title": "Paper " + pmid, "pmid": pmid}})
}

func TestAddLinkChecksTheSchema(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	h := createH(t, env, tok, map[string]any{"title": "h", "content": map[string]any{}})
	h2 := createH(t, env, tok, map[string]any{"title": "h2", "content": map[string]any{}})
	gap := mustWrite(t, env, tok, "createArtifact", "CreateArtifactInput", map[string]any{"type": "knowledge_gap", "title": "gap", "content": map[string]any{"description": "unknown"}})
	p := paper(t, env, tok, "1")
	link := func(in map[string]any) result { return mutate(t, env, tok, "addLink", "AddLinkInput", in) }

	r := link(map[string]any{"from": unpinned(h.Ref), "predicate": "addresses", "to": unpinned(gap.Ref)})
	if r.Typename != "WriteSuccess" || r.Link == nil || r.Link.Predicate != "addresses" || r.Link.To.ID != unpinned(gap.Ref) {
		t.Fatalf("addLink: %+v", r)
	}
	before := env.Counts(t)
	cases := []struct {
		name, typename, path string
		in                   map[string]any
	}{
		{"undeclared predicate", "ValidationFailed", "predicate", map[string]any{"from": unpinned(h.Ref), "predicate": "loves", "to": unpinned(h2.Ref)}},
		{"wrong target type", "ValidationFailed", "to", map[string]any{"from": unpinned(h.Ref), "predicate": "addresses", "to": unpinned(h2.Ref)}},
		{"missing target", "LinkTargetMissing", "", map[string]any{"from": unpinned(h.Ref), "predicate": "related_to", "to": "hypothesis:ghost"}},
		{"missing source", "NotFound", "", map[string]any{"from": "hypothesis:ghost", "predicate": "related_to", "to": unpinned(h.Ref)}},
		{"claim without evidence", "ValidationFailed", "evidence", map[string]any{"from": unpinned(h.Ref), "predicate": "supports", "to": unpinned(h2.Ref)}},
		{"evidence that does not exist", "LinkTargetMissing", "", map[string]any{"from": unpinned(h.Ref), "predicate": "supports", "to": unpinned(h2.Ref), "evidence": []string{"paper:PMID:999"}}},
		{"malformed target", "ValidationFailed", "to", map[string]any{"from": unpinned(h.Ref), "predicate": "related_to", "to": "not a ref"}},
	}
	for _, c := range cases {
		r := link(c.in)
		if r.Typename != c.typename {
			t.Errorf("%s: %s %s", c.name, r.Typename, r.Message)
			continue
		}
		if c.path != "" && r.Problems[0].Path != c.path {
			t.Errorf("%s: path %s", c.name, r.Problems[0].Path)
		}
		if c.typename == "LinkTargetMissing" && (len(r.Missing) != 1 || !strings.Contains(r.Message, r.Missing[0])) {
			t.Errorf("%s: missing %v / %s", c.name, r.Missing, r.Message)
		}
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("refused links wrote: %v -> %v", before, after)
	}
	r = link(map[string]any{"from": unpinned(h.Ref), "predicate": "supports", "to": unpinned(h2.Ref), "evidence": []string{unpinned(p.Ref)}})
	if r.Typename != "WriteSuccess" || len(r.Link.Evidence) != 1 {
		t.Fatalf("claim with evidence: %+v", r)
	}

	// Links read back in both directions, filtered by predicate.
	var got struct {
		Out struct {
			Links struct {
				Edges []struct{ Node struct{ Predicate string } }
			}
		}
		In struct {
			Links struct {
				Edges []struct {
					Node struct {
						Predicate string
						From      struct{ ID string }
						Evidence  []string
						CreatedBy struct{ ID string }
					}
				}
			}
		}
	}
	env.OK(t, tok, `query($a: Ref!, $b: Ref!) { out: artifact(ref: $a) { links(predicates: ["supports"]) { edges { node { predicate } } } }
	  in: artifact(ref: $b) { links(direction: IN) { edges { node { predicate from { id } evidence createdBy { id } } } } } }`,
		map[string]any{"a": unpinned(h.Ref), "b": unpinned(h2.Ref)}, &got)
	if len(got.Out.Links.Edges) != 1 || got.Out.Links.Edges[0].Node.Predicate != "supports" {
		t.Errorf("out links: %+v", got.Out)
	}
	if len(got.In.Links.Edges) != 1 || got.In.Links.Edges[0].Node.From.ID != unpinned(h.Ref) || got.In.Links.Edges[0].Node.CreatedBy.ID != "ada" {
		t.Errorf("in links: %+v", got.In)
	}
}

func TestCite(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	h := createH(t, env, tok, map[string]any{"title": "h", "content": map[string]any{}})
	r := mutate(t, env, tok, "cite", "CiteInput", map[string]any{"ref": unpinned(h.Ref), "pmid": "23150908"})
	if r.Typename != "LinkTargetMissing" || len(r.Missing) != 1 || r.Missing[0] != "paper:PMID:23150908" {
		t.Fatalf("cite without the paper: %+v", r)
	}
	paper(t, env, tok, "23150908")
	r = mutate(t, env, tok, "cite", "CiteInput", map[string]any{"ref": unpinned(h.Ref), "pmid": "PMID:23150908", "claim": "risk", "span": "R47H"})
	if r.Typename != "WriteSuccess" || r.Link.Predicate != "cites" || r.Link.To.ID != "paper:PMID:23150908" {
		t.Fatalf("cite: %+v", r)
	}
	if r := mutate(t, env, tok, "cite", "CiteInput", map[string]any{"ref": unpinned(h.Ref), "pmid": "twelve"}); r.Typename != "ValidationFailed" || r.Problems[0].Path != "pmid" {
		t.Errorf("bad pmid: %+v", r)
	}
	var meta string
	if err := env.Pool.QueryRow(t.Context(), "SELECT metadata->>'claim' FROM links WHERE predicate = 'cites'").Scan(&meta); err != nil || meta != "risk" {
		t.Errorf("citation claim stored: %q %v", meta, err)
	}
}

// Every [PMID:n] in text must resolve to a paper; in shadow mode the refusal is
// only logged.
func TestPMIDValidatorAndShadowMode(t *testing.T) {
	for _, shadow := range []bool{false, true} {
		opts := apitest.Opts{}
		if shadow {
			opts.Store = func(o *store.Opts) { o.ShadowValidators = []string{"resolve_pmid_citations"} }
		}
		env := apitest.New(t, opts)
		tok := apitest.Contributor(t, "ada")
		paper(t, env, tok, "111")
		in := map[string]any{"type": "hypothesis", "title": "R47H [PMID:111]",
			"content": map[string]any{"mechanism": "lowers binding [PMID:111] and [PMID:424242]"}}
		r := mutate(t, env, tok, "createArtifact", "CreateArtifactInput", in)
		if !shadow {
			if r.Typename != "ValidationFailed" || len(r.Problems) != 1 || r.Problems[0].Path != "content.mechanism" ||
				r.Problems[0].Constraint != "resolve_pmid_citations" || !strings.Contains(r.Problems[0].Message, "PMID:424242") {
				t.Fatalf("unknown PMID: %+v", r)
			}
			continue
		}
		if r.Typename != "WriteSuccess" {
			t.Fatalf("shadow mode refused: %+v", r)
		}
		if !env.Log.Contains("shadow validator would refuse write") || !env.Log.Contains("PMID:424242") {
			t.Errorf("shadow refusal not logged:\n%s", env.Log.String())
		}
	}
}

// Content refs must name existing artifacts; evidence must resolve.
func TestContentReferenceValidators(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	r := mutate(t, env, tok, "createArtifact", "CreateArtifactInput", map[string]any{"type": "agent_work_packet", "title": "packet",
		"content": map[string]any{"instructions": "apply it", "status": "open", "skill": "skill:ghost"}})
	if r.Typename != "ValidationFailed" || r.Problems[0].Path != "content.skill" || r.Problems[0].Constraint != "link_targets_exist" {
		t.Errorf("a packet naming a missing skill: %+v", r)
	}
	r = mutate(t, env, tok, "createArtifact", "CreateArtifactInput", map[string]any{"type": "kg_edge", "title": "edge",
		"content": map[string]any{"subject": "TREM2", "predicate": "increases_risk_of", "object": "AD", "evidence": []string{"PMID:5"}}})
	if r.Typename != "ValidationFailed" || r.Problems[0].Path != "content.evidence[0]" || r.Problems[0].Constraint != "evidence_supports_claim" {
		t.Errorf("edge with missing evidence: %+v", r)
	}
}

func TestSupersede(t *testing.T) {
	env := apitest.New(t)
	ada := apitest.Contributor(t, "ada")
	grace := apitest.Contributor(t, "grace")
	a1 := mustWrite(t, env, ada, "createArtifact", "CreateArtifactInput", map[string]any{"type": "analysis", "title": "v1", "content": map[string]any{"question": "q?"}})
	a2 := mustWrite(t, env, ada, "createArtifact", "CreateArtifactInput", map[string]any{"type": "analysis", "title": "v2", "content": map[string]any{"question": "q?", "summary": "better"}})
	h := createH(t, env, ada, map[string]any{"title": "h", "content": map[string]any{}})
	sup := func(tok string, in map[string]any) result {
		return mutate(t, env, tok, "supersedeArtifact", "SupersedeArtifactInput", in)
	}
	before := env.Counts(t)
	for name, c := range map[string]struct {
		tok, typename string
		in            map[string]any
	}{
		"self":             {ada, "ValidationFailed", map[string]any{"ref": unpinned(a1.Ref), "replacement": unpinned(a1.Ref), "reason": "x"}},
		"other type":       {ada, "ValidationFailed", map[string]any{"ref": unpinned(a1.Ref), "replacement": unpinned(h.Ref), "reason": "x"}},
		"no reason":        {ada, "ValidationFailed", map[string]any{"ref": unpinned(a1.Ref), "replacement": unpinned(a2.Ref), "reason": " "}},
		"missing":          {ada, "NotFound", map[string]any{"ref": "analysis:ghost", "replacement": unpinned(a2.Ref), "reason": "x"}},
		"missing replacer": {ada, "ValidationFailed", map[string]any{"ref": unpinned(a1.Ref), "replacement": "analysis:ghost", "reason": "x"}},
		"not the creator":  {grace, "PermissionDenied", map[string]any{"ref": unpinned(a1.Ref), "replacement": unpinned(a2.Ref), "reason": "x"}},
	} {
		if r := sup(c.tok, c.in); r.Typename != c.typename {
			t.Errorf("%s: %s %s", name, r.Typename, r.Message)
		}
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("refused supersedes wrote: %v -> %v", before, after)
	}
	r := sup(ada, map[string]any{"ref": unpinned(a1.Ref), "replacement": unpinned(a2.Ref), "reason": "the summary was wrong"})
	if r.Typename != "WriteSuccess" {
		t.Fatalf("supersede: %+v", r)
	}
	var got struct {
		Artifact struct {
			IsLatest     bool
			SupersededBy *string
		}
		Artifacts struct{ TotalCount int }
	}
	env.OK(t, ada, `query($r: Ref!) { artifact(ref: $r) { isLatest supersededBy } artifacts(type: "analysis") { totalCount } }`, map[string]any{"r": unpinned(a1.Ref)}, &got)
	if got.Artifact.IsLatest || got.Artifact.SupersededBy == nil || *got.Artifact.SupersededBy != unpinned(a2.Ref) || got.Artifacts.TotalCount != 1 {
		t.Errorf("after supersede: %+v", got)
	}
	if r := sup(ada, map[string]any{"ref": unpinned(a1.Ref), "replacement": unpinned(a2.Ref), "reason": "again"}); r.Typename != "ValidationFailed" {
		t.Errorf("second supersede: %+v", r)
	}
	if r := update(t, env, ada, map[string]any{"ref": unpinned(a1.Ref), "baseContentHash": a1.ContentHash, "lifecycleState": "final"}); r.Typename != "MutabilityViolation" || !strings.Contains(r.Message, "superseded") {
		t.Errorf("update of a superseded artifact: %+v", r)
	}
	// A reviewer may supersede what others wrote.
	reviewer := apitest.Token(t, "rosalind", auth.PermReviewer)
	if r := sup(reviewer, map[string]any{"ref": unpinned(h.Ref), "reason": "withdrawn"}); r.Typename != "WriteSuccess" {
		t.Errorf("reviewer retiring: %+v", r)
	}
	if n := env.Count(t, "events WHERE event_type = 'artifact.superseded'"); n != 2 {
		t.Errorf("%d artifact.superseded events, want 2", n)
	}
}
