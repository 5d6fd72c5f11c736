package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/scidex/substrate/internal/quietlog"
	"github.com/scidex/substrate/internal/store"
)

// RiverVersion is the River release whose migrations Migrate applies (the
// one in go.mod): a test database template built before a River upgrade is
// rebuilt.
const RiverVersion = "v0.51.2"

// attemptsPerJob is how many times River may start one job: twice, so that a
// job whose worker died is started once more by River's own rescue if the
// heartbeat sweep has not already recovered its call. A tool's retries are
// new jobs (dispatch: recover), never River's.
const attemptsPerJob = 2

// Queue names the River queue of tool calls.
const Queue = "tool_calls"

// Migrate brings River's tables up to date. Run it under the migration lock
// with our own migrations.
func Migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quietlog.Warn(log)})
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	return nil
}

// Opts configures a Queue.
type Opts struct {
	Pool   *pgxpool.Pool
	Logger *slog.Logger
	// Workers is how many calls this process works at once; 0 makes it
	// insert-only (a server whose jobs `scidex worker` processes work).
	Workers int
	// RescueAfter is how long a job may run before it counts as stuck (its
	// worker presumed dead) and is started again. It must exceed the longest
	// wall time of a queued tool. Default one hour.
	RescueAfter time.Duration
	// PollEvery is how often workers look for jobs besides being told of new
	// ones (LISTEN). Default one second.
	PollEvery time.Duration
	// Listen, when set, is the direct connection River LISTENs on (for new
	// jobs, cancellations and leadership) while its queries go through Pool:
	// set it when Pool is a transaction pooler, which loses a LISTEN. Nil:
	// a connection of Pool.
	Listen *pgx.ConnConfig
	// Process is the id of this process's Heartbeat: the calls its workers
	// run name it. Required when Workers > 0.
	Process string
	// Metrics, when set, is told of every job worked here (internal/metrics);
	// nil when metrics are off.
	Metrics Metrics
	// Middleware wraps River's inserts and works (internal/tracing's spans);
	// nil when tracing is off.
	Middleware []rivertype.Middleware
}

// Metrics is what the queue's workers report of each job.
type Metrics interface {
	// JobWorked is how long a job waited from when it was due to when a
	// worker took it, how long the worker ran it, and whether it failed.
	JobWorked(wait, run time.Duration, failed bool)
}

// RiverQueue is the dispatcher's Queue on River.
type RiverQueue struct {
	client *river.Client[pgx.Tx]
	log    *slog.Logger
	works  bool
	pool   *pgxpool.Pool
	w      *worker
	// listenPool is River's direct LISTEN connection (Opts.Listen), closed
	// when Run returns; nil without one.
	listenPool *pgxpool.Pool
}

// args is a job's arguments.
type args struct {
	Job
}

// Kind implements river.JobArgs.
func (args) Kind() string { return "tool_call" }

// worker runs jobs through the dispatcher (its Runner), set once it exists.
type worker struct {
	river.WorkerDefaults[args]
	r Runner
	// id names this process in tool_workers (its Heartbeat): the calls it
	// runs say so, and the heartbeat says it is alive.
	id      string
	metrics Metrics
}

func (w *worker) Work(ctx context.Context, job *river.Job[args]) error {
	if w.metrics == nil {
		return w.r.RunQueued(ctx, Run{Job: job.Args.Job, JobID: jobID(job.ID), Worker: w.id})
	}
	start := time.Now()
	taken := start
	if job.AttemptedAt != nil {
		taken = *job.AttemptedAt
	}
	err := w.r.RunQueued(ctx, Run{Job: job.Args.Job, JobID: jobID(job.ID), Worker: w.id})
	w.metrics.JobWorked(taken.Sub(job.ScheduledAt), time.Since(start), err != nil)
	return err
}

func jobID(id int64) string { return "river:" + strconv.FormatInt(id, 10) }

// Timeout lets a job run for its tool's wall time plus a margin; the runtime
// enforces the wall time itself.
func (w *worker) Timeout(job *river.Job[args]) time.Duration {
	if job.Args.WallTime <= 0 {
		return -1
	}
	return job.Args.WallTime + time.Minute
}

// retryPolicy starts a failed or rescued job again after a second: the wait
// is not backoff for an overloaded service but the time to notice a dead
// worker, which RescueAfter already was.
type retryPolicy struct{}

func (retryPolicy) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(time.Second) }

