package metrics

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// scrapeTimeout bounds what a collector asks the database at a scrape.
const scrapeTimeout = 2 * time.Second

// WatchPool reports the pool's use and its waits, read from pool.Stat() at
// each scrape.
func (m *Metrics) WatchPool(pool *pgxpool.Pool) {
	if m == nil || pool == nil {
		return
	}
	m.reg.MustRegister(poolCollector{pool})
}

var (
	poolConns = prometheus.NewDesc("scidex_db_pool_connections", "Connections of the database pool, by state (acquired, idle, constructing).", []string{"state"}, nil)
	poolMax   = prometheus.NewDesc("scidex_db_pool_max_connections", "The most connections the database pool opens.", nil, nil)
	poolAcq   = prometheus.NewDesc("scidex_db_pool_acquires_total", "Connections acquired from the database pool.", nil, nil)
	poolAcqS  = prometheus.NewDesc("scidex_db_pool_acquire_seconds_total", "Time spent acquiring connections from the database pool, waits included.", nil, nil)
	poolEmpty = prometheus.NewDesc("scidex_db_pool_empty_acquires_total", "Acquires that found no idle connection and waited for one.", nil, nil)
	poolWait  = prometheus.NewDesc("scidex_db_pool_empty_acquire_wait_seconds_total", "Time acquires spent waiting because no connection was idle.", nil, nil)
	poolCanc  = prometheus.NewDesc("scidex_db_pool_canceled_acquires_total", "Acquires cancelled (their context ended) before they got a connection.", nil, nil)
	poolNew   = prometheus.NewDesc("scidex_db_pool_new_connections_total", "Connections the database pool opened.", nil, nil)
)

type poolCollector struct{ pool *pgxpool.Pool }

func (poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolConns, poolMax, poolAcq, poolAcqS, poolEmpty, poolWait, poolCanc, poolNew} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	count := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(poolConns, float64(s.AcquiredConns()), "acquired")
	gauge(poolConns, float64(s.IdleConns()), "idle")
	gauge(poolConns, float64(s.ConstructingConns()), "constructing")
	gauge(poolMax, float64(s.MaxConns()))
	count(poolAcq, float64(s.AcquireCount()))
	count(poolAcqS, s.AcquireDuration().Seconds())
	count(poolEmpty, float64(s.EmptyAcquireCount()))
	count(poolWait, s.EmptyAcquireWaitTime().Seconds())
	count(poolCanc, float64(s.CanceledAcquireCount()))
	count(poolNew, float64(s.NewConnsCount()))
}

// HubOpts is what WatchHub reads at each scrape.
type HubOpts struct {
	// SubscribersFunc is how many live subscribers the hub has.
	SubscribersFunc func() int
	// LagFunc is the id of the newest event that may be handed out and the
	// id of the last one the hub dispatched.
	LagFunc func(ctx context.Context) (newest, dispatched int64, err error)
}

// WatchHub reports the event hub's subscribers and how far its dispatch is
// behind the log.
func (m *Metrics) WatchHub(o HubOpts) {
	if m == nil {
		return
	}
	m.reg.MustRegister(hubCollector{o})
}

var (
	hubSubs       = prometheus.NewDesc("scidex_event_subscribers", "Live subscribers of the event hub (websocket, SSE and in-process subscriptions).", nil, nil)
	hubNewest     = prometheus.NewDesc("scidex_event_newest_id", "Id of the newest event that may be handed out (committed, and below the horizon of transactions still running).", nil, nil)
	hubDispatched = prometheus.NewDesc("scidex_event_dispatched_id", "Id of the last event the hub dispatched to its subscribers.", nil, nil)
	hubLag        = prometheus.NewDesc("scidex_event_lag_events", "How far the hub's dispatch is behind the log: the newest event's id minus the last dispatched one's, 0 when caught up.", nil, nil)
)

type hubCollector struct{ o HubOpts }

func (hubCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{hubSubs, hubNewest, hubDispatched, hubLag} {
		ch <- d
	}
}

func (c hubCollector) Collect(ch chan<- prometheus.Metric) {
	if c.o.SubscribersFunc != nil {
		ch <- prometheus.MustNewConstMetric(hubSubs, prometheus.GaugeValue, float64(c.o.SubscribersFunc()))
	}
	if c.o.LagFunc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	newest, dispatched, err := c.o.LagFunc(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(hubNewest, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(hubNewest, prometheus.GaugeValue, float64(newest))
	ch <- prometheus.MustNewConstMetric(hubDispatched, prometheus.GaugeValue, float64(dispatched))
	ch <- prometheus.MustNewConstMetric(hubLag, prometheus.GaugeValue, float64(max(newest-dispatched, 0)))
}

// WatchQueue reports the job queue's depth at each scrape: depth gives the
// number of jobs in each state (available, scheduled, retryable, running…).
func (m *Metrics) WatchQueue(depth func(ctx context.Context) (map[string]int64, error)) {
	if m == nil || depth == nil {
		return
	}
	m.reg.MustRegister(queueCollector{depth})
}

var queueJobs = prometheus.NewDesc("scidex_queue_jobs", "Jobs of asynchronous tool calls in the queue, by state (available, scheduled, retryable, running).", []string{"state"}, nil)

type queueCollector struct {
	depth func(ctx context.Context) (map[string]int64, error)
}

func (queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- queueJobs }

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	depth, err := c.depth(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueJobs, err)
		return
	}
	for state, n := range depth {
		ch <- prometheus.MustNewConstMetric(queueJobs, prometheus.GaugeValue, float64(n), state)
	}
}
