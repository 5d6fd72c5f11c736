package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
)

type searchOut struct {
	Search struct {
		Mode, ModeUsed string
		FellBack       bool
		Notice         *string
		Edges          []struct {
			Cursor string
			Node   struct {
				Score                     float64
				Highlight, TitleHighlight *string
				Artifact                  struct{ ArtifactID, Title, Type string }
			}
		}
		PageInfo struct {
			HasNextPage bool
			EndCursor   *string
		}
	}
}

const searchQ = `query($q: String!, $types: [String!], $mode: SearchMode, $filter: JSON, $first: Int, $after: Cursor) {
  search(query: $q, types: $types, mode: $mode, filter: $filter, first: $first, after: $after) {
    mode modeUsed fellBack notice
    edges { cursor node { score highlight titleHighlight artifact { artifactId title type } } }
    pageInfo { hasNextPage endCursor }
  }
}`

func search(t *testing.T, env *apitest.Env, tok string, vars map[string]any) searchOut {
	t.Helper()
	var out searchOut
	env.OK(t, tok, searchQ, vars, &out)
	return out
}

func TestSearchRelevanceHighlightsAndFreshness(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	createH(t, env, tok, map[string]any{"id": "mention", "title": "Lipid handling in astrocytes",
		"content": map[string]any{"mechanism": "Astrocytes pass lipids to microglia, where TREM2 senses them."}})
	createH(t, env, tok, map[string]any{"id": "titled", "title": "TREM2 variants impair microglial phagocytosis",
		"content": map[string]any{"mechanism": "R47H lowers ligand binding."}})
	createH(t, env, tok, map[string]any{"id": "unrelated", "title": "APOE4 and tau spreading", "content": map[string]any{"mechanism": "Unrelated."}})

	// Created a moment ago, found at once; the title match ranks first.
	// (Among hypotheses: the verbs' tool manifests installed at start
	// mention TREM2 in their examples.)
	out := search(t, env, tok, map[string]any{"q": "TREM2", "types": []string{"hypothesis"}})
	s := out.Search
	if s.ModeUsed != "LEXICAL" || s.FellBack || len(s.Edges) != 2 {
		t.Fatalf("search TREM2: %+v", s)
	}
	if s.Edges[0].Node.Artifact.ArtifactID != "titled" || s.Edges[1].Node.Artifact.ArtifactID != "mention" || s.Edges[0].Node.Score <= s.Edges[1].Node.Score {
		t.Errorf("ranking: %+v", s.Edges)
	}
	if h := s.Edges[0].Node.TitleHighlight; h == nil || !strings.Contains(*h, "<mark>TREM2</mark>") {
		t.Errorf("title highlight %v", h)
	}
	if h := s.Edges[1].Node.Highlight; h == nil || !strings.Contains(*h, "<mark>TREM2</mark>") {
		t.Errorf("content highlight %v", h)
	}
	// Stemming: "phagocytic" finds "phagocytosis"? No; but "variant" finds "variants".
	if out := search(t, env, tok, map[string]any{"q": "variant"}); len(out.Search.Edges) != 1 || out.Search.Edges[0].Node.Artifact.ArtifactID != "titled" {
		t.Errorf("stemmed search: %+v", out.Search.Edges)
	}
	// An update is searchable at once too, and the old words are gone.
	var got struct{ Artifact struct{ ContentHash string } }
	env.OK(t, tok, `{ artifact(ref: "hypothesis:unrelated") { contentHash } }`, nil, &got)
	update(t, env, tok, map[string]any{"ref": "hypothesis:unrelated", "baseContentHash": got.Artifact.ContentHash, "title": "Clusterin and amyloid"})
	if out := search(t, env, tok, map[string]any{"q": "clusterin"}); len(out.Search.Edges) != 1 {
		t.Errorf("updated title not found: %+v", out.Search.Edges)
	}
	if out := search(t, env, tok, map[string]any{"q": "APOE4"}); len(out.Search.Edges) != 0 {
		t.Errorf("old title still found: %+v", out.Search.Edges)
	}
}

