package metrics

import (
	"encoding/json"
	"io"
	"math"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/tool"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestCounts(t *testing.T) {
	m := New()
	m.ObserveCall(lcp.CallReport{Tool: "tool_x", CallID: "1"})
	m.ObserveCall(lcp.CallReport{Tool: "tool_x", CallID: "1", Ended: true, Status: 200, Duration: 30 * time.Millisecond})
	m.ObserveCall(lcp.CallReport{Tool: "tool_x", CallID: "2"})
	m.ObserveCall(lcp.CallReport{Tool: "tool_x", CallID: "2", Ended: true, Status: 504, Duration: time.Second})
	m.ObserveCall(lcp.CallReport{Tool: "tool_y", CallID: "3"})
	m.ObserveWorker(lcp.WorkerEvent{Started: true, Library: "/t/lib_a.py"})
	m.ObserveWorker(lcp.WorkerEvent{Crashed: true, Library: "/t/lib_a.py", Reason: "killed"})
	m.ObserveWorker(lcp.WorkerEvent{Started: true, Restart: true, Library: "/t/lib_a.py"})
	m.ObserveWorker(lcp.WorkerEvent{Library: "/t/lib_a.py"}) // stopped by the pool: no crash
	m.ObserveEvent(tool.Event{Kind: tool.EventLog, Library: "system_shell", Data: json.RawMessage(`{"lcp_sandbox_denial":"network"}`)})
	m.ObserveEvent(tool.Event{Kind: tool.EventLog, Library: "system_shell", Data: json.RawMessage(`{"other":1}`)})
	m.Refused("sessions")
	m.GaugeFunc("lcp_mcp_sessions", "Open sessions.", func() float64 { return 3 })
	out := scrape(t, m)
	for _, want := range []string{
		`lcp_calls_total{status="200",tool="tool_x"} 1`,
		`lcp_calls_total{status="504",tool="tool_x"} 1`,
		`lcp_call_duration_seconds_count{tool="tool_x"} 2`,
		`lcp_calls_in_flight 1`,
		`lcp_worker_starts_total{library="lib_a"} 2`,
		`lcp_worker_restarts_total{library="lib_a"} 1`,
		`lcp_worker_crashes_total{library="lib_a"} 1`,
		`lcp_sandbox_denials_total{library="system_shell",reason="network"} 1`,
		`lcp_mcp_refused_total{limit="sessions"} 1`,
		`lcp_mcp_sessions 3`,
		`go_goroutines `,
		`process_open_fds `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestTextFormat parses a scrape with Prometheus' own text parser and
// checks what a scraper reads: types, label escaping, cumulative
// histogram buckets, and the Go and process metrics dashboards expect.
func TestTextFormat(t *testing.T) {
	m := New()
	m.ObserveCall(lcp.CallReport{Tool: `odd "tool"\name`, CallID: "1"})
	m.ObserveCall(lcp.CallReport{Tool: `odd "tool"\name`, CallID: "1", Ended: true, Status: 200, Duration: 3 * time.Millisecond})
	m.ObserveCall(lcp.CallReport{Tool: "tool_x", CallID: "2", Ended: true, Status: 500, Duration: 2 * time.Second})
	m.ObserveCall(lcp.CallReport{Tool: "tool_x", CallID: "3", Ended: true, Status: 500, Duration: time.Hour})
	m.GaugeFunc("lcp_pending_approvals", "Waiting.\nfor a person", func() float64 { return 2 })
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type = %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("Prometheus' parser rejects the scrape: %v", err)
	}
	wantTypes := map[string]dto.MetricType{
		"lcp_calls_total": dto.MetricType_COUNTER, "lcp_call_duration_seconds": dto.MetricType_HISTOGRAM,
		"lcp_calls_in_flight": dto.MetricType_GAUGE, "lcp_pending_approvals": dto.MetricType_GAUGE,
		"go_goroutines": dto.MetricType_GAUGE, "go_gc_duration_seconds": dto.MetricType_SUMMARY,
		"go_memstats_alloc_bytes_total": dto.MetricType_COUNTER, "go_info": dto.MetricType_GAUGE,
	}
	if runtime.GOOS == "linux" {
		wantTypes["process_cpu_seconds_total"] = dto.MetricType_COUNTER
		wantTypes["process_resident_memory_bytes"] = dto.MetricType_GAUGE
		wantTypes["process_open_fds"] = dto.MetricType_GAUGE
		wantTypes["process_start_time_seconds"] = dto.MetricType_GAUGE
	}
	for name, typ := range wantTypes {
		f, ok := fams[name]
		if !ok {
			t.Errorf("no %s", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
		}
	}
	if got := fams["lcp_pending_approvals"].GetHelp(); got != "Waiting.\nfor a person" {
		t.Errorf("help read back as %q", got)
	}
	if v := fams["process_resident_memory_bytes"]; v != nil && v.Metric[0].GetGauge().GetValue() < 1<<20 {
		t.Errorf("resident memory %v bytes: not read from /proc", v.Metric[0].GetGauge().GetValue())
	}
	if v := fams["process_start_time_seconds"]; v != nil {
		if at := time.Unix(int64(v.Metric[0].GetGauge().GetValue()), 0); time.Since(at) > time.Hour || time.Until(at) > time.Minute {
			t.Errorf("start time %v, not this process's", at)
		}
	}
	hist := map[string]*dto.Histogram{}
	for _, mm := range fams["lcp_call_duration_seconds"].Metric {
		hist[mm.Label[0].GetValue()] = mm.GetHistogram()
	}
	h := hist["tool_x"]
	if h == nil || h.GetSampleCount() != 2 || h.GetSampleSum() != 3602 {
		t.Fatalf("tool_x histogram: %v", h)
	}
	for _, b := range h.Bucket {
		want := uint64(0)
		switch {
		case math.IsInf(b.GetUpperBound(), 1):
			want = 2
		case b.GetUpperBound() >= 2:
			want = 1 // 2 s is counted in the bucket of 2.5 and above, an hour only in +Inf
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	if hist[`odd "tool"\name`].GetSampleCount() != 1 {
		t.Errorf("the label value with quotes and a backslash did not read back: %v", hist)
	}
}
