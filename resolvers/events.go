package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/ondemand"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
)

// closeTryAgainLater is the websocket close code (RFC 6455) for a subscriber that
// fell behind: a client should reconnect and resume from its cursor.
const closeTryAgainLater = 1013

func eventModel(e *event.Event) *model.Event {
	return &model.Event{ID: strconv.FormatInt(e.Cursor.ID, 10), Cursor: e.Cursor.String(), Type: e.Type, OccurredAt: e.OccurredAt,
		Source: e.Source, ActorID: e.ActorID, ActorKind: e.ActorKind, Ref: e.Ref, Payload: model.JSON(e.Payload), SchemaVersion: e.SchemaVersion}
}

// subscribeParams is what a subscription asks for: the events it selects, and
// where it begins (since, else the consumer's stored cursor, else from).
type subscribeParams struct {
	Selector   *event.Selector
	Since      *string
	ConsumerID *string
	From       *model.LogStart
}

// subscribe starts a hub subscription and turns it into the channel gqlgen
// reads. With a consumerId the cursor of the last event handed over is saved
// (at most once a second, and at the end), so a later subscription or poll
// resumes after it; delivery is at least once.
func subscribe[T any](ctx context.Context, r *Resolver, p subscribeParams, conv func(*event.Event) T) (<-chan T, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous {
		return nil, problem.New(problem.Unauthenticated, "subscriptions need a token")
	}
	if r.Hub == nil {
		return nil, fmt.Errorf("no event hub configured")
	}
	sp := event.StartParams{Actor: rc.Actor, From: logStart(p.From), Now: time.Now()}
	if p.Since != nil {
		c, err := event.ParseCursor(*p.Since, "since")
		if err != nil {
			return nil, err
		}
		sp.Since = &c
	}
	ids := event.StreamIDsFrom(ctx)
	if ids != nil && ids.Resume != "" {
		// An SSE reconnect (Last-Event-ID): right after the last event the
		// client received, whatever since or its consumer says.
		c, err := event.ParseCursor(ids.Resume, "Last-Event-ID")
		if err != nil {
			return nil, err
		}
		sp.Since = &c
	}
	if p.ConsumerID != nil {
		if err := event.CheckConsumerID(*p.ConsumerID, "consumerId"); err != nil {
			return nil, err
		}
		sp.ConsumerID = *p.ConsumerID
	}
	cid := sp.ConsumerID
	// A consumer resumes from its cursor; anyone else begins where from says: at
	// the end of the log as it is now (every event committed after this call is
	// delivered), or at its start.
	start, err := r.Consumers.Start(ctx, sp)
	if err != nil {
		return nil, err
	}
	opts := event.SubscribeOpts{Actor: rc.Actor, Selector: p.Selector, Since: &start}
	if cid == "" && ids == nil {
		k := event.NewSink(conv)
		// Subscribers who are the same reader get the same response for the
		// same event and operation: the transport may encode it once for all.
		if st := ondemand.Claim(ctx, k.Shared(readerGroup(rc.Actor))); st != nil {
			// The transport writes on demand: the hub queues each event and
			// says so, with no goroutine here. (A consumer saves its cursor as
			// events are confirmed, and SSE numbers its messages as they are
			// taken: both need the loop below.)
			opts.Sink, opts.Ready = k, st.Ready
			opts.End = func(reason string) {
				if reason == "" || r.CloseConn == nil {
					st.End()
					return
				}
				// Closing writes a frame: not under the hub's lock.
				go func() {
					r.CloseConn(ctx, closeTryAgainLater, reason)
					st.End()
				}()
			}
			r.Hub.Subscribe(ctx, opts)
			return k.C, nil
		}
	}
	sub := r.Hub.Subscribe(ctx, opts)
	out := make(chan T)
	go func() {
		defer close(out)
		// gqlgen takes the next event from out only after it has written the one
		// before to the socket, so handing over an event confirms its predecessor:
		// the cursor saved is the last confirmed one, and a consumer that
		// reconnects after a crash gets at most one event twice, never a gap.
		var last, pending event.Cursor
		last, pending = start, start
		saved := last
		save := func() {
			if cid == "" || !saved.Less(last) {
				return
			}
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := r.Consumers.Save(sctx, rc.Actor, cid, last, time.Now()); err != nil {
				r.Logger.Warn("save consumer cursor", "consumer", cid, "err", err)
				return
			}
			saved = last
		}
		defer save()
		// Only a consumer saves its cursor; other subscribers need no timer
		// waking them every second.
		var tick <-chan time.Time
		if cid != "" {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case e := <-sub.C:
				if ids != nil {
					ids.Push(e.Cursor.String()) // this event's message carries its cursor as its id
				}
				select {
				case out <- conv(e):
					sub.Delivered(e.Cursor)
					last, pending = pending, e.Cursor
				case <-ctx.Done():
					return
				}
			case <-tick:
				save()
			case <-sub.Done():
				if reason := sub.Reason(); reason != "" && r.CloseConn != nil {
					r.CloseConn(ctx, closeTryAgainLater, reason)
				}
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// readerGroup names who reads: everything about the actor that decides what
// it may see.
func readerGroup(a auth.Actor) string {
	return fmt.Sprintf("%q %q %v", a.ID, a.Kind, a.Permissions)
}

// artifactSelector selects the events about one artifact, any version of it.
func artifactSelector(s string) (*event.Selector, error) {
	rf, err := ref.Parse(s)
	if err != nil {
		return nil, problem.Invalid(problem.Field("ref", "ref", err.Error(), s))
	}
	return event.NewSelector(nil, nil, rf.Unpinned().String())
}

// logStart is where a reader with no cursor and no since begins: NOW unless the
// client asked for START.
func logStart(from *model.LogStart) event.From {
	if from != nil && *from == model.LogStartStart {
		return event.FromStart
	}
	return event.FromNow
}

// poll serves Query.poll: a page of the log from where the reader begins (since,
// else its consumer's cursor, else from), with the events' artifacts loaded ahead.
func (r *Resolver) poll(ctx context.Context, consumerID *string, types []string, filter model.JSON, since *string, from *model.LogStart, limit *int, autoAdvance *bool) (*model.PollResult, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous {
		return nil, problem.New(problem.Unauthenticated, "poll needs a token")
	}
	sel, err := event.NewSelector(types, json.RawMessage(filter), "")
	if err != nil {
		return nil, err
	}
	p := event.PollParams{Actor: rc.Actor, Selector: sel, From: logStart(from), Limit: 100, AutoAdvance: autoAdvance == nil || *autoAdvance, Now: time.Now()}
	if limit != nil {
		p.Limit = *limit
	}
	if consumerID != nil {
		if err := event.CheckConsumerID(*consumerID, "consumerId"); err != nil {
			return nil, err
		}
		p.ConsumerID = *consumerID
	}
	if since != nil {
		c, err := event.ParseCursor(*since, "since")
		if err != nil {
			return nil, err
		}
		// With a consumer, since also acknowledges everything up to it (Poll
		// commits it, never backwards).
		p.Since = &c
	}
	res, err := r.Consumers.Poll(ctx, p)
	if err != nil {
		return nil, err
	}
	if err := r.prefetchEvents(ctx, res.Events, path(ctx, selection(ctx), "events", "artifact")); err != nil {
		return nil, err
	}
	out := &model.PollResult{Events: make([]*model.Event, len(res.Events)), HasMore: res.HasMore}
	for i, e := range res.Events {
		out.Events[i] = eventModel(e)
	}
	c := res.Cursor.String()
	out.Cursor = &c
	return out, nil
}

// prefetchEvents loads the artifacts a page of events is about, in one
// statement, and what sel asks below them through the same lookahead as a list
// of artifacts, so that Event.artifact answers from the loaders and a poll costs
// the same number of statements for 2 events or 1000. The store decides what
// the actor may read: an artifact it may not (another's message) is absent and
// the field null, as a read of it alone would answer.
func (r *Resolver) prefetchEvents(ctx context.Context, evs []*event.Event, sel ast.SelectionSet) error {
	if len(evs) == 0 || len(sel) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var refs []ref.Ref
	for _, e := range evs {
		if e.Ref == nil {
			continue
		}
		rf, err := ref.Parse(*e.Ref)
		if err != nil {
			continue // Event.artifact is null for it
		}
		if u := rf.Unpinned(); !seen[u.String()] {
			seen[u.String()] = true
			refs = append(refs, u)
		}
	}
	arts, err := r.loaders(ctx).primeRefs(ctx, refs)
	if err != nil {
		return err
	}
	return r.prefetch(ctx, arts, sel)
}

// eventArtifact is the artifact an event is about, as it is now: from the
// loaders when a poll loaded it ahead, else read alone (a subscription's event
// is a response of its own, so one read is all it needs).
func (r *Resolver) eventArtifact(ctx context.Context, s string) (model.Artifact, error) {
	rf, err := ref.Parse(s)
	if err != nil {
		return nil, nil
	}
	u := rf.Unpinned().String()
	if a, ok := r.loaders(ctx).artifactByRef(u); ok {
		if a == nil {
			return nil, nil
		}
		return model.NewArtifact(a), nil
	}
	return r.lookup(ctx, u, "ref")
}

// consumer serves Query.consumer: the caller's own durable consumer, or null.
func (r *Resolver) consumer(ctx context.Context, id string) (*model.Consumer, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous {
		return nil, problem.New(problem.Unauthenticated, "consumer needs a token")
	}
	if err := event.CheckConsumerID(id, "id"); err != nil {
		return nil, err
	}
	c, err := r.Consumers.Get(ctx, rc.Actor, id, time.Now())
	if errors.Is(err, event.ErrNoConsumer) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := &model.Consumer{ID: c.ID, Cursor: c.Cursor.String(), Deliveries: int(c.Deliveries), Redeliveries: int(c.Redeliveries),
		HeadDeliveries: c.HeadDeliveries, MaxDeliveries: c.MaxDeliveries, DeadLetterCount: int(c.DeadLetterCount),
		DeadLetters: make([]*model.DeadLetter, len(c.DeadLetters)), UpdatedAt: c.UpdatedAt, ExpiresAt: c.ExpiresAt}
	if c.Pending != nil {
		s := c.Pending.String()
		out.PendingCursor = &s
	}
	if c.Head != nil {
		s := strconv.FormatInt(c.Head.ID, 10)
		out.HeadEventID = &s
	}
	for i, d := range c.DeadLetters {
		out.DeadLetters[i] = &model.DeadLetter{EventID: strconv.FormatInt(d.Cursor.ID, 10), Cursor: d.Cursor.String(), Deliveries: d.Deliveries, ParkedAt: d.ParkedAt}
	}
	return out, nil
}

// deadLetterEvent is a dead letter's event, if the caller may still see it.
func (r *Resolver) deadLetterEvent(ctx context.Context, d *model.DeadLetter) (*model.Event, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous {
		return nil, nil
	}
	c, err := event.ParseCursor(d.Cursor, "cursor")
	if err != nil {
		return nil, err
	}
	e, err := r.Consumers.EventAt(ctx, rc.Actor, c)
	if err != nil || e == nil {
		return nil, err
	}
	return eventModel(e), nil
}