func TestSearchFallbacksAndModes(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	createH(t, env, tok, map[string]any{"id": "h1", "title": "Microglial phagocytosis of amyloid", "content": map[string]any{"target_gene": "TREM2"}})
	mustWrite(t, env, tok, "createArtifact", "CreateArtifactInput", map[string]any{"type": "knowledge_gap", "id": "g1", "title": "Why does amyloid accumulate?",
		"content": map[string]any{"description": "Clearance of amyloid by microglia is poorly understood."}})

	// A misspelling finds nothing lexically; AUTO falls back to trigram matching and says so.
	s := search(t, env, tok, map[string]any{"q": "phagocytossis"}).Search
	if s.ModeUsed != "FUZZY" || !s.FellBack || s.Notice == nil || len(s.Edges) == 0 || s.Edges[0].Node.Artifact.ArtifactID != "h1" {
		t.Errorf("misspelling: %+v", s)
	}
	// LEXICAL does not fall back.
	if s := search(t, env, tok, map[string]any{"q": "phagocytossis", "mode": "LEXICAL"}).Search; len(s.Edges) != 0 || s.FellBack {
		t.Errorf("lexical misspelling: %+v", s)
	}
	// SEMANTIC without an embedding backend runs lexically and says so.
	s = search(t, env, tok, map[string]any{"q": "amyloid", "mode": "SEMANTIC"}).Search
	if s.Mode != "SEMANTIC" || s.ModeUsed != "LEXICAL" || !s.FellBack || s.Notice == nil || !strings.Contains(*s.Notice, "embedding") || len(s.Edges) != 2 {
		t.Errorf("semantic fallback: %+v", s)
	}
	// types and filters narrow a search.
	if s := search(t, env, tok, map[string]any{"q": "amyloid", "types": []string{"knowledge_gap"}}).Search; len(s.Edges) != 1 || s.Edges[0].Node.Artifact.Type != "knowledge_gap" {
		t.Errorf("types: %+v", s.Edges)
	}
	if s := search(t, env, tok, map[string]any{"q": "amyloid", "filter": map[string]any{"content.target_gene": "TREM2"}}).Search; len(s.Edges) != 1 || s.Edges[0].Node.Artifact.ArtifactID != "h1" {
		t.Errorf("filter: %+v", s.Edges)
	}
	// STRUCTURED: the filter alone.
	if s := search(t, env, tok, map[string]any{"q": "", "mode": "STRUCTURED", "filter": map[string]any{"content.target_gene": "TREM2"}}).Search; s.ModeUsed != "STRUCTURED" || len(s.Edges) != 1 {
		t.Errorf("structured: %+v", s)
	}
	for name, vars := range map[string]map[string]any{
		"empty query":      {"q": "  "},
		"unknown type":     {"q": "x", "types": []string{"hypothesys"}},
		"bad filter":       {"q": "x", "filter": map[string]any{"colour": 1}},
		"structured alone": {"q": "", "mode": "STRUCTURED"},
		"bad cursor":       {"q": "x", "after": "nope"},
	} {
		r := env.Post(t, tok, searchQ, vars)
		if len(r.Errors) != 1 || r.Errors[0].Code() != "VALIDATION_FAILED" {
			t.Errorf("%s: %s", name, r.Raw)
		}
	}
}

// Paging visits each hit once, in order, and refuses a cursor from another query.
func TestSearchPagingIsStable(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	for i := 0; i < 13; i++ {
		// Different relevance: i mentions of the word.
		createH(t, env, tok, map[string]any{"id": fmt.Sprintf("h%02d", i), "title": fmt.Sprintf("Hypothesis %d", i),
			"content": map[string]any{"mechanism": strings.Repeat("microglia ", i+1)}})
	}
	seen := map[string]bool{}
	var order []string
	var after any
	for page := 0; ; page++ {
		s := search(t, env, tok, map[string]any{"q": "microglia", "first": 4, "after": after}).Search
		for _, e := range s.Edges {
			id := e.Node.Artifact.ArtifactID
			if seen[id] {
				t.Fatalf("%s seen twice", id)
			}
			seen[id] = true
			order = append(order, id)
		}
		if !s.PageInfo.HasNextPage {
			break
		}
		after = *s.PageInfo.EndCursor
		if page > 5 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 13 {
		t.Fatalf("%d hits over all pages, want 13", len(seen))
	}
	if order[0] != "h12" {
		t.Errorf("most mentions should rank first: %v", order)
	}
	first := search(t, env, tok, map[string]any{"q": "microglia", "first": 2}).Search
	r := env.Post(t, tok, searchQ, map[string]any{"q": "astrocytes", "first": 2, "after": *first.PageInfo.EndCursor})
	if len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message+stringify(r.Errors[0].Extensions), "another query") {
		t.Errorf("cursor of another query: %s", r.Raw)
	}
}
