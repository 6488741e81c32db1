package metrics

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
