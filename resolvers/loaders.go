package resolvers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vikstrous/dataloadgen"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// loaderWait is how long a loader collects keys before fetching. Sibling fields
// resolve concurrently within microseconds, so a short window batches them
// without adding visible latency.
const loaderWait = 500 * time.Microsecond

// Loaders batch the nested reads of one request, so the number of statements does
// not grow with the number of nodes returned.
type Loaders struct {
	s         *store.Store
	actors    *dataloadgen.Loader[string, *model.Actor]
	artifacts *dataloadgen.Loader[int64, *store.Artifact]
	signals   *dataloadgen.Loader[int64, []store.SignalFigures]
	calib     *dataloadgen.Loader[int64, []store.SignalPoint]
	// deliveries are the request's actor's deliveries of messages, by message pk.
	deliveries *dataloadgen.Loader[int64, *store.Delivery]
	// stamps are the provenance stamps on artifacts, by pk.
	stamps *dataloadgen.Loader[int64, []store.Stamp]
	// toolUsage is what the ledger says of tools' calls, by tool name.
	toolUsage *dataloadgen.Loader[string, dbsqlc.ToolUsageManyRow]

	mu    sync.Mutex
	links map[string]*dataloadgen.Loader[int64, []store.Link]
	// byRef are the current versions of artifacts read by unpinned ref ahead of
	// their resolvers (a poll page's events' artifacts); nil records one that is
	// absent or that the request's actor may not read.
	byRef map[string]*store.Artifact
	// primed records what a lookahead has loaded, so nothing is loaded twice
	// in a request.
	primed map[primeKey]bool
	// briefs are link targets read without their content (store.LinkQuery's
	// Brief), by pk: kept apart from artifacts, so that one never answers a
	// selection that reads content.
	briefs map[int64]*store.Artifact
}

// primeKey names one loaded thing: of kind "signals", "calibration" or
// "delivery" by pk, of kind "actor" by id, or a link query's page (kind:
// its linkKey) by pk.
type primeKey struct {
	kind string
	pk   int64
	id   string
}

type loadersKey struct{}

// NewLoaders returns fresh loaders for one request.
func NewLoaders(s *store.Store) *Loaders {
	l := &Loaders{s: s, links: map[string]*dataloadgen.Loader[int64, []store.Link]{}, byRef: map[string]*store.Artifact{},
		primed: map[primeKey]bool{}, briefs: map[int64]*store.Artifact{}}
	l.actors = dataloadgen.NewMappedLoader(l.fetchActors, dataloadgen.WithWait(loaderWait))
	l.artifacts = dataloadgen.NewMappedLoader(l.fetchArtifacts, dataloadgen.WithWait(loaderWait))
	l.signals = dataloadgen.NewMappedLoader(s.SignalsFor, dataloadgen.WithWait(loaderWait))
	l.deliveries = dataloadgen.NewMappedLoader(l.fetchDeliveries, dataloadgen.WithWait(loaderWait))
	l.stamps = dataloadgen.NewMappedLoader(s.StampsFor, dataloadgen.WithWait(loaderWait))
	l.toolUsage = dataloadgen.NewMappedLoader(l.fetchToolUsage, dataloadgen.WithWait(loaderWait))
	l.calib = dataloadgen.NewMappedLoader(func(ctx context.Context, pks []int64) (map[int64][]store.SignalPoint, error) {
		return s.SignalHistory(ctx, pks, "calibration")
	}, dataloadgen.WithWait(loaderWait))
	return l
}

// lazyLoaders makes a response's loaders when a resolver first asks for them:
// most subscription events (an envelope's scalar fields) need none, and
// making them for every event at every subscriber was a measurable part of
// the fan-out cost (bench/fanout).
type lazyLoaders struct {
	s    *store.Store
	once sync.Once
	l    *Loaders
}

func (z *lazyLoaders) get() *Loaders {
	z.once.Do(func() { z.l = NewLoaders(z.s) })
	return z.l
}

// Middleware gives every GraphQL response its own loaders: a query's or
// mutation's, and each event a subscription sends.
func Middleware(s *store.Store) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		return next(context.WithValue(ctx, loadersKey{}, &lazyLoaders{s: s}))
	}
}

