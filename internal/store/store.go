// Package store is the one write path of the substrate and the reads beneath the
// GraphQL layer. Every mutation, whatever its transport, comes through here:
// authorize, check idempotency, validate, then write the artifact, its version,
// the journal row and the event in one transaction.
package store

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/schema"
)

// IdempotencyTTL is how long a stored result answers replays of its key.
const IdempotencyTTL = 24 * time.Hour

// ErrNotFound is returned by lookups that find nothing; callers never get (nil, nil).
var ErrNotFound = errors.New("not found")

// Opts configures a Store.
type Opts struct {
	Pool     *pgxpool.Pool
	Registry *schema.Registry
	Logger   *slog.Logger
	// Limiter rate-limits writes per actor; nil means unlimited.
	Limiter *Limiter
	// ShadowValidators names validators that only log what they would refuse.
	ShadowValidators []string
	// ToolCheck is the runtimes' part of checking a tool manifest (the tool
	// dispatcher's); nil checks only what the store knows.
	ToolCheck ToolCheck
	// NoProvenanceStamps turns off the produced_by provenance stamps
	// (stamp.go); the zero value stamps (`scidex serve --stamp-provenance`).
	NoProvenanceStamps bool
	// MessageRetention is how long a completed message stays in its
	// recipient's mailbox lists before it is archived (retention.go); 0 means
	// DefaultMessageRetention (`scidex serve --message-retention`).
	MessageRetention time.Duration
}

// Store reads and writes artifacts.
type Store struct {
	pool *pgxpool.Pool
	// q and db read and write through the pool, or through tx for the view a
	// transaction gives (Tx.Store).
	q        *dbsqlc.Queries
	db       dbsqlc.DBTX
	tx       *Tx
	registry *schema.Registry
	log      *slog.Logger
	limiter  *Limiter
	shadow   map[string]bool
	// toolCheck is Opts.ToolCheck.
	toolCheck ToolCheck
	// noStamps is Opts.NoProvenanceStamps.
	noStamps bool
	// retention is Opts.MessageRetention.
	retention time.Duration
	// actors remembers actor rows this process wrote (see actorKnown); shared by
	// every transaction's view.
	actors *sync.Map
	// current remembers rows this process wrote (current.go); shared likewise.
	current *currentRows
}

// New returns a Store over opts.Pool.
func New(opts Opts) *Store {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	reg := opts.Registry
	if reg == nil {
		reg = schema.NewRegistry(dbsqlc.New(opts.Pool))
	}
	shadow := map[string]bool{}
	for _, name := range opts.ShadowValidators {
		shadow[name] = true
	}
	retention := opts.MessageRetention
	if retention <= 0 {
		retention = DefaultMessageRetention
	}
	return &Store{retention: retention, pool: opts.Pool, q: dbsqlc.New(opts.Pool), db: opts.Pool, registry: reg, log: log, limiter: opts.Limiter,
		shadow: shadow, toolCheck: opts.ToolCheck, noStamps: opts.NoProvenanceStamps, actors: &sync.Map{},
		current: newCurrentRows()}
}

// Registry is the schema registry the store validates against.
func (s *Store) Registry() *schema.Registry { return s.registry }

// Pool is the connection pool, for readiness checks.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }
