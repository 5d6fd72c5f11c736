package event

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
)

// ConsumerTTL is how long an untouched durable consumer keeps its cursor.
const ConsumerTTL = 30 * 24 * time.Hour

// MaxPollLimit bounds one poll.
const MaxPollLimit = 1000

var consumerRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:~-]{0,127}$`)

// Consumers keeps durable consumers' cursors and answers polls.
type Consumers struct {
	q *dbsqlc.Queries
}

// NewConsumers returns the consumer store over pool.
func NewConsumers(pool *pgxpool.Pool) *Consumers { return &Consumers{q: dbsqlc.New(pool)} }

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

// Start returns where a reader begins: since when given, else the consumer's
// stored cursor, else what From says (the end of the log now, or its start).
// A stored cursor wins over From, so a consumer that always asks for FromStart
// replays the log once and then resumes where it left off.
func (c *Consumers) Start(ctx context.Context, p StartParams) (Cursor, error) {
	if p.Since != nil {
		return *p.Since, nil
	}
	if p.ConsumerID != "" {
		row, err := c.q.ConsumerGet(ctx, p.Actor.ID, p.ConsumerID, p.Now)
		if err == nil {
			x, err := parseXID(row.CursorXid)
			if err != nil {
				return Cursor{}, err
			}
			return Cursor{XID: x, ID: row.CursorID}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Cursor{}, fmt.Errorf("read consumer %s: %w", p.ConsumerID, err)
		}
	}
	if p.From == FromStart {
		// Before every event: (xid, id) > (0, 0) holds for all of them.
		return Cursor{}, nil
	}
	return tail(ctx, c.q)
}

// Save moves a consumer's cursor forward (never back) and extends its life.
func (c *Consumers) Save(ctx context.Context, actor auth.Actor, consumerID string, at Cursor, now time.Time) error {
	err := c.q.ConsumerSave(ctx, dbsqlc.ConsumerSaveParams{ActorID: actor.ID, ConsumerID: consumerID,
		CursorXid: strconv.FormatUint(at.XID, 10), CursorID: at.ID, Now: now, ExpiresAt: now.Add(ConsumerTTL)})
	if err != nil {
		return fmt.Errorf("save consumer %s: %w", consumerID, err)
	}
	return nil
}

// DeleteExpired removes consumers untouched for ConsumerTTL.
func (c *Consumers) DeleteExpired(ctx context.Context, now time.Time) (int64, error) {
	return c.q.ConsumerDeleteExpired(ctx, now)
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

// Poll returns up to Limit matching events after the consumer's position, and
// the cursor after the last event it looked at (matching or not), which it
// stores for a durable consumer when AutoAdvance is set.
func (c *Consumers) Poll(ctx context.Context, p PollParams) (*PollResult, error) {
	if p.Limit <= 0 || p.Limit > MaxPollLimit {
		return nil, problem.Invalid(problem.Field("limit", "range", fmt.Sprintf("must be between 1 and %d", MaxPollLimit), p.Limit))
	}
	from, err := c.Start(ctx, StartParams{Actor: p.Actor, ConsumerID: p.ConsumerID, Since: p.Since, From: p.From, Now: p.Now})
	if err != nil {
		return nil, err
	}
	res := &PollResult{Cursor: from, Events: []*Event{}}
	scanBudget := 20 * p.Limit // do not scan forever for a rare event type
	for scanBudget > 0 && len(res.Events) < p.Limit {
		n := min(500, scanBudget)
		evs, _, err := page(ctx, c.q, res.Cursor, p.Actor, n)
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
			if p.Selector.Match(e) {
				res.Events = append(res.Events, e)
			}
		}
		if full {
			res.HasMore = true
			break
		}
		if len(evs) < n {
			break // the end of what may be handed out now
		}
	}
	if !res.HasMore && (len(res.Events) == p.Limit || scanBudget <= 0) {
		more, _, err := page(ctx, c.q, res.Cursor, p.Actor, 1)
		if err != nil {
			return nil, err
		}
		res.HasMore = len(more) > 0
	}
	if p.ConsumerID != "" && p.AutoAdvance {
		if err := c.Save(ctx, p.Actor, p.ConsumerID, res.Cursor, p.Now); err != nil {
			return nil, err
		}
	}
	return res, nil
}
