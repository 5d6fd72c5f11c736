package resolvers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/internal/store"
)

// Lookahead. A resolver that has read some artifacts looks at what the query asks
// of them, level by level (links and comments, and links of links), and loads it
// for all of them at once: one statement per level of nesting for the
// connections, then one for all the signals and one for all the actors met on the
// way. It primes the request's loaders with the results, so the per-node
// resolvers that run afterwards find their data loaded. The number of statements
// then depends on the shape of the query, not on how many nodes it returns, nor on
// goroutine timing the way a loader's batching window does.

// fieldsNamed returns every field called name in set, through inline fragments
// and fragment spreads.
func fieldsNamed(ctx context.Context, set ast.SelectionSet, name string) []*ast.Field {
	var frags ast.FragmentDefinitionList
	if oc := graphql.GetOperationContext(ctx); oc != nil && oc.Doc != nil {
		frags = oc.Doc.Fragments
	}
	var out []*ast.Field
	var walk func(ast.SelectionSet, int)
	walk = func(s ast.SelectionSet, depth int) {
		if depth > 8 {
			return
		}
		for _, sel := range s {
			switch x := sel.(type) {
			case *ast.Field:
				if x.Name == name {
					out = append(out, x)
				}
			case *ast.InlineFragment:
				walk(x.SelectionSet, depth+1)
			case *ast.FragmentSpread:
				if f := frags.ForName(x.Name); f != nil {
					walk(f.SelectionSet, depth+1)
				}
			}
		}
	}
	walk(set, 0)
	return out
}

// envelopeFields are the fields of an artifact that read no content: its
// columns besides content, and what is loaded by its pk (links, signals…).
var envelopeFields = map[string]bool{
	"__typename": true, "id": true, "ref": true, "type": true, "artifactId": true, "title": true,
	"contentHash": true, "storedSchemaVersion": true, "revision": true, "createdAt": true, "updatedAt": true,
	"createdBy": true, "updatedBy": true, "isLatest": true, "supersededBy": true, "lifecycleState": true,
	"qualityScore": true, "provenance": true, "links": true, "signals": true, "history": true, "comments": true,
}

// briefSelection reports whether set, a selection of artifacts, reads
// nothing of their content: every field it selects, through fragments of any
// type, is an envelope field.
func briefSelection(ctx context.Context, set ast.SelectionSet) bool {
	var frags ast.FragmentDefinitionList
	if oc := graphql.GetOperationContext(ctx); oc != nil && oc.Doc != nil {
		frags = oc.Doc.Fragments
	}
	var brief func(ast.SelectionSet, int) bool
	brief = func(s ast.SelectionSet, depth int) bool {
		if depth > 8 {
			return false
		}
		for _, sel := range s {
			switch x := sel.(type) {
			case *ast.Field:
				if !envelopeFields[x.Name] {
					return false
				}
			case *ast.InlineFragment:
				if !brief(x.SelectionSet, depth+1) {
					return false
				}
			case *ast.FragmentSpread:
				f := frags.ForName(x.Name)
				if f == nil || !brief(f.SelectionSet, depth+1) {
					return false
				}
			}
		}
		return true
	}
	return brief(set, 0)
}

// briefLinks is q for a links field whose selection is sel: brief when the
// targets' selection reads no content (out links only; the store ignores
// Brief for the others). The lookahead and the field's resolver both ask it,
// so they agree on the loader.
func briefLinks(ctx context.Context, q store.LinkQuery, sel ast.SelectionSet) store.LinkQuery {
	q.Brief = q.Direction == store.DirOut && briefSelection(ctx, path(ctx, sel, "edges", "node", "to"))
	return q
}

// childSelections returns the selections under every field called name in set.
func childSelections(ctx context.Context, set ast.SelectionSet, name string) ast.SelectionSet {
	var out ast.SelectionSet
	for _, f := range fieldsNamed(ctx, set, name) {
		out = append(out, f.SelectionSet...)
	}
	return out
}

// path follows field names down from set.
func path(ctx context.Context, set ast.SelectionSet, names ...string) ast.SelectionSet {
	for _, n := range names {
		set = childSelections(ctx, set, n)
	}
	return set
}

