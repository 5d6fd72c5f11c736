package resolvers

import (
	"time"

	"github.com/scidex/substrate/graph"
	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/store"
)

// The prices of the cost model. Every field costs 1 unless priced here; a list
// costs 1 plus its items times what one item costs, so the same nested
// selection costs the same per artifact whichever root reaches it
// (internal/server/cost_test.go checks both this and that no list or JSON
// field is left at the default).
const (
	// JSONWeight is the price of a JSON value (content, a schema document, a
	// payload, a patch, a JSON content field): a document of up to the content
	// size limit, not a word. With it, 500 aliases of `schemas { document }`
	// (56 MB) cost 500 × (1 + 50 × 10) and are refused; so do 500 aliases of
	// `schemas { type }`, which load the same documents.
	JSONWeight = 10
	// unpagedItems is how many items a list without a page argument is priced
	// at: provenance steps, signal aggregates, forecasts, diff operations,
	// validation problems, the strings of a content field.
	unpagedItems = store.DefaultPageSize
	// fewItems is how many items a short list of scalars is priced at: an
	// actor's permissions, a delegation chain, a link's evidence, warnings.
	fewItems = 5
	// schemaItems is how many schema documents `schemas` is priced at: the 21
	// default types and room for those registered at run time.
	schemaItems = 50
	// diffWeight is the price of one diff on top of its selection: it loads two
	// versions and computes a JSON patch and a line diff of every text field,
	// megabytes for large contents, all held until the response is written.
	diffWeight = 1000
	// defaultPollLimit is poll's limit when absent (the schema's default).
	defaultPollLimit = 100
)

// Complexity returns the cost model of the schema: every field costs 1, a JSON
// value JSONWeight, and a list its page size times what each item costs.
func Complexity() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	setArtifactComplexity(&c)

	c.Query.Artifacts = func(child int, _ string, _ model.JSON, _ *model.ArtifactOrder, first *int, after *string) int {
		return pageCost(child, first, after)
	}
	c.Query.Search = func(child int, _ string, _ []string, _ *model.SearchMode, _ model.JSON, first *int, after *string) int {
		return pageCost(child, first, after)
	}
	c.Query.Skills = func(child int, _ *string, first *int, after *string) int {
		return pageCost(child, first, after)
	}
	c.Query.Tools = func(child int, _, _, _ *string, first *int, after *string) int {
		return pageCost(child, first, after)
	}
	c.Query.WorkPackets = func(child int, _ *model.AgentWorkPacketStatus, first *int, after *string) int {
		return pageCost(child, first, after)
	}
	c.Query.Mailbox = func(child int, _ *model.AckStatus, first *int, after *string, _ *bool) int {
		return pageCost(child, first, after)
	}
	c.Query.Poll = func(child int, _ *string, _ []string, _ model.JSON, _ *string, _ *model.LogStart, limit *int, _ *bool) int {
		n := defaultPollLimit
		if limit != nil {
			n = min(max(*limit, 0), event.MaxPollLimit)
		}
		return listCost(child, n)
	}
	// A schema document is loaded whole whatever the selection asks of it.
	c.Query.Leaderboard = func(child int, _, _ string, first *int, after *string, _ *time.Time) int {
		return pageCost(child, first, after)
	}
	c.Query.Schemas = func(child int) int { return listCost(max(child, JSONWeight), schemaItems) }
	c.Query.Diff = func(child int, _, _ string) int { return diffWeight + child }
	c.Message.Replies = pageCost
	c.Actor.Produced = func(child int, _ *string, first *int, after *string) int { return pageCost(child, first, after) }
	c.Mutation.Batch = func(child int, in model.BatchInput) int { return listCost(child, max(len(in.Writes), 1)) }

	// Lists without a page argument.
	c.SignalSummary.Kinds = unpagedListCost
	c.SignalSummary.Calibration = unpagedListCost
	c.BrierTrace.Points = unpagedListCost
	c.ArtifactDiff.TextDiffs = unpagedListCost
	c.TextFieldDiff.Ops = unpagedListCost
	c.ValidationFailed.Problems = unpagedListCost
	c.Consumer.DeadLetters = func(child int) int { return listCost(child, event.MaxDeadLettersListed) }
	c.Actor.Permissions = fewItemsCost
	c.ProvenanceStep.DelegationChain = fewItemsCost
	c.ProvenanceStep.Delegation = fewItemsCost
	c.ProvenanceStep.Stamps = fewItemsCost
	c.Link.Evidence = fewItemsCost
	c.WriteSuccess.Warnings = fewItemsCost
	c.LifecycleViolation.AllowedTransitions = fewItemsCost
	c.LinkTargetMissing.Missing = fewItemsCost
	c.MergeHint.ConflictingPaths = fewItemsCost

	// JSON values outside artifacts.
	c.SchemaDoc.Document = jsonCost
	c.Event.Payload = jsonCost
	c.ToolCallEvent.Payload = jsonCost
	c.ArtifactDiff.Patch = jsonCost
	c.VersionConflict.DiffFromYourBase = jsonCost
	c.MergeHint.MergedContent = jsonCost
	c.ValidationProblem.ValueReceived = jsonCost
	c.Leaderboard.Parameters = jsonCost
	return c
}

// pageCost prices a paged list: first items (the default page when absent, at
// most a full page: a larger first is refused by the resolver with the range).
func pageCost(child int, first *int, _ *string) int {
	n := store.DefaultPageSize
	if first != nil {
		n = min(max(*first, 0), store.MaxPageSize)
	}
	return listCost(child, n)
}

func linksCost(child int, _ *model.LinkDirection, _ []string, first *int, after *string) int {
	return pageCost(child, first, after)
}

// listCost is 1 for the list and n times an item, an item costing at least 1
// even when it is a scalar.
func listCost(child, n int) int {
	return 1 + n*max(child, 1)
}

func unpagedListCost(child int) int { return listCost(child, unpagedItems) }

func fewItemsCost(child int) int { return listCost(child, fewItems) }

func jsonCost(int) int { return JSONWeight }