func (r *Resolver) loaders(ctx context.Context) *Loaders {
	if z, ok := ctx.Value(loadersKey{}).(*lazyLoaders); ok {
		return z.get()
	}
	// Outside an operation (tests calling resolvers directly): no batching, still correct.
	return NewLoaders(r.Store)
}

func (l *Loaders) fetchActors(ctx context.Context, ids []string) (map[string]*model.Actor, error) {
	rows, err := l.s.Actors(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*model.Actor, len(ids))
	for _, r := range rows {
		out[r.ID] = actorModel(r)
	}
	for _, id := range ids {
		if out[id] == nil {
			// An actor we never recorded (e.g. seeded data): still a valid Actor.
			out[id] = &model.Actor{ID: id, Kind: "unknown", Permissions: []string{}}
		}
	}
	return out, nil
}

func actorModel(r store.Actor) *model.Actor {
	return &model.Actor{ID: r.ID, Kind: r.Kind, Permissions: r.Permissions, Handle: r.Handle}
}

func (l *Loaders) fetchArtifacts(ctx context.Context, pks []int64) (map[int64]*store.Artifact, error) {
	return l.s.GetManyByPK(ctx, pks)
}

// fetchDeliveries reads the request's actor's deliveries of the messages pks;
// a message without one is absent from the map.
func (l *Loaders) fetchDeliveries(ctx context.Context, pks []int64) (map[int64]*store.Delivery, error) {
	rc := request.From(ctx)
	if rc == nil {
		return map[int64]*store.Delivery{}, nil
	}
	ds, err := l.s.Deliveries(ctx, rc.Actor.ID, pks)
	out := make(map[int64]*store.Delivery, len(ds))
	for pk, d := range ds {
		out[pk] = &d
	}
	return out, err
}

// Links returns the links of one artifact for q, batched with every other
// artifact asking the same q in this request.
func (l *Loaders) Links(ctx context.Context, pk int64, q store.LinkQuery) ([]store.Link, error) {
	links, err := l.linkLoader(q).Load(ctx, pk)
	if err != nil && isMissing(err) {
		return nil, nil
	}
	return links, err
}

// linkLoader returns the loader for one link query, made on first use.
func (l *Loaders) linkLoader(q store.LinkQuery) *dataloadgen.Loader[int64, []store.Link] {
	l.mu.Lock()
	defer l.mu.Unlock()
	ld, ok := l.links[linkKey(q)]
	if !ok {
		fetch := func(ctx context.Context, pks []int64) (map[int64][]store.Link, error) {
			return l.s.LinksFor(ctx, pks, q)
		}
		ld = dataloadgen.NewMappedLoader(fetch, dataloadgen.WithWait(loaderWait))
		l.links[linkKey(q)] = ld
	}
	return ld
}

// linkKey names a LinkQuery: requests asking the same question share a loader.
func linkKey(q store.LinkQuery) string {
	return fmt.Sprintf("%s|%s|%d|%d|%t", q.Direction, strings.Join(q.Predicates, ","), q.Limit, q.AfterPK, q.Brief)
}

// primeArtifact records a current artifact a lookahead read: a brief one
// among the briefs, any other for the artifact loader.
func (l *Loaders) primeArtifact(a *store.Artifact) {
	if !a.Brief {
		l.artifacts.Prime(a.PK, a)
		return
	}
	l.mu.Lock()
	l.briefs[a.PK] = a
	l.mu.Unlock()
}

// ArtifactFor returns the current version of an artifact by pk for a
// selection: a brief one read ahead when the selection reads no content
// (briefSelection), else the whole artifact.
func (l *Loaders) ArtifactFor(ctx context.Context, pk int64, brief bool) (*store.Artifact, error) {
	if brief {
		l.mu.Lock()
		a := l.briefs[pk]
		l.mu.Unlock()
		if a != nil {
			return a, nil
		}
	}
	return l.Artifact(ctx, pk)
}

// Artifact returns the current version of an artifact by pk.
func (l *Loaders) Artifact(ctx context.Context, pk int64) (*store.Artifact, error) {
	a, err := l.artifacts.Load(ctx, pk)
	if err != nil && isMissing(err) {
		return nil, fmt.Errorf("artifact pk %d: %w", pk, store.ErrNotFound)
	}
	return a, err
}

