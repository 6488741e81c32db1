// Package metrics is the Prometheus instrumentation of lcp's servers
// (lcp mcp --http, lcp serve): what they count, under which names, and
// the handler that serves /metrics. It subscribes to the engine's hooks
// (lcp.Config.OnCall, OnWorker, OnEvent) and to the MCP server's
// (mcp.ServerOptions.OnRefused) instead of keeping globals; gauges read
// the servers' state when scraped.
//
//	m := metrics.New()
//	cfg.OnCall, cfg.OnWorker = m.ObserveCall, m.ObserveWorker
//	m.GaugeFunc("lcp_mcp_sessions", "Open MCP sessions.", func() float64 { return float64(srv.Sessions()) })
//	mux.Handle("/metrics", m.Handler())
//
// Names: lcp_calls_total{tool,status}, lcp_call_duration_seconds{tool}
// (histogram), lcp_calls_in_flight, lcp_worker_starts_total{library},
// lcp_worker_restarts_total{library}, lcp_worker_crashes_total{library},
// lcp_sandbox_denials_total{library,reason}, lcp_mcp_refused_total{limit},
// plus the gauges a server adds (sessions, pending approvals) and Go's
// process and runtime collectors (go_goroutines, process_open_fds,
// process_resident_memory_bytes...).
package metrics

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/tool"
)

// SandboxDenialKey marks a call's log event as a sandbox denial: the
// sandbox reports each action it refused as a tool.Event of kind
// tool.EventLog whose Data is a JSON object with this key set to what it
// denied ("network", "filesystem"), and Library set. Metrics counts them
// in lcp_sandbox_denials_total.
const SandboxDenialKey = builtin.SandboxDenialKey

// Metrics holds a registry and the collectors of one process.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	starts   *prometheus.CounterVec
	restarts *prometheus.CounterVec
	crashes  *prometheus.CounterVec
	denials  *prometheus.CounterVec
	refused  *prometheus.CounterVec
}

// New returns the collectors, registered with Go's runtime and process
// collectors in a registry of their own.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lcp_calls_total",
		Help: "Tool calls ended, by tool and LCP status code (200, 500, 400, 404, 499 cancelled, 504 timed out)."},
		[]string{"tool", "status"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "lcp_call_duration_seconds",
		Help:    "How long tool calls ran, waits for a person included.",
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}},
		[]string{"tool"})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{Name: "lcp_calls_in_flight", Help: "Tool calls running."})
	m.starts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lcp_worker_starts_total",
		Help: "Python worker processes started, restarts included."}, []string{"library"})
	m.restarts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lcp_worker_restarts_total",
		Help: "Python worker processes started after a crash of the previous one (state reset)."}, []string{"library"})
	m.crashes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lcp_worker_crashes_total",
		Help: "Python worker processes that died without being stopped (crash, os._exit, killed for a time limit)."}, []string{"library"})
	m.denials = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lcp_sandbox_denials_total",
		Help: "Actions the sandbox refused, by library and reason."}, []string{"library", "reason"})
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lcp_mcp_refused_total",
		Help: "MCP requests refused by a limit (calls, session_calls, sessions, draining)."}, []string{"limit"})
	m.reg.MustRegister(m.calls, m.duration, m.inFlight, m.starts, m.restarts, m.crashes, m.denials, m.refused,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry returns the registry, for hosts that add their own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// GaugeFunc registers a gauge whose value f gives at each scrape (the
// sessions of a server, its pending approvals).
func (m *Metrics) GaugeFunc(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// ObserveCall counts a call: an lcp.Config.OnCall.
func (m *Metrics) ObserveCall(r lcp.CallReport) {
	if !r.Ended {
		m.inFlight.Inc()
		return
	}
	m.inFlight.Dec()
	m.calls.WithLabelValues(r.Tool, strconv.Itoa(r.Status)).Inc()
	m.duration.WithLabelValues(r.Tool).Observe(r.Duration.Seconds())
}

// ObserveWorker counts a worker's start or end: an lcp.Config.OnWorker.
func (m *Metrics) ObserveWorker(e lcp.WorkerEvent) {
	lib := libraryLabel(e.Library)
	switch {
	case e.Started:
		m.starts.WithLabelValues(lib).Inc()
		if e.Restart {
			m.restarts.WithLabelValues(lib).Inc()
		}
	case e.Crashed:
		m.crashes.WithLabelValues(lib).Inc()
	}
}

// ObserveEvent counts the sandbox denials among a call's events: an
// lcp.Config.OnEvent (join it with other subscribers, tool.JoinSinks).
func (m *Metrics) ObserveEvent(e tool.Event) {
	if e.Kind != tool.EventLog || len(e.Data) == 0 || !strings.Contains(string(e.Data), SandboxDenialKey) {
		return
	}
	if reason, ok := denialReason(e.Data); ok {
		m.SandboxDenied(e.Library, reason)
	}
}

// SandboxDenied counts an action the sandbox refused.
func (m *Metrics) SandboxDenied(library, reason string) {
	m.denials.WithLabelValues(libraryLabel(library), reason).Inc()
}

// Refused counts a request an MCP limit refused: an
// mcp.ServerOptions.OnRefused.
func (m *Metrics) Refused(limit string) { m.refused.WithLabelValues(limit).Inc() }

// libraryLabel is a library's stem: paths would make labels differ
// between machines and workspaces.
func libraryLabel(path string) string {
	if path == "" {
		return "unknown"
	}
	return strings.TrimSuffix(filepath.Base(path), ".py")
}
