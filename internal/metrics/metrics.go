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
// plus the gauges a server adds (sessions, pending approvals) and the Go
// runtime's and the process's metrics under the names Prometheus' Go
// client gives them (go_goroutines, process_open_fds,
// process_resident_memory_bytes...), in the text format (version 0.0.4)
// this package writes itself.
package metrics

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

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

// Metrics holds the metrics of one process.
type Metrics struct {
	reg      registry
	calls    *family
	duration *family
	inFlight *family
	starts   *family
	restarts *family
	crashes  *family
	denials  *family
	refused  *family
}

// New returns the metrics, with Go's runtime and process metrics beside
// lcp's own. Nothing is registered before a server calls it.
func New() *Metrics {
	m := &Metrics{}
	m.calls = newFamily("lcp_calls_total",
		"Tool calls ended, by tool and LCP status code (200, 500, 400, 404, 499 cancelled, 504 timed out).",
		counterKind, "tool", "status")
	m.duration = newFamily("lcp_call_duration_seconds", "How long tool calls ran, waits for a person included.",
		histogramKind, "tool")
	m.duration.buckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
	m.inFlight = newFamily("lcp_calls_in_flight", "Tool calls running.", gaugeKind)
	m.starts = newFamily("lcp_worker_starts_total", "Python worker processes started, restarts included.", counterKind, "library")
	m.restarts = newFamily("lcp_worker_restarts_total",
		"Python worker processes started after a crash of the previous one (state reset).", counterKind, "library")
	m.crashes = newFamily("lcp_worker_crashes_total",
		"Python worker processes that died without being stopped (crash, os._exit, killed for a time limit).", counterKind, "library")
	m.denials = newFamily("lcp_sandbox_denials_total", "Actions the sandbox refused, by library and reason.", counterKind, "library", "reason")
	m.refused = newFamily("lcp_mcp_refused_total",
		"MCP requests refused by a limit (calls, session_calls, sessions, draining).", counterKind, "limit")
	for _, f := range []*family{m.calls, m.duration, m.inFlight, m.starts, m.restarts, m.crashes, m.denials, m.refused} {
		m.reg.register(f)
	}
	m.reg.registerRuntime()
	m.reg.registerProcess()
	return m
}

// Handler serves the metrics in Prometheus' text format (version 0.0.4).
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		if r.Method == http.MethodHead {
			return
		}
		_ = m.reg.write(w) // a scraper that went away
	})
}

// GaugeFunc registers a gauge whose value f gives at each scrape (the
// sessions of a server, its pending approvals).
func (m *Metrics) GaugeFunc(name, help string, f func() float64) {
	g := newFamily(name, help, gaugeKind)
	g.collect = func(emit func(sample)) { emit(sample{value: f()}) }
	m.reg.register(g)
}

// ObserveCall counts a call: an lcp.Config.OnCall.
func (m *Metrics) ObserveCall(r lcp.CallReport) {
	if !r.Ended {
		m.inFlight.add(1)
		return
	}
	m.inFlight.add(-1)
	m.calls.add(1, r.Tool, strconv.Itoa(r.Status))
	m.duration.observe(r.Duration.Seconds(), r.Tool)
}

// ObserveWorker counts a worker's start or end: an lcp.Config.OnWorker.
func (m *Metrics) ObserveWorker(e lcp.WorkerEvent) {
	lib := libraryLabel(e.Library)
	switch {
	case e.Started:
		m.starts.add(1, lib)
		if e.Restart {
			m.restarts.add(1, lib)
		}
	case e.Crashed:
		m.crashes.add(1, lib)
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
	m.denials.add(1, libraryLabel(library), reason)
}

// Refused counts a request an MCP limit refused: an
// mcp.ServerOptions.OnRefused.
func (m *Metrics) Refused(limit string) { m.refused.add(1, limit) }

// libraryLabel is a library's stem: paths would make labels differ
// between machines and workspaces.
func libraryLabel(path string) string {
	if path == "" {
		return "unknown"
	}
	return strings.TrimSuffix(filepath.Base(path), ".py")
}