// New makes the queue; Bind gives it the dispatcher before Start.
func New(o Opts) (*RiverQueue, *Binder, error) {
	if o.Pool == nil {
		return nil, nil, errors.New("queue: a pool is required")
	}
	if o.RescueAfter == 0 {
		o.RescueAfter = time.Hour
	}
	if o.PollEvery == 0 {
		o.PollEvery = time.Second
	}
	if o.Workers > 0 && o.Process == "" {
		return nil, nil, errors.New("queue: a worker needs its process's heartbeat id (Opts.Process)")
	}
	w := &worker{id: o.Process, metrics: o.Metrics}
	cfg := &river.Config{Logger: quietlog.Warn(o.Logger), RescueStuckJobsAfter: o.RescueAfter, RetryPolicy: retryPolicy{},
		FetchPollInterval: o.PollEvery, FetchCooldown: 5 * time.Millisecond, JobTimeout: -1, Middleware: o.Middleware}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, w); err != nil {
		return nil, nil, fmt.Errorf("queue: %w", err)
	}
	cfg.Workers = workers
	if o.Workers > 0 {
		cfg.Queues = map[string]river.QueueConfig{Queue: {MaxWorkers: o.Workers}}
	}
	var (
		driver     riverdriver.Driver[pgx.Tx] = riverpgxv5.New(o.Pool)
		listenPool *pgxpool.Pool
	)
	if o.Listen != nil && o.Workers > 0 { // an insert-only client never listens
		var err error
		if listenPool, err = newListenPool(o.Listen); err != nil {
			return nil, nil, err
		}
		driver = listenDriver{Driver: riverpgxv5.New(o.Pool), listen: riverpgxv5.New(listenPool)}
	}
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		if listenPool != nil {
			listenPool.Close()
		}
		return nil, nil, fmt.Errorf("queue: %w", err)
	}
	q := &RiverQueue{client: client, log: o.Logger, works: o.Workers > 0, pool: o.Pool, w: w, listenPool: listenPool}
	return q, &Binder{w: w}, nil
}

// Binder gives the queue's worker its Runner, the dispatcher (which needs the
// queue to exist first).
type Binder struct{ w *worker }

// Bind sets the Runner jobs run through.
func (b *Binder) Bind(r Runner) { b.w.r = r }

// Enqueue implements dispatch.Queue.
func (q *RiverQueue) Enqueue(ctx context.Context, tx *store.Tx, job Job) (string, error) {
	res, err := q.client.InsertTx(ctx, tx.Conn(), args{job}, &river.InsertOpts{Queue: Queue, MaxAttempts: attemptsPerJob})
	if err != nil {
		return "", fmt.Errorf("insert job: %w", err)
	}
	return jobID(res.Job.ID), nil
}

// Depth is how many of this queue's jobs are in each state that is not yet
// final (available, scheduled, retryable, running, pending), each state
// named even when it holds none.
func (q *RiverQueue) Depth(ctx context.Context) (map[string]int64, error) {
	depth := map[string]int64{}
	for _, s := range []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable,
		rivertype.JobStateRunning, rivertype.JobStatePending} {
		depth[string(s)] = 0
	}
	rows, err := q.pool.Query(ctx, `SELECT state::text, count(*) FROM river_job
		WHERE queue = $1 AND state IN ('available', 'scheduled', 'retryable', 'running', 'pending') GROUP BY state`, Queue)
	if err != nil {
		return nil, fmt.Errorf("queue depth: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			state string
			n     int64
		)
		if err := rows.Scan(&state, &n); err != nil {
			return nil, fmt.Errorf("queue depth: %w", err)
		}
		depth[state] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("queue depth: %w", err)
	}
	return depth, nil
}

// Cancel implements dispatch.Queue: a job not yet running never runs; a
// running one has its context cancelled wherever it runs.
func (q *RiverQueue) Cancel(ctx context.Context, jobID string) error {
	digits, ok := strings.CutPrefix(jobID, "river:")
	id, err := strconv.ParseInt(digits, 10, 64)
	if !ok || err != nil {
		return fmt.Errorf("queue: %q is not a job id of this queue", jobID)
	}
	if _, err := q.client.JobCancel(ctx, id); err != nil && !errors.Is(err, river.ErrNotFound) {
		return fmt.Errorf("cancel job %d: %w", id, err)
	}
	return nil
}

// Run works jobs until ctx ends, then stops: running calls get until stopWait
// to finish, then their contexts are cancelled (their calls end cancelled,
// or are rescued by another process if this one is killed first).
func (q *RiverQueue) Run(ctx context.Context, stopWait time.Duration) error {
	if !q.works {
		<-ctx.Done() // insert-only: nothing to start
		return nil
	}
	if q.listenPool != nil {
		defer q.listenPool.Close() // after River has stopped listening
	}
	if err := q.client.Start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting: not a failure
		}
		return fmt.Errorf("queue: start: %w", err)
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), stopWait)
	defer cancel()
	if err := q.client.Stop(sctx); err != nil {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := q.client.StopAndCancel(cctx); err != nil {
			return fmt.Errorf("queue: stop: %w", err)
		}
	}
	return nil
}
