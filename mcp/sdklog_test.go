package mcp

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestQuietUndelivered(t *testing.T) {
	for _, tc := range []struct {
		msg   string
		level slog.Level
		quiet bool
	}{
		{"calling notifications/tools/list_changed: jsonrpc2: rejected: undelivered message: stream not connected or already closed", slog.LevelWarn, true},
		{"calling notifications/prompts/list_changed: rejected: write to closed stream", slog.LevelWarn, true},
		{"calling notifications/tools/list_changed: session is closed", slog.LevelWarn, false},
		{"calling notifications/progress: stream not connected", slog.LevelWarn, false},
		{"calling notifications/tools/list_changed: stream not connected", slog.LevelError, false},
	} {
		for _, debug := range []bool{false, true} {
			var buf bytes.Buffer
			level := slog.LevelInfo
			if debug {
				level = slog.LevelDebug
			}
			l := slog.New(quietUndelivered{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})})
			l.Log(context.Background(), tc.level, tc.msg)
			out := buf.String()
			switch {
			case tc.quiet && debug && !strings.Contains(out, "level=DEBUG"):
				t.Errorf("%q at debug: %q, want a debug record", tc.msg, out)
			case tc.quiet && !debug && out != "":
				t.Errorf("%q: %q, want nothing", tc.msg, out)
			case !tc.quiet && !strings.Contains(out, "level="+tc.level.String()):
				t.Errorf("%q: %q, want it at %s", tc.msg, out, tc.level)
			}
		}
	}
}

// TestNoWarningsForSessionsWithoutStreams: a change of the tools with
// sessions that have no GET stream open logs no warning, only a debug
// record per session.
func TestNoWarningsForSessionsWithoutStreams(t *testing.T) {
	rec := &recordSink{seen: make(chan struct{}, 64)}
	srv := NewServer(testInventory(t), &ServerOptions{Logger: slog.New(rec)})
	url := serveHTTP(t, srv, nil)
	for range 3 {
		openRawSession(t, url, "2025-11-25")
	}
	srv.SDK().AddTool(&sdk.Tool{Name: "added", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	for range 3 {
		select {
		case <-rec.seen:
		case <-time.After(2 * time.Minute):
			t.Fatal("no record of the notifications")
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, r := range rec.records {
		if r.Level >= slog.LevelWarn {
			t.Errorf("logged %s %q", r.Level, r.Message)
		}
	}
}

// recordSink keeps every record, and signals each undelivered
// notification's.
type recordSink struct {
	mu      sync.Mutex
	records []slog.Record
	seen    chan struct{}
}

func (h *recordSink) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordSink) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordSink) WithGroup(string) slog.Handler            { return h }
func (h *recordSink) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.records = append(h.records, r)
	h.mu.Unlock()
	if undelivered(r.Message) {
		h.seen <- struct{}{}
	}
	return nil
}