// Actor returns an actor by id.
func (l *Loaders) Actor(ctx context.Context, id string) (*model.Actor, error) {
	return l.actors.Load(ctx, id)
}

// Signals returns the signal figures of an artifact.
func (l *Loaders) Signals(ctx context.Context, pk int64) ([]store.SignalFigures, error) {
	figs, err := l.signals.Load(ctx, pk)
	if err != nil && isMissing(err) {
		return nil, nil
	}
	return figs, err
}

// Stamps returns the provenance stamps on an artifact, oldest first.
func (l *Loaders) Stamps(ctx context.Context, pk int64) ([]store.Stamp, error) {
	st, err := l.stamps.Load(ctx, pk)
	if err != nil && isMissing(err) {
		return nil, nil
	}
	return st, err
}

// ToolUsage is what the ledger says of a tool's calls; a tool never called
// has a zero row (NaN where there is nothing to take a median or mean of).
func (l *Loaders) ToolUsage(ctx context.Context, name string) (dbsqlc.ToolUsageManyRow, error) {
	u, err := l.toolUsage.Load(ctx, name)
	if err != nil && isMissing(err) {
		return noUsage(name), nil
	}
	return u, err
}

// isMissing tells a mapped loader's "key not found" from a real failure.
func isMissing(err error) bool {
	return errors.Is(err, dataloadgen.ErrNotFound)
}

// Calibration returns the forecasts on an artifact, oldest first.
func (l *Loaders) Calibration(ctx context.Context, pk int64) ([]store.SignalPoint, error) {
	h, err := l.calib.Load(ctx, pk)
	if err != nil && isMissing(err) {
		return nil, nil
	}
	return h, err
}

// unprimed returns the pks of kind not loaded yet in this request.
func (l *Loaders) unprimed(kind string, pks []int64) []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int64
	for _, pk := range pks {
		if !l.primed[primeKey{kind: kind, pk: pk}] {
			out = append(out, pk)
		}
	}
	return out
}

// prime stores what was loaded for each of pks (nothing is an answer too) in
// ld, and records it as loaded.
func prime[V any](l *Loaders, kind string, ld *dataloadgen.Loader[int64, V], pks []int64, got map[int64]V) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, pk := range pks {
		ld.Prime(pk, got[pk])
		l.primed[primeKey{kind: kind, pk: pk}] = true
	}
}

// unprimedLinks returns the pks whose links for q have not been loaded yet.
func (l *Loaders) unprimedLinks(q store.LinkQuery, pks []int64) []int64 {
	return l.unprimed(linkKey(q), pks)
}

// primeLinks stores loaded links for q (an empty page too) in the links loader.
func (l *Loaders) primeLinks(q store.LinkQuery, pks []int64, links map[int64][]store.Link) {
	prime(l, linkKey(q), l.linkLoader(q), pks, links)
}

// fill loads in bulk what a lookahead found wanted and not yet loaded.
func (l *Loaders) fill(ctx context.Context, w *wanted) error {
	if sig := l.unprimed("signals", keys(w.signals)); len(sig) > 0 {
		figs, err := l.s.SignalsFor(ctx, sig)
		if err != nil {
			return err
		}
		prime(l, "signals", l.signals, sig, figs)
	}
	if cal := l.unprimed("calibration", keys(w.calibration)); len(cal) > 0 {
		hist, err := l.s.SignalHistory(ctx, cal, "calibration")
		if err != nil {
			return err
		}
		prime(l, "calibration", l.calib, cal, hist)
	}
	if del := l.unprimed("delivery", keys(w.deliveries)); len(del) > 0 {
		ds, err := l.fetchDeliveries(ctx, del)
		if err != nil {
			return err
		}
		prime(l, "delivery", l.deliveries, del, ds) // a message without one: nil
	}
	if st := l.unprimed("stamps", keys(w.stamps)); len(st) > 0 {
		got, err := l.s.StampsFor(ctx, st)
		if err != nil {
			return err
		}
		prime(l, "stamps", l.stamps, st, got) // an artifact without stamps: nil
	}
	if w.stampActors {
		for pk := range w.stamps {
			stamps, err := l.Stamps(ctx, pk) // primed, here or at an earlier level
			if err != nil {
				return err
			}
			for _, id := range stampActors(stamps) {
				w.actors[id] = true
			}
		}
	}
	if w.forecasters {
		for pk := range w.calibration {
			points, err := l.calib.Load(ctx, pk) // primed, here or at an earlier level
			if err != nil {
				return err
			}
			for _, p := range points {
				w.actors[p.Voter] = true
			}
		}
	}
	if err := l.fillToolUsage(ctx, w); err != nil {
		return err
	}
	l.mu.Lock()
	var ids []string
	for id := range w.actors {
		if !l.primed[primeKey{kind: "actor", id: id}] {
			ids = append(ids, id)
		}
	}
	l.mu.Unlock()
	if len(ids) > 0 {
		actors, err := l.fetchActors(ctx, ids)
		if err != nil {
			return err
		}
		l.mu.Lock()
		for id, a := range actors {
			l.actors.Prime(id, a)
			l.primed[primeKey{kind: "actor", id: id}] = true
		}
		l.mu.Unlock()
	}
	return nil
}

