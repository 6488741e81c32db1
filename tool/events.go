package tool

import (
	"context"
	"encoding/json"
)

// EventKind says what an Event of a call reports.
type EventKind string

// The events of a running call.
const (
	// EventOutput is text the tool printed (Stream, Text, Dropped). It is
	// shown to people, never added to what the LLM reads.
	EventOutput EventKind = "output"
	// EventProgress is how far the call has got (Progress, Total, Text).
	EventProgress EventKind = "progress"
	// EventLog is a log record of the tool (Level, Text, Data).
	EventLog EventKind = "log"
)

// Event is something a running call reports besides its result: printed
// output, progress, a log record. Hosts subscribe per call
// (CallOptions.OnEvent, Invocation.OnEvent) or for a whole engine; output
// that belongs to no call (a worker's own noise) has no Tool and CallID.
type Event struct {
	Kind EventKind `json:"kind"`
	// Tool, CallID and Library say which call reports it.
	Tool    string `json:"tool,omitempty"`
	CallID  string `json:"call_id,omitempty"`
	Library string `json:"library,omitempty"`
	// Stream is "stdout" or "stderr" for output.
	Stream string `json:"stream,omitempty"`
	// Text is the printed text, the progress message or the log message.
	Text string `json:"text,omitempty"`
	// Dropped counts output characters discarded past the output limit.
	Dropped int64 `json:"dropped,omitempty"`
	// Progress grows with every progress report; Total is 0 when unknown.
	Progress float64 `json:"progress,omitempty"`
	Total    float64 `json:"total,omitempty"`
	// Level is a log record's severity, as syslog (and MCP) name them:
	// debug, info, notice, warning, error, critical, alert, emergency.
	Level string `json:"level,omitempty"`
	// Data is a log record's structured data, if any.
	Data json.RawMessage `json:"data,omitempty"`
}

// Emit reports e as an event of the call: Tool, CallID and Library are
// filled in, and every subscriber of the call gets it. It does nothing
// when nobody listens (or c is nil).
func (c *CallRequest) Emit(e Event) {
	if c == nil || c.onEvent == nil {
		return
	}
	e.Tool, e.CallID = c.Info.Name, c.CallID
	if e.Library == "" {
		e.Library = c.Info.Library.ID
	}
	c.onEvent(e)
}

// Listening reports whether the call has subscribers, so that a backend
// can skip building events nobody reads.
func (c *CallRequest) Listening() bool { return c != nil && c.onEvent != nil }

// ReportProgress reports the progress of the call ctx belongs to: an MCP
// client that asked for progress gets a notification, a web page a bar.
// total is 0 when unknown. Outside a call it does nothing.
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	CallFromContext(ctx).Emit(Event{Kind: EventProgress, Progress: progress, Total: total, Text: message})
}

// Log reports a log record of the call ctx belongs to, at level (debug,
// info, notice, warning, error, critical, alert, emergency). Outside a
// call it does nothing.
func Log(ctx context.Context, level, message string) {
	CallFromContext(ctx).Emit(Event{Kind: EventLog, Level: level, Text: message})
}

// joinSinks returns a subscriber that hands every event to a, then b.
func joinSinks(a, b func(Event)) func(Event) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(e Event) { a(e); b(e) }
}

// JoinSinks returns a subscriber that hands every event to each non-nil
// subscriber in turn; nil when there is none.
func JoinSinks(sinks ...func(Event)) func(Event) {
	var out func(Event)
	for _, s := range sinks {
		out = joinSinks(out, s)
	}
	return out
}
