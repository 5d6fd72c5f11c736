package resolvers

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/event"
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

// subscribe starts a hub subscription and turns it into the channel gqlgen
// reads. With a consumerId the cursor of the last event handed over is saved
// (at most once a second, and at the end), so a later subscription or poll
// resumes after it; delivery is at least once.
func subscribe[T any](ctx context.Context, r *Resolver, sel *event.Selector, since *string, consumerID *string, conv func(*event.Event) T) (<-chan T, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous {
		return nil, problem.New(problem.Unauthenticated, "subscriptions need a token")
	}
	if r.Hub == nil {
		return nil, fmt.Errorf("no event hub configured")
	}
	var from *event.Cursor
	if since != nil {
		c, err := event.ParseCursor(*since, "since")
		if err != nil {
			return nil, err
		}
		from = &c
	}
	cid := ""
	if consumerID != nil {
		if err := event.CheckConsumerID(*consumerID, "consumerId"); err != nil {
			return nil, err
		}
		cid = *consumerID
	}
	if from == nil {
		// A consumer resumes from its cursor; anyone else starts at the end of the
		// log as it is now: every event committed after this call is delivered.
		c, err := r.Consumers.Start(ctx, rc.Actor, cid, nil, time.Now())
		if err != nil {
			return nil, err
		}
		from = &c
	}
	sub := r.Hub.Subscribe(ctx, event.SubscribeOpts{Actor: rc.Actor, Selector: sel, Since: from})
	out := make(chan T)
	go func() {
		defer close(out)
		// gqlgen takes the next event from out only after it has written the one
		// before to the socket, so handing over an event confirms its predecessor:
		// the cursor saved is the last confirmed one, and a consumer that
		// reconnects after a crash gets at most one event twice, never a gap.
		var last, pending event.Cursor
		last, pending = *from, *from
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

// artifactSelector selects the events about one artifact, any version of it.
func artifactSelector(s string) (*event.Selector, error) {
	rf, err := ref.Parse(s)
	if err != nil {
		return nil, problem.Invalid(problem.Field("ref", "ref", err.Error(), s))
	}
	return event.NewSelector(nil, nil, rf.Unpinned().String())
}