// fillToolUsage loads the usage of every wanted tool not loaded yet in one
// statement; a tool without calls is primed with its zero row.
func (l *Loaders) fillToolUsage(ctx context.Context, w *wanted) error {
	l.mu.Lock()
	var names []string
	for name := range w.toolUsage {
		if !l.primed[primeKey{kind: "usage", id: name}] {
			names = append(names, name)
		}
	}
	l.mu.Unlock()
	if len(names) == 0 {
		return nil
	}
	got, err := l.fetchToolUsage(ctx, names)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, name := range names {
		u, ok := got[name]
		if !ok {
			u = noUsage(name)
		}
		l.toolUsage.Prime(name, u)
		l.primed[primeKey{kind: "usage", id: name}] = true
	}
	return nil
}

func (l *Loaders) fetchToolUsage(ctx context.Context, names []string) (map[string]dbsqlc.ToolUsageManyRow, error) {
	rows, err := dbsqlc.New(l.s.Pool()).ToolUsageMany(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("usage of %d tools: %w", len(names), err)
	}
	out := make(map[string]dbsqlc.ToolUsageManyRow, len(rows))
	for _, r := range rows {
		out[r.Name] = r
	}
	return out, nil
}

func noUsage(name string) dbsqlc.ToolUsageManyRow {
	return dbsqlc.ToolUsageManyRow{Name: name, P50DurationMs: math.NaN(), MeanCostUsd: math.NaN()}
}

func keys[K comparable](set map[K]bool) []K {
	out := make([]K, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	return out
}

// primeDelivery records the request's actor's delivery of message pk (nil:
// none).
func (l *Loaders) primeDelivery(pk int64, d *store.Delivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deliveries.Prime(pk, d)
	l.primed[primeKey{kind: "delivery", pk: pk}] = true
}

// Delivery returns the request's actor's delivery of a message, nil if none.
func (l *Loaders) Delivery(ctx context.Context, pk int64) (*store.Delivery, error) {
	d, err := l.deliveries.Load(ctx, pk)
	if err != nil && isMissing(err) {
		return nil, nil
	}
	return d, err
}

// primeRefs reads the current versions of the artifacts that refs (unpinned)
// name and this request has not read by ref yet, in one statement, and returns
// those of refs that exist and the request's actor may read.
func (l *Loaders) primeRefs(ctx context.Context, refs []ref.Ref) ([]*store.Artifact, error) {
	l.mu.Lock()
	var missing []ref.Ref
	for _, rf := range refs {
		if _, ok := l.byRef[rf.String()]; !ok {
			missing = append(missing, rf)
		}
	}
	l.mu.Unlock()
	var got map[string]*store.Artifact
	if len(missing) > 0 {
		var err error
		if got, err = l.s.GetMany(ctx, missing); err != nil {
			return nil, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, rf := range missing {
		l.byRef[rf.String()] = got[rf.String()] // nil: absent, or not for this actor
	}
	out := make([]*store.Artifact, 0, len(refs))
	for _, rf := range refs {
		if a := l.byRef[rf.String()]; a != nil {
			out = append(out, a)
		}
	}
	return out, nil
}

// artifactByRef returns the artifact an unpinned ref names if primeRefs read it
// in this request (nil when absent or not readable), and whether it did.
func (l *Loaders) artifactByRef(unpinned string) (*store.Artifact, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.byRef[unpinned]
	return a, ok
}
