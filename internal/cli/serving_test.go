package cli

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/lcptools/lcp"
)

// TestLogCalls pins the lines logCalls writes: the attributes, their
// order and the levels, with and without -v.
func TestLogCalls(t *testing.T) {
	started := lcp.CallReport{Tool: "tool_echo", CallID: "c1", Nested: true}
	ok := lcp.CallReport{Tool: "tool_echo", CallID: "c1", Ended: true, Status: 200, Duration: 1500 * time.Millisecond}
	failed := lcp.CallReport{Tool: "tool_x", CallID: "c2", Ended: true, Status: 500, Err: errors.New("boom"), Duration: 2 * time.Millisecond}
	cases := []struct {
		name  string
		level slog.Level
		r     lcp.CallReport
		want  string
	}{
		{"started, debug", slog.LevelDebug, started, "level=DEBUG msg=\"call started\" call_id=c1 tool=tool_echo nested=true\n"},
		{"started, info", slog.LevelInfo, started, ""},
		{"ended", slog.LevelInfo, ok, "level=INFO msg=\"call ended\" call_id=c1 tool=tool_echo status=200 duration_ms=1500\n"},
		{"failed", slog.LevelInfo, failed, "level=WARN msg=\"call ended\" call_id=c2 tool=tool_x status=500 duration_ms=2 error=boom\n"},
		{"ended, warn level", slog.LevelWarn, ok, ""},
		{"failed, warn level", slog.LevelWarn, failed, "level=WARN msg=\"call ended\" call_id=c2 tool=tool_x status=500 duration_ms=2 error=boom\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level,
				ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey && len(groups) == 0 {
						return slog.Attr{}
					}
					return a
				}}))
			var seen []lcp.CallReport
			logCalls(log, func(r lcp.CallReport) { seen = append(seen, r) })(tc.r)
			if got := buf.String(); got != tc.want {
				t.Errorf("logged %q, want %q", got, tc.want)
			}
			if len(seen) != 1 || seen[0].CallID != tc.r.CallID {
				t.Errorf("next saw %v, want the report once", seen)
			}
		})
	}
}
