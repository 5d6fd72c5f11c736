package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/server"
)

// workerCmd runs `scidex worker`: the tool dispatcher and the job queue on the
// server's database, working queued tool calls, with no HTTP listener. Any
// number of workers and servers share the queue.
func workerCmd(ctx context.Context, args []string) error {
	f := newFlags("worker")
	c := addCommon(f)
	tf := addToolFlags(f, 4)
	listenURL := f.str("listen-url", "SCIDEX_LISTEN_URL", "", "direct database connection for LISTEN (the event hub's and the job queue's) when DATABASE_URL goes through a transaction pooler", connString)
	metricsAddr := f.str("metrics-addr", "SCIDEX_METRICS_ADDR", "", "serve Prometheus metrics on /metrics at this address; off when empty", hostPort)
	if err := f.Parse(args); err != nil {
		return err
	}
	toolOpts, err := tf.dispatchOpts()
	if err != nil {
		return err
	}
	log, err := c.logger()
	if err != nil {
		return err
	}
	tr, log, err := newTracing(ctx, log)
	if err != nil {
		return err
	}
	defer stopTracing(tr, log)
	var listen *pgx.ConnConfig
	if *listenURL != "" {
		if listen, err = pgx.ParseConfig(*listenURL); err != nil {
			return err
		}
	}
	db, err := openDatabase(ctx, *c.dataDir, log, true, tr.Pgx())
	if err != nil {
		return err
	}
	defer db.close()
	qo := tf.queueOpts()
	if qo.Workers == 0 {
		qo.Workers = 4
	}
	verifier, err := newVerifier(c, "", "")
	if err != nil {
		return err
	}
	m, killed := newMetrics(*metricsAddr)
	a, err := app.New(app.Config{Pool: db.pool, Listen: listen, Logger: log, Tools: toolOpts, Runtimes: tf.runtimes(log, *c.dataDir, killed), Queue: qo,
		Metrics: m, MetricsAddr: *metricsAddr, Tracing: tr,
		Server: server.Opts{Verifier: verifier}})
	if err != nil {
		return err
	}
	if err := a.Start(ctx); err != nil {
		return err
	}
	log.Info("worker: working queued tool calls", "workers", qo.Workers)
	<-ctx.Done()
	log.Info("worker: stopping")
	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop() }()
	select {
	case err := <-stopped:
		return err
	case <-time.After(time.Minute):
		return nil
	}
}
