// Package app is the composition root of the substrate: the one constructor
// that wires the store, the event hub, the durable consumers and the HTTP
// handler together, and owns every background goroutine. `scidex serve` and
// the test harness (internal/apitest) both build the server here, so what the
// tests run is what production runs.
//
// Every goroutine the substrate starts in the background (the hub's LISTEN and
// dispatch, the sweeps of expired rows, the pprof and metrics listeners, the job
// workers) belongs to the App's errgroup and has returned before Stop returns,
// so before the caller closes the database pool.
//
// Shutdown runs in this order (Serve; docs/architecture.md#shutdown):
//  1. the listener closes: no new connection, no new websocket;
//  2. requests in flight finish (a write in flight commits and is answered),
//     within the shutdown timeout;
//  3. every websocket gets a close frame, 1001 "going away" (its client
//     reconnects and resumes from its cursor), and is closed; every SSE
//     stream gets a last event saying so, and ends;
//  4. the background goroutines stop: the hub ends its subscriptions and its
//     LISTEN connection, the sweeps return;
//  5. the caller closes the pool, then stops the embedded cluster (cmd/scidex).
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/documents"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/livepage"
	"github.com/scidex/substrate/internal/metrics"
	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/server"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolreg"
	"github.com/scidex/substrate/internal/tracing"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
)

// Config is what the substrate is built from. Pool is required; the zero value
// of everything else is a working default.
type Config struct {
	Pool *pgxpool.Pool
	// Listen is the LISTEN connection of the hub and of the job queue's
	// workers; it must reach PostgreSQL directly, never through a
	// transaction pooler. Nil: the pool's settings.
	Listen *pgx.ConnConfig
	Logger *slog.Logger
	// Store and Server configure those components; New fills in what it wires
	// (their pool, logger, store, hub, consumers and readiness check).
	Store  store.Opts
	Server server.Opts
	// PprofAddr serves net/http/pprof on its own listener when set.
	PprofAddr string
	// Metrics, when set, is told what the components do (NewMetrics); with
	// MetricsAddr set it is served on /metrics there, on a listener of its
	// own. Nil: no metrics, nothing recorded.
	Metrics     *metrics.Metrics
	MetricsAddr string
	// Tracing, when set, makes spans of what the components do
	// (internal/tracing). Nil: tracing off, nothing traced.
	Tracing *tracing.Tracing
	// SweepEvery is how often expired idempotency keys and consumers (and
	// expired tool cache entries, unlisted bundle files) are
	// deleted. Default one hour.
	SweepEvery time.Duration
	// HubBuffer is each live subscriber's queue length (event.HubOpts.Buffer):
	// a subscriber that falls this far behind is dropped. Default 256.
	HubBuffer int
	// HubTimeout bounds how long Start waits for the hub to listen. Default 30s.
	HubTimeout time.Duration
	// Tools configures the tool dispatcher: its runtimes (registered by the
	// caller: cmd/scidex lists this build's), rate limits, cache and queue.
	// New fills in the store, logger and bundle store.
	Tools dispatch.Opts
	// Runtimes, when set, composes the runtime registry once the store exists
	// (in-process tools that write artifacts need it); it replaces
	// Tools.Runtimes.
	Runtimes func(*store.Store) (*runtimes.Registry, error)
	// Queue configures the job queue of asynchronous tool calls (its pool and
	// logger are filled in). Queue.Workers 0 makes this process insert-only.
	Queue queue.Opts
	// NoQueue leaves the dispatcher without a queue: asynchronous calls are
	// refused.
	NoQueue bool
	// OnStart runs once the hub listens, before Start returns: what must be
	// in the database before the first request (the skills' tools and skill
	// artifacts). A failure stops the start.
	OnStart []func(ctx context.Context, a *App) error
}

