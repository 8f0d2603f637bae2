// Package metrics exposes what coachd does as Prometheus metrics: turns,
// time to first token, tokens, tool calls, rejections, open streams and
// upstream errors. It implements coachd.Observer.
package metrics

import (
	"net/http"
	"time"

	"github.com/coachd/coachd"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is a registry with coachd's metrics.
type Metrics struct {
	reg         *prometheus.Registry
	turns       *prometheus.CounterVec
	turnSeconds *prometheus.HistogramVec
	ttft        *prometheus.HistogramVec
	tokens      *prometheus.CounterVec
	tools       *prometheus.CounterVec
	toolSeconds *prometheus.HistogramVec
	rejected    *prometheus.CounterVec
	upstream    *prometheus.CounterVec
	streams     prometheus.Gauge
	dbTx        *prometheus.HistogramVec

	// The children of fixed labels, looked up once: WithLabelValues
	// hashes its values and takes the vector's lock at every call, a
	// dozen times a turn.
	tokenKinds      [4]prometheus.Counter // input, output, cache_read, cache_write
	dbRead, dbWrite prometheus.Observer
}

var _ coachd.Observer = (*Metrics)(nil)

// New returns the metrics, with the Go runtime's and the process's.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "coachd_turns_total",
			Help: "Turns ended, by agent and stop reason."}, []string{"agent", "stop_reason"}),
		turnSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "coachd_turn_duration_seconds",
			Help: "Turn duration.", Buckets: []float64{.25, .5, 1, 2, 5, 10, 20, 30, 60, 120, 300}}, []string{"agent"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "coachd_time_to_first_token_seconds",
			Help: "Time from the turn's start to its first streamed text.", Buckets: []float64{.1, .25, .5, 1, 2, 4, 8, 16, 32}}, []string{"agent"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "coachd_tokens_total",
			Help: "Tokens used, by kind: input, output, cache_read, cache_write."}, []string{"kind"}),
		tools: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "coachd_tool_calls_total",
			Help: "Tool executions, by tool and outcome (ok, error)."}, []string{"tool", "outcome"}),
		toolSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "coachd_tool_duration_seconds",
			Help: "Tool execution latency.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)}, []string{"tool"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "coachd_rejections_total",
			Help: "Requests refused by a limit: budget_exhausted, rate_limit_exceeded."}, []string{"code"}),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "coachd_upstream_errors_total",
			Help: "Model errors, by code."}, []string{"code"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{Name: "coachd_open_streams",
			Help: "SSE streams open now."}),
		dbTx: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "coachd_db_transaction_seconds",
			Help: "Committed database transactions, begin to commit, by kind (read, write).", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9)}, []string{"kind"}),
	}
	for i, kind := range []string{"input", "output", "cache_read", "cache_write"} {
		m.tokenKinds[i] = m.tokens.WithLabelValues(kind)
	}
	m.dbRead, m.dbWrite = m.dbTx.WithLabelValues("read"), m.dbTx.WithLabelValues("write")
	m.reg.MustRegister(m.turns, m.turnSeconds, m.ttft, m.tokens, m.tools, m.toolSeconds, m.rejected, m.upstream, m.streams, m.dbTx,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

func (m *Metrics) TurnEnded(agent, stop string, u coachd.Usage, d, first time.Duration) {
	m.turns.WithLabelValues(agent, stop).Inc()
	m.turnSeconds.WithLabelValues(agent).Observe(d.Seconds())
	if first > 0 {
		m.ttft.WithLabelValues(agent).Observe(first.Seconds())
	}
	m.tokenKinds[0].Add(float64(u.InputTokens))
	m.tokenKinds[1].Add(float64(u.OutputTokens))
	m.tokenKinds[2].Add(float64(u.CacheReadInputTokens))
	m.tokenKinds[3].Add(float64(u.CacheCreationInputTokens))
}

func (m *Metrics) ToolCalled(tool string, ok bool, d time.Duration) {
	outcome := "ok"
	if !ok {
		outcome = "error"
	}
	m.tools.WithLabelValues(tool, outcome).Inc()
	m.toolSeconds.WithLabelValues(tool).Observe(d.Seconds())
}

func (m *Metrics) UpstreamError(code string) { m.upstream.WithLabelValues(code).Inc() }
func (m *Metrics) Rejected(code string)      { m.rejected.WithLabelValues(code).Inc() }
func (m *Metrics) StreamOpened()             { m.streams.Inc() }
func (m *Metrics) StreamClosed()             { m.streams.Dec() }

func (m *Metrics) DBTransaction(kind string, d time.Duration) {
	switch kind {
	case "read":
		m.dbRead.Observe(d.Seconds())
	case "write":
		m.dbWrite.Observe(d.Seconds())
	default:
		m.dbTx.WithLabelValues(kind).Observe(d.Seconds())
	}
}

// WatchWriter exports a SQLite store's writer counts, read at each
// scrape. The busy seconds over the wall time are the writer's
// utilisation: near 1, writes queue behind it and it limits the server.
func (m *Metrics) WatchWriter(read func() coachd.WriteStats) {
	m.reg.MustRegister(writerCollector(read))
}

type writerCollector func() coachd.WriteStats

var writerDescs = struct{ busy, stmts, txs, commits, pages, ckpts *prometheus.Desc }{
	busy: prometheus.NewDesc("coachd_sqlite_writer_busy_seconds_total",
		"Time the SQLite writer was held by a write transaction or a group's COMMIT.", nil, nil),
	stmts: prometheus.NewDesc("coachd_sqlite_writer_statements_total",
		"Statements run on the SQLite writer, savepoints included.", nil, nil),
	txs: prometheus.NewDesc("coachd_sqlite_write_transactions_total",
		"Write transactions begun on SQLite (members of a group commit each count).", nil, nil),
	commits: prometheus.NewDesc("coachd_sqlite_commits_total",
		"COMMITs on SQLite: the write transactions of a group share one.", nil, nil),
	pages: prometheus.NewDesc("coachd_sqlite_wal_pages_total",
		"Pages the SQLite commits wrote to the WAL.", nil, nil),
	ckpts: prometheus.NewDesc("coachd_sqlite_checkpoints_total",
		"Background WAL checkpoints done.", nil, nil),
}

func (c writerCollector) Describe(ch chan<- *prometheus.Desc) {
	d := writerDescs
	for _, x := range []*prometheus.Desc{d.busy, d.stmts, d.txs, d.commits, d.pages, d.ckpts} {
		ch <- x
	}
}

func (c writerCollector) Collect(ch chan<- prometheus.Metric) {
	s, d := c(), writerDescs
	for _, x := range []struct {
		desc *prometheus.Desc
		v    float64
	}{{d.busy, s.Busy.Seconds()}, {d.stmts, float64(s.Statements)}, {d.txs, float64(s.Transactions)},
		{d.commits, float64(s.Commits)}, {d.pages, float64(s.WALPages)}, {d.ckpts, float64(s.Checkpoints)}} {
		ch <- prometheus.MustNewConstMetric(x.desc, prometheus.CounterValue, x.v)
	}
}
