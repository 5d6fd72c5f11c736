package event

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
)

// ConsumerLockSpace is the first key of the advisory lock by which a server
// process shows it is alive: (ConsumerLockSpace, Consumers.Instance()), held
// on the hub's listener connection. Any constant works as long as nothing else
// takes advisory locks in this space ("SDXC").
const ConsumerLockSpace int32 = 0x53445843

// DefaultMaxDeliveries is how many times in a row a consumer is handed the same
// event at the head of a page before that event is parked as a dead letter.
const DefaultMaxDeliveries = 5

// ConsumersOpts configures the consumer store.
type ConsumersOpts struct {
	// MaxDeliveries bounds how many answers in a row may begin with the same
	// event; the next one parks it. Default DefaultMaxDeliveries.
	MaxDeliveries int
}

// Consumers keeps durable consumers' cursors and answers polls.
//
// What is stored for a consumer: its committed cursor (where it resumes), the
// pending page (the cursor of the last page a poll with autoAdvance answered,
// and the process that answered it), and its delivery counts. A poll commits
// the pending page before it reads: the consumer asking for the next page says
// it has the last one. It does so only if the process that answered that page
// is still alive (it is this one, or it still holds its advisory lock): a page
// whose answer died with its server is not known to have arrived, so it is
// handed out again from the committed cursor.
type Consumers struct {
	pool     *pgxpool.Pool
	q        *dbsqlc.Queries
	instance int32
	maxDeliv int
}

// NewConsumers returns the consumer store over pool.
func NewConsumers(pool *pgxpool.Pool) *Consumers { return NewConsumersOpts(pool, ConsumersOpts{}) }

