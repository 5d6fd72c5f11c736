package server_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
)

type listPage struct {
	Artifacts struct {
		TotalCount int
		Edges      []struct {
			Cursor string
			Node   struct {
				ArtifactID, Title string
				Content           map[string]any
			}
		}
		PageInfo struct {
			HasNextPage, HasPreviousPage bool
			EndCursor                    *string
		}
	}
}

const listQuery = `query($type: String!, $filter: JSON, $order: ArtifactOrder, $first: Int, $after: Cursor) {
  artifacts(type: $type, filter: $filter, orderBy: $order, first: $first, after: $after) {
    totalCount
    edges { cursor node { artifactId title content } }
    pageInfo { hasNextPage hasPreviousPage endCursor }
  }
}`

func seedHypotheses(t *testing.T, env *apitest.Env, tok string, n int) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		res := create(t, env, tok, map[string]any{"type": "hypothesis", "id": fmt.Sprintf("h%02d", i),
			"title":   fmt.Sprintf("Hypothesis %02d", (i*7)%n), // titles in another order than creation
			"content": map[string]any{"target_gene": []string{"TREM2", "APOE", "CD33"}[i%3], "confidence": float64(i) / float64(n)}}).CreateArtifact
		if res.Typename != "WriteSuccess" {
			t.Fatalf("seed: %+v", res)
		}
		ids = append(ids, fmt.Sprintf("h%02d", i))
	}
	return ids
}

// Paging forwards through every order returns each artifact exactly once, in order.
func TestArtifactsPagingVisitsEachOnce(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	ids := seedHypotheses(t, env, tok, 23)
	orders := []map[string]any{
		nil,
		{"field": "CREATED_AT", "direction": "ASC"},
		{"field": "TITLE", "direction": "ASC"},
		{"field": "TITLE", "direction": "DESC"},
		{"field": "UPDATED_AT", "direction": "DESC"},
		{"field": "QUALITY_SCORE", "direction": "ASC"},
	}
	for _, order := range orders {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			seen := map[string]int{}
			var titles []string
			var after any
			pages := 0
			for {
				var p listPage
				env.OK(t, tok, listQuery, map[string]any{"type": "hypothesis", "order": order, "first": 5, "after": after}, &p)
				pages++
				if p.Artifacts.TotalCount != len(ids) {
					t.Fatalf("totalCount %d, want %d", p.Artifacts.TotalCount, len(ids))
				}
				for _, e := range p.Artifacts.Edges {
					seen[e.Node.ArtifactID]++
					titles = append(titles, e.Node.Title)
				}
				if !p.Artifacts.PageInfo.HasNextPage {
					break
				}
				after = *p.Artifacts.PageInfo.EndCursor
				if pages > 10 {
					t.Fatal("paging does not end")
				}
			}
			if len(seen) != len(ids) {
				t.Fatalf("saw %d distinct artifacts, want %d", len(seen), len(ids))
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("%s seen %d times", id, n)
				}
			}
			if pages != 5 {
				t.Errorf("%d pages of 5 for 23 artifacts, want 5", pages)
			}
			if order != nil && order["field"] == "TITLE" {
				want := append([]string{}, titles...)
				sort.Strings(want)
				if order["direction"] == "DESC" {
					sort.Sort(sort.Reverse(sort.StringSlice(want)))
				}
				if fmt.Sprint(want) != fmt.Sprint(titles) {
					t.Errorf("titles out of order: %v", titles)
				}
			}
		})
	}
	// A cursor from one order is refused in another.
	var p listPage
	env.OK(t, tok, listQuery, map[string]any{"type": "hypothesis", "first": 2}, &p)
	r := env.Post(t, tok, listQuery, map[string]any{"type": "hypothesis", "first": 2, "after": *p.Artifacts.PageInfo.EndCursor,
		"order": map[string]any{"field": "TITLE", "direction": "ASC"}})
	if len(r.Errors) == 0 || r.Errors[0].Code() != "VALIDATION_FAILED" {
		t.Errorf("cursor reuse across orders: %s", r.Raw)
	}
}

// The JSON filter language over envelope fields and content paths.
func TestArtifactsFilter(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	seedHypotheses(t, env, tok, 12) // target genes cycle TREM2, APOE, CD33; confidence i/12
	other := apitest.Contributor(t, "grace")
	create(t, env, other, map[string]any{"type": "hypothesis", "id": "g1", "title": "Grace's", "content": map[string]any{"target_gene": "TREM2", "tags": []string{"microglia", "lipid"}}})
	cases := []struct {
		name   string
		filter any
		want   int
	}{
		{"equality shorthand", map[string]any{"content.target_gene": "TREM2"}, 5},
		{"nested form", map[string]any{"content": map[string]any{"target_gene": "APOE"}}, 4},
		{"in", map[string]any{"content.target_gene": map[string]any{"in": []string{"APOE", "CD33"}}}, 8},
		{"nin", map[string]any{"content.target_gene": map[string]any{"nin": []string{"APOE", "CD33"}}}, 5},
		{"range", map[string]any{"content.confidence": map[string]any{"gte": 0.5, "lt": 0.75}}, 3},
		{"exists", map[string]any{"content.tags": map[string]any{"exists": true}}, 1},
		{"not exists", map[string]any{"content.tags": map[string]any{"exists": false}}, 12},
		{"contains", map[string]any{"content.tags": map[string]any{"contains": []string{"lipid"}}}, 1},
		{"envelope createdBy", map[string]any{"createdBy": "grace"}, 1},
		{"title match", map[string]any{"title": map[string]any{"match": "hypothesis 0"}}, 10},
		{"or", map[string]any{"or": []any{map[string]any{"createdBy": "grace"}, map[string]any{"id": "h03"}}}, 2},
		{"not", map[string]any{"not": map[string]any{"content.target_gene": "TREM2"}}, 8},
		{"and of ranges on time", map[string]any{"createdAt": map[string]any{"gte": "2000-01-01", "lt": "2999-01-01T00:00:00Z"}}, 13},
		{"array index path", map[string]any{"content.tags[0]": "microglia"}, 1},
		{"no match", map[string]any{"content.target_gene": "BRCA1"}, 0},
	}
	for _, c := range cases {
		var p listPage
		env.OK(t, tok, listQuery, map[string]any{"type": "hypothesis", "filter": c.filter, "first": 100}, &p)
		if len(p.Artifacts.Edges) != c.want || p.Artifacts.TotalCount != c.want {
			t.Errorf("%s: %d edges, totalCount %d, want %d", c.name, len(p.Artifacts.Edges), p.Artifacts.TotalCount, c.want)
		}
	}
}