// asks reports whether set selects the field name.
func asks(ctx context.Context, set ast.SelectionSet, name string) bool {
	return len(fieldsNamed(ctx, set, name)) > 0
}

// selection is the selection set of the field being resolved.
func selection(ctx context.Context) ast.SelectionSet {
	if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Field.Field != nil {
		return fc.Field.Selections
	}
	return nil
}

// wanted collects, across the levels of a lookahead, what is to be loaded in bulk.
type wanted struct {
	signals, calibration map[int64]bool
	actors               map[string]bool
	// forecasters: the calibration points' forecasters are asked for, so the
	// voters of the calibration history join the actors.
	forecasters bool
	// deliveries: messages whose delivery to the request's actor is asked for.
	deliveries map[int64]bool
	// stamps: artifacts whose provenance is asked for (its produced_by steps
	// come from their stamps); stampActors: and the steps' actors.
	stamps      map[int64]bool
	stampActors bool
	// toolUsage: tools (by name, their id) whose usage is asked for.
	toolUsage map[string]bool
}

func newWanted() *wanted {
	return &wanted{signals: map[int64]bool{}, calibration: map[int64]bool{}, actors: map[string]bool{}, deliveries: map[int64]bool{},
		stamps: map[int64]bool{}, toolUsage: map[string]bool{}}
}

// prefetch loads what sel asks of arts (and, through links and comments, of the
// artifacts they reach) and primes the loaders with it.
func (r *Resolver) prefetch(ctx context.Context, arts []*store.Artifact, sel ast.SelectionSet) error {
	if len(arts) == 0 || len(sel) == 0 {
		return nil
	}
	w := newWanted()
	if err := r.walk(ctx, w, arts, sel, 0); err != nil {
		return err
	}
	return r.loaders(ctx).fill(ctx, w)
}

// walk records what sel asks of arts and follows links and comments down.
func (r *Resolver) walk(ctx context.Context, w *wanted, arts []*store.Artifact, sel ast.SelectionSet, depth int) error {
	if len(arts) == 0 || depth > 4 {
		return nil
	}
	ld := r.loaders(ctx)
	pks := make([]int64, 0, len(arts))
	for _, a := range arts {
		if a.Current {
			ld.primeArtifact(a)
		}
		pks = append(pks, a.PK)
	}
	if asks(ctx, sel, "signals") {
		sig := childSelections(ctx, sel, "signals")
		for _, pk := range pks {
			w.signals[pk] = true
		}
		if asks(ctx, sig, "calibration") || asks(ctx, sig, "brierScore") {
			for _, pk := range pks {
				w.calibration[pk] = true
			}
			if asks(ctx, childSelections(ctx, sig, "calibration"), "forecaster") {
				w.forecasters = true
			}
		}
	}
	if asks(ctx, sel, "delivery") {
		// Only what has deliveries (a participants-only artifact) can have one
		// for the caller; the rest need no lookup.
		for _, a := range arts {
			if a.Visibility == schema.ReadParticipants {
				w.deliveries[a.PK] = true
			}
		}
	}
	if asks(ctx, sel, "provenance") {
		for _, pk := range pks {
			w.stamps[pk] = true
		}
	}
	if asks(ctx, sel, "usage") {
		for _, a := range arts {
			if a.Type == "tool" {
				w.toolUsage[a.ID] = true
			}
		}
	}
	if asks(ctx, childSelections(ctx, sel, "provenance"), "actor") {
		w.stampActors = true
		for _, a := range arts {
			var steps []store.ProvenanceStep
			if json.Unmarshal(a.Provenance, &steps) != nil {
				continue // the provenance resolver reports it
			}
			for _, st := range steps {
				w.actors[st.ActorID] = true
			}
		}
	}
	for _, name := range []string{"createdBy", "updatedBy"} {
		if asks(ctx, sel, name) {
			for _, a := range arts {
				if name == "createdBy" {
					w.actors[a.CreatedBy] = true
				} else {
					w.actors[a.UpdatedBy] = true
				}
			}
		}
	}
	vars := map[string]any{}
	if oc := graphql.GetOperationContext(ctx); oc != nil {
		vars = oc.Variables
	}
	for _, f := range fieldsNamed(ctx, sel, "links") {
		q, err := linkQueryFromArgs(f.ArgumentMap(vars), false)
		if err != nil {
			continue // the resolver reports bad arguments itself
		}
		if err := r.walkLinks(ctx, w, pks, briefLinks(ctx, q, f.SelectionSet), f.SelectionSet, depth, false); err != nil {
			return err
		}
	}
	for _, f := range fieldsNamed(ctx, sel, "comments") {
		q, err := linkQueryFromArgs(f.ArgumentMap(vars), true)
		if err != nil {
			continue
		}
		if err := r.walkLinks(ctx, w, pks, q, f.SelectionSet, depth, true); err != nil {
			return err
		}
	}
	return nil
}

