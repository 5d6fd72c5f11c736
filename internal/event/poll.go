package event

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
)

// ConsumerTTL is how long an untouched durable consumer keeps its cursor.
const ConsumerTTL = 30 * 24 * time.Hour

// MaxPollLimit bounds one poll.
const MaxPollLimit = 1000

var consumerRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:~-]{0,127}$`)

// CheckConsumerID validates a client's consumer id.
func CheckConsumerID(id, path string) error {
	if !consumerRE.MatchString(id) {
		return problem.Invalid(problem.Field(path, "pattern", "a consumer id is 1 to 128 letters, digits and . _ : ~ -", id))
	}
	return nil
}

// From says where a reader begins when nothing else does: a consumer with no
// stored cursor, or a reader without one, and no since. The event spec gives a new
// durable consumer the cursor 0, the start of the log; the API's default is the
// end of the log now, which is what clients written before From relied on.
type From int

const (
	// FromNow begins at the end of the log as it is now: only events committed
	// afterwards are delivered. The default.
	FromNow From = iota
	// FromStart begins before the first event: the whole log the reader may
	// see is replayed, in delivery order, a page at a time.
	FromStart
)

// StartParams says whose position is asked for, and what the reader gave.
type StartParams struct {
	Actor      auth.Actor
	ConsumerID string
	Since      *Cursor
	From       From
	Now        time.Time
}

// PollParams is one poll.
type PollParams struct {
	Actor      auth.Actor
	ConsumerID string
	Selector   *Selector
	Since      *Cursor
	// From is where a consumer with no stored cursor (or a reader without a
	// consumer) begins when Since is not given.
	From        From
	Limit       int
	AutoAdvance bool
	Now         time.Time
}

// PollResult is a page of events and the cursor to continue from.
type PollResult struct {
	Events  []*Event
	Cursor  Cursor
	HasMore bool
}

// Poll returns up to Limit matching events after the reader's position, and
// the cursor after the last event it looked at (matching or not).
//
// For a durable consumer, at least once: with AutoAdvance the page answered is
// recorded as pending, not committed; the consumer's next poll (or
// subscription) commits it before reading on, if the process that answered it
// is still alive, else the page is handed out again. Since commits since
// (never backwards), with or without AutoAdvance. An event handed out
// MaxDeliveries times in a row at the head of a page is parked as a dead
// letter of the consumer and left out of its pages from then on. Two polls of
// one consumer at once are serialized by the row's version: each answers its
// own page and commits the one before it, none lost and none skipped.
func (c *Consumers) Poll(ctx context.Context, p PollParams) (*PollResult, error) {
	if p.Limit <= 0 || p.Limit > MaxPollLimit {
		return nil, problem.Invalid(problem.Field("limit", "range", fmt.Sprintf("must be between 1 and %d", MaxPollLimit), p.Limit))
	}
	if p.ConsumerID == "" {
		start, err := c.Start(ctx, StartParams{Actor: p.Actor, Since: p.Since, From: p.From, Now: p.Now})
		if err != nil {
			return nil, err
		}
		return read(ctx, c.q, p, start, nil)
	}
	for range maxAttempts {
		res, ok, err := c.pollOnce(ctx, p)
		if err != nil || ok {
			return res, err
		}
	}
	return nil, problem.New(problem.VersionConflict, "consumer %s kept changing while it was polled; poll it again", p.ConsumerID)
}

// pollOnce answers one poll of a consumer under its lock; ok is false when a
// subscription saved the consumer's cursor between this poll's read and its
// write (nothing was then written, and the answer is thrown away).
func (c *Consumers) pollOnce(ctx context.Context, p PollParams) (res *PollResult, ok bool, err error) {
	ok, err = c.locked(ctx, p.Actor, p.ConsumerID, func(q *dbsqlc.Queries) (bool, error) {
		var err error
		res, err = c.answer(ctx, q, p)
		return res != nil, err
	})
	if err != nil || !ok {
		return nil, false, err
	}
	return res, true, nil
}

// answer reads the consumer through q (its transaction, under its lock),
// settles its pending page, reads the page it is owed and records the answer.
// A nil result and no error: a subscription saved in between (try again).
func (c *Consumers) answer(ctx context.Context, q *dbsqlc.Queries, p PollParams) (res *PollResult, err error) {
	s, err := c.load(ctx, q, p.Actor, p.ConsumerID, p.Now)
	if err != nil {
		return nil, err
	}
	// A consumer that neither advances nor acknowledges, and has no row yet,
	// only reads: it has no position of its own to keep.
	write := s.found || p.AutoAdvance || p.Since != nil
	if p.AutoAdvance {
		// Asking for the next page commits the last one answered.
		if _, err := c.resolvePending(ctx, q, &s); err != nil {
			return nil, err
		}
	}
	switch {
	case !s.found && p.Since != nil:
		s.cursor = *p.Since
	case !s.found:
		if s.cursor, err = c.begin(ctx, p.From); err != nil {
			return nil, err
		}
	case p.Since != nil && s.cursor.Less(*p.Since):
		// since acknowledges everything up to it.
		s.cursor = *p.Since
	}
	start := s.cursor
	if p.Since != nil {
		start = *p.Since
	}
	var skip map[int64]bool
	if s.found && s.dead > 0 {
		dead, err := q.ConsumerDeadLetterIDsAfter(ctx, dbsqlc.ConsumerDeadLetterIDsAfterParams{ActorID: p.Actor.ID, ConsumerID: p.ConsumerID,
			AfterXid: xidText(start), AfterID: start.ID})
		if err != nil {
			return nil, fmt.Errorf("read dead letters of %s: %w", p.ConsumerID, err)
		}
		skip = make(map[int64]bool, len(dead))
		for _, id := range dead {
			skip[id] = true
		}
	}
	if res, err = read(ctx, q, p, start, skip); err != nil {
		return nil, err
	}
	var parked []DeadLetter
	if len(res.Events) > 0 && s.head != nil && res.Events[0].Cursor == *s.head && int(s.headDeliv) >= c.maxDeliv {
		// Handed out MaxDeliveries times at the head of a page and never passed:
		// park it and move on without it.
		parked = append(parked, DeadLetter{Cursor: *s.head, Deliveries: int(s.headDeliv), ParkedAt: p.Now})
		if skip == nil {
			skip = map[int64]bool{}
		}
		skip[s.head.ID] = true
		s.dead++
		s.head, s.headDeliv = nil, 0
		if res, err = read(ctx, q, p, start, skip); err != nil {
			return nil, err
		}
	}
	for _, e := range res.Events {
		s.deliv++
		if !s.answered.Less(e.Cursor) {
			s.redeliv++
		}
	}
	if n := len(res.Events); n > 0 {
		if last := res.Events[n-1].Cursor; s.answered.Less(last) {
			s.answered = last
		}
		if first := res.Events[0].Cursor; s.head != nil && *s.head == first {
			s.headDeliv++
		} else {
			s.head, s.headDeliv = &first, 1
		}
	}
	if p.AutoAdvance && s.cursor.Less(res.Cursor) {
		pc := res.Cursor
		s.pending, s.pendingBy = &pc, c.instance
	}
	if !write {
		return res, nil
	}
	if ok, err := store(ctx, q, p.Actor, p.ConsumerID, s, parked, p.Now); err != nil || !ok {
		return nil, err
	}
	return res, nil
}

// read pages the log after start for p, leaving out the events in skip.
//
// The log reads leave out the events the reader may not see, so a cursor
// moved only past the events read would stop at the last one the reader
// saw, and every later poll would scan again whatever others' private events
// follow it. The log's tail, read before the scan, bounds what the scan has
// certainly seen: every event up to it was final then (below the horizon),
// so a scan that reached its end without filling the page has read every one
// the reader may see, and the cursor moves to that tail.
func read(ctx context.Context, q *dbsqlc.Queries, p PollParams, start Cursor, skip map[int64]bool) (*PollResult, error) {
	res := &PollResult{Cursor: start, Events: []*Event{}}
	var end Cursor // the tail before the scan; admins read every event
	if !p.Actor.Has(auth.PermAdmin) {
		var err error
		if end, err = tail(ctx, q); err != nil {
			return nil, err
		}
	}
	scanBudget := 20 * p.Limit // do not scan forever for a rare event type
	for scanBudget > 0 && len(res.Events) < p.Limit {
		n := min(500, scanBudget)
		evs, _, err := page(ctx, q, res.Cursor, p.Actor, n)
		if err != nil {
			return nil, err
		}
		scanBudget -= len(evs)
		full := false
		for _, e := range evs {
			if len(res.Events) == p.Limit {
				full = true
				break
			}
			res.Cursor = e.Cursor
			if !skip[e.Cursor.ID] && p.Selector.Match(e) {
				res.Events = append(res.Events, e)
			}
		}
		if full {
			res.HasMore = true
			break
		}
		if len(evs) < n {
			// The end of what may be handed out now: nothing up to the
			// tail read before is left unseen.
			if res.Cursor.Less(end) {
				res.Cursor = end
			}
			break
		}
	}
	if !res.HasMore && (len(res.Events) == p.Limit || scanBudget <= 0) {
		more, _, err := page(ctx, q, res.Cursor, p.Actor, 1)
		if err != nil {
			return nil, err
		}
		res.HasMore = len(more) > 0
	}
	return res, nil
}