// NewConsumersOpts returns the consumer store over pool, configured.
func NewConsumersOpts(pool *pgxpool.Pool, o ConsumersOpts) *Consumers {
	if o.MaxDeliveries <= 0 {
		o.MaxDeliveries = DefaultMaxDeliveries
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	// Positive and non-zero: an oid in pg_locks, and 0 would mean "no process".
	inst := int32(binary.BigEndian.Uint32(b[:])&0x7fffffff) | 1
	return &Consumers{pool: pool, q: dbsqlc.New(pool), instance: inst, maxDeliv: o.MaxDeliveries}
}

// Instance is this process's key: the hub holds the advisory lock
// (ConsumerLockSpace, Instance) for as long as the process runs, so that
// another process can tell whether a page this one answered may have arrived.
func (c *Consumers) Instance() int32 { return c.instance }

// MaxDeliveries is the dead-letter bound.
func (c *Consumers) MaxDeliveries() int { return c.maxDeliv }

// consumerState is one consumer's row, as a poll reads and writes it.
type consumerState struct {
	found     bool
	version   int64
	cursor    Cursor // committed
	pending   *Cursor
	pendingBy int32
	answered  Cursor
	head      *Cursor
	headDeliv int32
	deliv     int64
	redeliv   int64
	dead      int64
	updatedAt time.Time
	expiresAt time.Time
}

func parseCursor(xid string, id int64) (Cursor, error) {
	x, err := parseXID(xid)
	if err != nil {
		return Cursor{}, err
	}
	return Cursor{XID: x, ID: id}, nil
}

// load reads a live consumer's state; found is false when it has none.
func (c *Consumers) load(ctx context.Context, q *dbsqlc.Queries, actor auth.Actor, id string, now time.Time) (consumerState, error) {
	row, err := q.ConsumerGet(ctx, actor.ID, id, now)
	if errors.Is(err, pgx.ErrNoRows) {
		return consumerState{}, nil
	}
	if err != nil {
		return consumerState{}, fmt.Errorf("read consumer %s: %w", id, err)
	}
	s := consumerState{found: true, version: row.Version, headDeliv: row.HeadDeliveries, deliv: row.Deliveries,
		redeliv: row.Redeliveries, dead: row.DeadLetters, updatedAt: row.UpdatedAt, expiresAt: row.ExpiresAt}
	if s.cursor, err = parseCursor(row.CursorXid, row.CursorID); err != nil {
		return s, err
	}
	if s.answered, err = parseCursor(row.AnsweredXid, row.AnsweredID); err != nil {
		return s, err
	}
	if row.PendingID != nil && row.PendingXid != "" {
		p, err := parseCursor(row.PendingXid, *row.PendingID)
		if err != nil {
			return s, err
		}
		s.pending = &p
		if row.PendingInstance != nil {
			s.pendingBy = *row.PendingInstance
		}
	}
	if row.HeadID != nil && row.HeadXid != "" {
		h, err := parseCursor(row.HeadXid, *row.HeadID)
		if err != nil {
			return s, err
		}
		s.head = &h
	}
	return s, nil
}

// resolvePending commits the pending page if the process that answered it is
// alive, else drops it (it is handed out again); either way no page is pending
// afterwards. It reports whether the state changed.
func (c *Consumers) resolvePending(ctx context.Context, q *dbsqlc.Queries, s *consumerState) (bool, error) {
	if s.pending == nil {
		return false, nil
	}
	p, by := *s.pending, s.pendingBy
	s.pending, s.pendingBy = nil, 0
	if !s.cursor.Less(p) {
		return true, nil // a since or a subscription went past it already
	}
	alive := by == c.instance
	if !alive && by != 0 {
		var err error
		if alive, err = q.ConsumerInstanceAlive(ctx, ConsumerLockSpace, by); err != nil {
			return false, fmt.Errorf("consumer liveness: %w", err)
		}
	}
	if alive {
		s.cursor = p
	}
	return true, nil
}

func xidText(c Cursor) string { return strconv.FormatUint(c.XID, 10) }

func optCursor(c *Cursor) (*string, *int64) {
	if c == nil {
		return nil, nil
	}
	x, id := xidText(*c), c.ID
	return &x, &id
}

// store writes s over the version it was read at (or creates the consumer),
// with the dead letters parked by this answer, through q (the caller's
// transaction). ok is false when a subscription's save changed the consumer in
// between.
func store(ctx context.Context, q *dbsqlc.Queries, actor auth.Actor, id string, s consumerState, parked []deadLetter, now time.Time) (ok bool, err error) {
	px, pid := optCursor(s.pending)
	hx, hid := optCursor(s.head)
	var inst *int32
	if s.pending != nil {
		inst = &s.pendingBy
	}
	var n int64
	if s.found {
		n, err = q.ConsumerUpdate(ctx, dbsqlc.ConsumerUpdateParams{ActorID: actor.ID, ConsumerID: id, Version: s.version,
			CursorXid: xidText(s.cursor), CursorID: s.cursor.ID, PendingXid: px, PendingID: pid, PendingInstance: inst,
			AnsweredXid: xidText(s.answered), AnsweredID: s.answered.ID, HeadXid: hx, HeadID: hid, HeadDeliveries: s.headDeliv,
			Deliveries: s.deliv, Redeliveries: s.redeliv, DeadLetters: s.dead, Now: now, ExpiresAt: now.Add(ConsumerTTL)})
	} else {
		if err = q.ConsumerDeadLetterDeleteAll(ctx, actor.ID, id); err != nil {
			return false, fmt.Errorf("save consumer %s: %w", id, err)
		}
		n, err = q.ConsumerCreate(ctx, dbsqlc.ConsumerCreateParams{ActorID: actor.ID, ConsumerID: id,
			CursorXid: xidText(s.cursor), CursorID: s.cursor.ID, PendingXid: px, PendingID: pid, PendingInstance: inst,
			AnsweredXid: xidText(s.answered), AnsweredID: s.answered.ID, HeadXid: hx, HeadID: hid, HeadDeliveries: s.headDeliv,
			Deliveries: s.deliv, Redeliveries: s.redeliv, DeadLetters: s.dead, Now: now, ExpiresAt: now.Add(ConsumerTTL)})
	}
	if err != nil {
		return false, fmt.Errorf("save consumer %s: %w", id, err)
	}
	if n == 0 {
		return false, nil
	}
	for _, d := range parked {
		if err := q.ConsumerDeadLetterAdd(ctx, dbsqlc.ConsumerDeadLetterAddParams{ActorID: actor.ID, ConsumerID: id,
			EventID: d.Cursor.ID, EventXid: xidText(d.Cursor), Deliveries: int32(d.Deliveries), ParkedAt: now}); err != nil {
			return false, fmt.Errorf("park dead letter for consumer %s: %w", id, err)
		}
	}
	return true, nil
}

// locked runs fn in a transaction holding the consumer's advisory lock: two
// polls (or a poll and a subscription's start) of one consumer take turns, so
// neither commits or answers over the other. The lock assigns no transaction
// id, so the read of the log inside holds nothing back. fn's ok false rolls
// back.
func (c *Consumers) locked(ctx context.Context, actor auth.Actor, id string, fn func(q *dbsqlc.Queries) (ok bool, err error)) (bool, error) {
	tx, err := c.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("consumer %s: %w", id, err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", actor.ID+" "+id); err != nil {
		return false, fmt.Errorf("lock consumer %s: %w", id, err)
	}
	ok, err := fn(c.q.WithTx(tx))
	if err != nil || !ok {
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("save consumer %s: %w", id, err)
	}
	return true, nil
}

// maxAttempts bounds how often a poll reads a consumer again after losing a
// race with another poll of it; each loss means the other one made progress.
const maxAttempts = 20

// Start returns where a reader begins: since when given, else the consumer's
// stored cursor, else what From says (the end of the log now, or its start).
// A stored cursor wins over From, so a consumer that always asks for FromStart
// replays the log once and then resumes where it left off. For a consumer
// with a pending page Start settles it first, as a poll would: a subscription
// is the consumer asking for what comes next.
func (c *Consumers) Start(ctx context.Context, p StartParams) (Cursor, error) {
	if p.Since != nil {
		return *p.Since, nil
	}
	if p.ConsumerID != "" {
		for range maxAttempts {
			var (
				at          Cursor
				found, done bool
			)
			_, err := c.locked(ctx, p.Actor, p.ConsumerID, func(q *dbsqlc.Queries) (bool, error) {
				s, err := c.load(ctx, q, p.Actor, p.ConsumerID, p.Now)
				if err != nil || !s.found {
					return false, err
				}
				found = true
				changed, err := c.resolvePending(ctx, q, &s)
				if err != nil {
					return false, err
				}
				at = s.cursor
				if !changed {
					done = true
					return false, nil // nothing to write
				}
				done, err = store(ctx, q, p.Actor, p.ConsumerID, s, nil, p.Now)
				return done, err
			})
			if err != nil {
				return Cursor{}, err
			}
			if !found {
				return c.begin(ctx, p.From)
			}
			if done {
				return at, nil
			}
		}
		return Cursor{}, problem.New(problem.VersionConflict, "consumer %s changed too often while starting; try again", p.ConsumerID)
	}
	return c.begin(ctx, p.From)
}

// begin is where a reader with no cursor and no since begins.
func (c *Consumers) begin(ctx context.Context, from From) (Cursor, error) {
	if from == FromStart {
		// Before every event: (xid, id) > (0, 0) holds for all of them.
		return Cursor{}, nil
	}
	return tail(ctx, c.q)
}

// Save moves a consumer's cursor forward (never back) and extends its life: an
// acknowledgement (since, or a subscription's last confirmed event).
func (c *Consumers) Save(ctx context.Context, actor auth.Actor, consumerID string, at Cursor, now time.Time) error {
	err := c.q.ConsumerSave(ctx, dbsqlc.ConsumerSaveParams{ActorID: actor.ID, ConsumerID: consumerID,
		CursorXid: xidText(at), CursorID: at.ID, Now: now, ExpiresAt: now.Add(ConsumerTTL)})
	if err != nil {
		return fmt.Errorf("save consumer %s: %w", consumerID, err)
	}
	return nil
}

// DeleteExpired removes consumers untouched for ConsumerTTL.
func (c *Consumers) DeleteExpired(ctx context.Context, now time.Time) (int64, error) {
	return c.q.ConsumerDeleteExpired(ctx, now)
}

// ErrNoConsumer is Get's answer for a consumer the actor does not have (never
// created, or expired).
var ErrNoConsumer = errors.New("no such consumer")

// DeadLetter is an event parked for a consumer: handed out MaxDeliveries times
// in a row at the head of a page without the consumer moving past it.
type DeadLetter struct {
	Cursor     Cursor
	Deliveries int
	ParkedAt   time.Time
}

type deadLetter = DeadLetter

// Consumer is what a durable consumer's owner may read of it.
type Consumer struct {
	ID string
	// Cursor is where it resumes: everything up to it is acknowledged.
	Cursor Cursor
	// Pending is the cursor of the last page answered and not yet committed.
	Pending *Cursor
	// Deliveries counts the events polls handed out, Redeliveries those of them
	// handed out again (at or before the furthest one handed out before).
	Deliveries, Redeliveries int64
	// Head is the first event of the last page answered, handed out
	// HeadDeliveries times in a row.
	Head           *Cursor
	HeadDeliveries int
	// DeadLetterCount counts every event parked; DeadLetters lists the most
	// recent ones.
	DeadLetterCount int64
	DeadLetters     []DeadLetter
	MaxDeliveries   int
	UpdatedAt       time.Time
	ExpiresAt       time.Time
}

// MaxDeadLettersListed bounds Consumer.DeadLetters.
const MaxDeadLettersListed = 100

// Get returns actor's consumer id, or ErrNoConsumer.
func (c *Consumers) Get(ctx context.Context, actor auth.Actor, id string, now time.Time) (*Consumer, error) {
	s, err := c.load(ctx, c.q, actor, id, now)
	if err != nil {
		return nil, err
	}
	if !s.found {
		return nil, ErrNoConsumer
	}
	out := &Consumer{ID: id, Cursor: s.cursor, Pending: s.pending, Deliveries: s.deliv, Redeliveries: s.redeliv, Head: s.head,
		HeadDeliveries: int(s.headDeliv), DeadLetterCount: s.dead, DeadLetters: []DeadLetter{}, MaxDeliveries: c.maxDeliv,
		UpdatedAt: s.updatedAt, ExpiresAt: s.expiresAt}
	rows, err := c.q.ConsumerDeadLetterList(ctx, actor.ID, id, MaxDeadLettersListed)
	if err != nil {
		return nil, fmt.Errorf("read dead letters of %s: %w", id, err)
	}
	for _, r := range rows {
		cur, err := parseCursor(r.EventXid, r.EventID)
		if err != nil {
			return nil, err
		}
		out.DeadLetters = append(out.DeadLetters, DeadLetter{Cursor: cur, Deliveries: int(r.Deliveries), ParkedAt: r.ParkedAt})
	}
	return out, nil
}

// EventAt returns the event at cursor if actor may see it, else nil.
func (c *Consumers) EventAt(ctx context.Context, actor auth.Actor, at Cursor) (*Event, error) {
	if at.ID <= 0 {
		return nil, nil
	}
	// Nothing sorts between (xid, id-1) and (xid, id).
	evs, _, err := page(ctx, c.q, Cursor{XID: at.XID, ID: at.ID - 1}, actor, 1)
	if err != nil || len(evs) == 0 || evs[0].Cursor != at {
		return nil, err
	}
	return evs[0], nil
}