// walkLinks loads one page of links (or comments) for all pks, primes the links
// loader, and goes on to the artifacts at the links' other ends.
func (r *Resolver) walkLinks(ctx context.Context, w *wanted, pks []int64, q store.LinkQuery, sel ast.SelectionSet, depth int, comments bool) error {
	ld := r.loaders(ctx)
	missing := ld.unprimedLinks(q, pks)
	if len(missing) > 0 {
		links, err := r.Store.LinksFor(ctx, missing, q)
		if err != nil {
			return err
		}
		ld.primeLinks(q, missing, links)
	}
	var others []*store.Artifact
	node := path(ctx, sel, "edges", "node")
	creators := !comments && asks(ctx, node, "createdBy")
	for _, pk := range pks {
		links, _ := ld.Links(ctx, pk, q) // primed: answers from the cache
		for _, l := range links {
			if l.Other != nil {
				others = append(others, l.Other)
			}
			if creators {
				w.actors[l.CreatedBy] = true
			}
		}
	}
	next := node
	if !comments {
		next = append(path(ctx, node, "to"), path(ctx, node, "from")...)
	}
	return r.walk(ctx, w, others, next, depth+1)
}

// linkQueryFromArgs turns the arguments of a links or comments field into the
// query its resolver will ask the links loader, so the two agree on the key.
func linkQueryFromArgs(args map[string]any, comments bool) (store.LinkQuery, error) {
	n := store.DefaultPageSize
	if v, ok := args["first"]; ok && v != nil {
		switch x := v.(type) {
		case int64:
			n = int(x)
		case int:
			n = x
		case float64:
			n = int(x)
		default:
			return store.LinkQuery{}, fmt.Errorf("first: %T", v)
		}
	}
	if n < 0 || n > store.MaxPageSize {
		return store.LinkQuery{}, fmt.Errorf("first out of range")
	}
	var after *string
	if v, ok := args["after"].(string); ok {
		after = &v
	}
	afterPK, err := decodePK(after, "after")
	if err != nil {
		return store.LinkQuery{}, err
	}
	if comments {
		return store.LinkQuery{Direction: store.DirIn, Predicates: []string{"comments_on"}, Limit: n + 1, AfterPK: afterPK}, nil
	}
	dir := store.DirOut
	if v, ok := args["direction"].(string); ok {
		dir = v
	}
	var preds []string
	if list, ok := args["predicates"].([]any); ok {
		for _, p := range list {
			if s, ok := p.(string); ok {
				preds = append(preds, s)
			}
		}
	}
	return store.LinkQuery{Direction: dir, Predicates: preds, Limit: n + 1, AfterPK: afterPK}, nil
}

// prefetchLinks does for a page of links what prefetch does for artifacts: the
// links' creators, their other ends and what is asked of those.
func (r *Resolver) prefetchLinks(ctx context.Context, links []store.Link, sel ast.SelectionSet) error {
	node := path(ctx, sel, "edges", "node")
	if len(links) == 0 || len(node) == 0 {
		return nil
	}
	w := newWanted()
	creators := asks(ctx, node, "createdBy")
	var others []*store.Artifact
	for _, l := range links {
		if l.Other != nil {
			others = append(others, l.Other)
		}
		if creators {
			w.actors[l.CreatedBy] = true
		}
	}
	if err := r.walk(ctx, w, others, append(path(ctx, node, "to"), path(ctx, node, "from")...), 1); err != nil {
		return err
	}
	return r.loaders(ctx).fill(ctx, w)
}
