package mcp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// eventLog collects the events of one call.
type eventLog struct {
	mu     sync.Mutex
	events []tool.Event
}

func (l *eventLog) add(e tool.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) of(kind tool.EventKind) []tool.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []tool.Event
	for _, e := range l.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

var logLevels = map[string]bool{"debug": true, "info": true, "notice": true, "warning": true, "error": true, "critical": true, "alert": true, "emergency": true}

// TestCallEventsOfServerEverything: the reference server's progress
// notifications and log messages reach the subscribers of the call they
// belong to (what lcp call and the web page show), not only the
// toolset-wide subscriber.
func TestCallEventsOfServerEverything(t *testing.T) {
	dir := needNode(t)
	script := filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	var wide eventLog
	// Debug: the server's simulated log messages have random levels, and
	// the test must see every one.
	c := newClient(t, []ServerConfig{{Alias: "everything", Command: "node", Args: []string{script, "stdio"},
		// In its box the server sees the system and what its entry shows.
		Sandbox: &SandboxConfig{Read: []string{dir}}}},
		&ClientOptions{OnEvent: wide.add, LogLevel: "debug"})
	ctx := context.Background()

	var call eventLog
	res, err := tool.Call(ctx, c, "everything::trigger-long-running-operation", json.RawMessage(`{"duration":0.3,"steps":3}`),
		&tool.CallOptions{OnEvent: call.add})
	if err != nil || !res.Success {
		t.Fatalf("long operation = %+v, %v", res, err)
	}
	if !eventually(func() bool { return len(call.of(tool.EventProgress)) == 3 }) {
		t.Fatalf("the call got %d progress events, want 3", len(call.of(tool.EventProgress)))
	}
	for i, p := range call.of(tool.EventProgress) {
		if p.Progress != float64(i+1) || p.Total != 3 || p.Tool != "everything::trigger-long-running-operation" || p.CallID == "" || p.Library != "everything" {
			t.Errorf("progress event %d = %+v", i, p)
		}
	}

	// Simulated logging sends a message at once and one every 5 s: a
	// call of 6 s is the only call in flight when at least one comes.
	res, err = tool.Call(ctx, c, "everything::toggle-simulated-logging", nil, nil)
	if err != nil || !res.Success {
		t.Fatalf("toggle logging = %+v, %v", res, err)
	}
	defer func() { _, _ = tool.Call(ctx, c, "everything::toggle-simulated-logging", nil, nil) }()
	var long eventLog
	res, err = tool.Call(ctx, c, "everything::trigger-long-running-operation", json.RawMessage(`{"duration":6,"steps":2}`),
		&tool.CallOptions{OnEvent: long.add})
	if err != nil || !res.Success {
		t.Fatalf("long operation = %+v, %v", res, err)
	}
	logs := long.of(tool.EventLog)
	if len(logs) == 0 {
		t.Fatalf("no log event reached the call; toolset-wide: %+v", wide.of(tool.EventLog))
	}
	for _, l := range logs {
		if !logLevels[l.Level] || !strings.Contains(l.Text, "message") || l.Tool != "everything::trigger-long-running-operation" || l.CallID == "" {
			t.Errorf("log event = %+v", l)
		}
	}
	// The toolset-wide subscriber sees them too, named for the call.
	found := false
	for _, l := range wide.of(tool.EventLog) {
		if l.CallID == logs[0].CallID && l.Text == logs[0].Text {
			found = true
		}
	}
	if !found {
		t.Errorf("the toolset-wide subscriber missed %+v", logs[0])
	}
}

// TestCallEventsOfLCPServer: lcp as the upstream server sends log records
// only once a client sets a level; lcp's client does, so a tool's log
// record and progress reach the call through two lcp processes.
func TestCallEventsOfLCPServer(t *testing.T) {
	for name, cfg := range clientTargets(t) {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, []ServerConfig{cfg}, nil)
			var call eventLog
			res, err := tool.Call(context.Background(), c, "lcp::slow", json.RawMessage(`{"ms":200}`), &tool.CallOptions{OnEvent: call.add})
			if err != nil || !res.Success {
				t.Fatalf("slow = %+v, %v", res, err)
			}
			if !eventually(func() bool { return len(call.of(tool.EventLog)) == 1 && len(call.of(tool.EventProgress)) > 0 }) {
				t.Fatalf("events of the call: %+v", call.events)
			}
			if l := call.of(tool.EventLog)[0]; l.Level != "notice" || l.Text != "slow started" || l.Tool != "lcp::slow" {
				t.Errorf("log event = %+v", l)
			}
			if p := call.of(tool.EventProgress)[0]; p.Text != "step" || p.Progress < 1 {
				t.Errorf("progress event = %+v", p)
			}
		})
	}
}

func TestLogEvent(t *testing.T) {
	tests := []struct {
		name   string
		data   any
		level  string
		logger string
		want   tool.Event
	}{
		{"text", "hello", "warning", "", tool.Event{Kind: tool.EventLog, Level: "warning", Text: "hello"}},
		{"logger", "hello", "info", "db", tool.Event{Kind: tool.EventLog, Level: "info", Text: "db: hello"}},
		{"unknown level", "x", "loud", "", tool.Event{Kind: tool.EventLog, Level: "info", Text: "x"}},
		{"object with message", map[string]any{"message": "m", "n": 1.0}, "error", "",
			tool.Event{Kind: tool.EventLog, Level: "error", Text: "m", Data: json.RawMessage(`{"message":"m","n":1}`)}},
		{"object", map[string]any{"n": 1.0}, "debug", "", tool.Event{Kind: tool.EventLog, Level: "debug", Text: `{"n":1}`, Data: json.RawMessage(`{"n":1}`)}},
		{"nothing", nil, "info", "", tool.Event{Kind: tool.EventLog, Level: "info"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := logParams(tt.data, tt.level)
			got := logEvent(p, tt.logger)
			if got.Kind != tt.want.Kind || got.Level != tt.want.Level || got.Text != tt.want.Text || string(got.Data) != string(tt.want.Data) {
				t.Errorf("logEvent = %+v, want %+v", got, tt.want)
			}
		})
	}
}

//lint:ignore SA1019 the client still reads MCP logging (see logMessage)
func logParams(data any, level string) *sdk.LoggingMessageParams {
	//lint:ignore SA1019 see above
	return &sdk.LoggingMessageParams{Data: data, Level: sdk.LoggingLevel(level)}
}
