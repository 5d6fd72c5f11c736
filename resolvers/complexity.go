package resolvers

import (
	"github.com/scidex/substrate/graph"
	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/store"
)

// Complexity returns the cost model of the schema: every field costs 1, and a
// list costs its page size times what each item costs.
func Complexity() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	setArtifactComplexity(&c)
	c.Query.Artifacts = func(child int, _ string, _ model.JSON, _ *model.ArtifactOrder, first *int, _ *string) int {
		return pageCost(child, first, nil)
	}
	return c
}

func pageCost(child int, first *int, _ *string) int {
	n := store.DefaultPageSize
	if first != nil && *first > 0 {
		n = *first
	}
	return 1 + n*child
}

func linksCost(child int, _ *model.LinkDirection, _ []string, first *int, after *string) int {
	return pageCost(child, first, after)
}