// App is the substrate wired together.
type App struct {
	// syncMCP lists the active tools to the MCP server (syncMCPTools); nil
	// without MCP.
	syncMCP func()

	Store     *store.Store
	Hub       *event.Hub
	Consumers *event.Consumers
	Handler   *server.Server
	Dispatch  *dispatch.Dispatcher
	Registrar *toolreg.Registrar
	Packets   *workpacket.Packets
	Queue     *queue.RiverQueue

	heartbeat *queue.Heartbeat
	cfg       Config
	log       *slog.Logger
	runtimes  *runtimes.Registry
	group     *errgroup.Group
	cancel    context.CancelFunc
	pprof     *http.Server
	// metricsSrv serves /metrics on MetricsAddr.
	metricsSrv *http.Server
}

// New builds the components; it starts nothing.
func New(cfg Config) (*App, error) {
	if cfg.Pool == nil {
		return nil, errors.New("app: a database pool is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SweepEvery == 0 {
		cfg.SweepEvery = time.Hour
	}
	if cfg.HubTimeout == 0 {
		cfg.HubTimeout = 30 * time.Second
	}
	if cfg.MetricsAddr != "" && cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	cfg.wireMetrics()
	cfg.wireTracing()
	so := cfg.Store
	so.Pool, so.Logger = cfg.Pool, cfg.Logger
	reg := cfg.Tools.Runtimes
	so.ToolCheck = toolreg.ToolCheck(func() *runtimes.Registry { return reg }, cfg.Tools.Caps)
	st := store.New(so)
	if cfg.Runtimes != nil {
		var err error
		if reg, err = cfg.Runtimes(st); err != nil {
			return nil, fmt.Errorf("app: runtimes: %w", err)
		}
	}
	do := cfg.Tools
	do.Runtimes = reg
	// Every process that runs calls beats, with or without queue workers: its
	// synchronous calls name it too.
	hb := queue.NewHeartbeat(cfg.Pool, cfg.Logger)
	if do.Process == "" {
		do.Process = hb.ID()
	}
	var (
		q    *queue.RiverQueue
		bind *queue.Binder
	)
	if !cfg.NoQueue {
		qo := cfg.Queue
		qo.Pool, qo.Logger, qo.Process = cfg.Pool, cfg.Logger, do.Process
		if qo.Listen == nil {
			qo.Listen = cfg.Listen
		}
		var err error
		if q, bind, err = queue.New(qo); err != nil {
			return nil, err
		}
		do.Queue = q
	}
	do.Store, do.Logger = st, cfg.Logger
	if do.Bundles == nil {
		do.Bundles = toolreg.DBBundle{Pool: cfg.Pool}
	}
	disp := dispatch.New(do)
	if bind != nil {
		bind.Bind(disp)
	}
	consumers := event.NewConsumers(cfg.Pool)
	ho := event.HubOpts{Pool: cfg.Pool, Listen: cfg.Listen, Logger: cfg.Logger, Buffer: cfg.HubBuffer, Instance: consumers.Instance()}
	if m := cfg.Metrics; m != nil {
		ho.Metrics = m
	}
	hub := event.NewHub(ho)
	if m := cfg.Metrics; m != nil {
		m.WatchHub(metrics.HubOpts{SubscribersFunc: hub.Subscribers, LagFunc: hub.Lag})
		if q != nil {
			m.WatchQueue(q.Depth)
		}
	}
	o := cfg.Server
	registrar, packets := toolreg.New(st), workpacket.New(disp)
	o.Store, o.Hub, o.Consumers, o.Logger = st, hub, consumers, cfg.Logger
	o.Dispatch, o.Registrar, o.Packets = disp, registrar, packets
	if o.ReadyFunc == nil {
		o.ReadyFunc = st.Ping
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	return &App{Store: st, Hub: hub, Consumers: consumers, Handler: server.New(o), Dispatch: disp, Registrar: registrar, Packets: packets, Queue: q, heartbeat: hb, runtimes: reg, cfg: cfg, log: cfg.Logger}, nil
}

// Start starts the background work and returns once the hub listens: from then
// on every event committed reaches the subscribers that match it. If the hub
// cannot listen, Start stops what it started and says why.
func (a *App) Start(ctx context.Context) error {
	if a.group != nil {
		return errors.New("app: already started")
	}
	ctx, a.cancel = context.WithCancel(context.WithoutCancel(ctx))
	a.group, ctx = errgroup.WithContext(ctx)
	hubErr := make(chan error, 1)
	a.group.Go(func() error {
		err := a.Hub.Run(ctx)
		if ctx.Err() != nil {
			err = nil // stopped, not failed
		}
		hubErr <- err
		if err != nil {
			return fmt.Errorf("event hub: %w", err)
		}
		return nil
	})
	a.group.Go(func() error { return a.sweep(ctx, "idempotency keys", a.Store.DeleteExpiredIdempotencyKeys) })
	a.group.Go(func() error { return a.sweep(ctx, "event consumers", a.Consumers.DeleteExpired) })
	a.group.Go(func() error { return a.sweep(ctx, "tool result cache entries", a.Dispatch.CollectCache) })
	a.group.Go(func() error { return a.sweep(ctx, "unlisted tool bundle files", a.Registrar.CollectFiles) })
	a.group.Go(func() error { return a.Dispatch.Run(ctx) })
	// The process is registered before it can run a call; then it beats, and
	// sweeps for the calls of processes that stopped, each on its own ticker.
	if err := a.heartbeat.Beat(ctx); err != nil {
		_ = a.Stop()
		return err
	}
	a.group.Go(func() error { return a.heartbeat.Run(ctx) })
	a.group.Go(func() error { return a.Dispatch.Sweep(ctx) })
	// The server's own subscriptions exist once Start returns.
	for _, watch := range []func(context.Context) (func() error, error){
		func(ctx context.Context) (func() error, error) { return a.Dispatch.WatchCancels(ctx, a.Hub) },
		a.syncMCPTools,
	} {
		run, err := watch(ctx)
		if err != nil {
			_ = a.Stop()
			return err
		}
		a.group.Go(run)
	}
	if a.Queue != nil {
		a.group.Go(func() error { return a.Queue.Run(ctx, 10*time.Second) })
	}
	if a.cfg.MetricsAddr != "" {
		if err := a.startMetrics(ctx); err != nil {
			_ = a.Stop()
			return err
		}
	}
	if a.cfg.PprofAddr != "" {
		if err := a.startPprof(ctx); err != nil {
			_ = a.Stop()
			return err
		}
	}
	timer := time.NewTimer(a.cfg.HubTimeout)
	defer timer.Stop()
	select {
	case <-a.Hub.Ready():
		if err := a.registerServerDocuments(ctx); err != nil {
			_ = a.Stop()
			return err
		}
		for _, f := range a.cfg.OnStart {
			if err := f(ctx, a); err != nil {
				_ = a.Stop()
				return err
			}
		}
		if a.syncMCP != nil {
			a.syncMCP() // the tools OnStart installed (syncMCPTools)
		}
		return nil
	case err := <-hubErr:
		// The hub failed, or stopped because other background work failed
		// first: say which.
		stopErr := a.Stop()
		if err == nil && stopErr != nil {
			return stopErr
		}
		if err == nil {
			err = errors.New("stopped before it listened")
		}
		return fmt.Errorf("event hub: %w", err)
	case <-timer.C:
		_ = a.Stop()
		return fmt.Errorf("event hub: could not LISTEN within %s (see the log for why)", a.cfg.HubTimeout)
	}
}

// Stop ends the background work and waits for every goroutine of it. It
// returns the first failure among them; calling it again is harmless.
func (a *App) Stop() error {
	if a.group == nil {
		return nil
	}
	a.cancel()
	if a.pprof != nil {
		_ = a.pprof.Close()
	}
	if a.metricsSrv != nil {
		_ = a.metricsSrv.Close()
	}
	err := a.group.Wait()
	// It runs nothing more: a call it still names (cut off by a shutdown past
	// its timeout) is another process's to recover at once.
	if gerr := a.heartbeat.Gone(context.Background()); gerr != nil {
		a.log.Warn("tool calls: unregister this process", "err", gerr)
	}
	// The runtimes' sessions and child processes outlive no call: close them
	// once the queue and every request have stopped.
	return errors.Join(err, a.runtimes.Close())
}

// Serve serves HTTP on ln until ctx ends, then shuts down in the package
// doc's order, waiting at most wait for requests and websockets, and stops the
// background work. It returns once all of it has ended; the pool is the
// caller's to close after.
func (a *App) Serve(ctx context.Context, ln net.Listener, wait time.Duration) error {
	srv := &http.Server{Handler: a.cfg.Tracing.HTTP(a.cfg.Metrics.InstrumentHTTP(a.Handler)), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var serveErr error
	select {
	case err := <-served:
		serveErr = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("shutting down: closing the listener, draining requests", "timeout", wait)
	sctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	sockets := make(chan struct{})
	srv.RegisterOnShutdown(func() {
		defer close(sockets)
		if m := a.Handler.MCP(); m != nil {
			m.Close() // its open subscriptions/listen streams end, so the requests drain
		}
		n, err := a.Handler.CloseWebsockets(sctx)
		a.log.Info("websockets closed", "count", n, "err", err)
		n, err = a.Handler.CloseEventStreams(sctx)
		a.log.Info("event streams closed", "count", n, "err", err)
	})
	shutdownErr := srv.Shutdown(sctx)
	if serveErr == nil {
		// RegisterOnShutdown ran it on its own goroutine: Shutdown does not
		// wait for it (hijacked connections are not its), so wait here, and
		// say what drained in the order it did.
		<-sockets
	}
	if shutdownErr != nil {
		a.log.Warn("requests did not drain in time", "err", shutdownErr)
	} else {
		a.log.Info("requests drained")
	}
	err := a.Stop()
	a.log.Info("background work stopped", "err", err)
	return errors.Join(serveErr, err)
}

// sweep deletes expired rows every SweepEvery until ctx ends.
func (a *App) sweep(ctx context.Context, what string, del func(context.Context, time.Time) (int64, error)) error {
	t := time.NewTicker(a.cfg.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			if n, err := del(ctx, now); err != nil && ctx.Err() == nil {
				a.log.Warn("sweep "+what, "err", err)
			} else if n > 0 {
				a.log.Info("expired "+what+" deleted", "count", n)
			}
		}
	}
}

// startPprof exposes the runtime profiles on their own listener, never on the
// public one.
func (a *App) startPprof(ctx context.Context) error {
	ln, err := net.Listen("tcp", a.cfg.PprofAddr)
	if err != nil {
		return fmt.Errorf("pprof listen on %s: %w", a.cfg.PprofAddr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	a.pprof = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	a.log.Info("pprof listening", "addr", ln.Addr().String())
	a.group.Go(func() error {
		if err := a.pprof.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && ctx.Err() == nil {
			a.log.Warn("pprof stopped", "err", err)
		}
		return nil
	})
	return nil
}

// registerServerDocuments registers, in production mode (the server's
// trusted documents), the GraphQL documents the server's own clients send:
// the MCP tools' operations and the live page's, so that both work for every
// actor there.
func (a *App) registerServerDocuments(ctx context.Context) error {
	docs := a.cfg.Server.TrustedDocuments
	if docs == nil {
		return nil
	}
	var list []documents.Document
	add := func(m map[string]string) {
		for name, d := range m {
			list = append(list, documents.Document{Name: name, Document: d})
		}
	}
	if m := a.Handler.MCP(); m != nil {
		add(m.Documents())
	}
	add(livepage.Documents())
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	reg, err := docs.Register(ctx, "server", list)
	if err != nil {
		return fmt.Errorf("trusted documents: %w", err)
	}
	added := 0
	for _, r := range reg {
		if r.New {
			added++
		}
	}
	a.log.Info("trusted documents: the server's own registered", "documents", len(reg), "new", added)
	return nil
}
