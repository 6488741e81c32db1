package mcp

import (
	"context"
	"log/slog"
	"strings"
)

// quietUndelivered is the handler of the log the MCP SDK's server writes
// to: it lowers to debug the warnings of a list-changed notification that
// found no stream to go on. Those go to every session at each change of
// the tools, and a session without an open GET stream (most clients of
// sessions over HTTP between calls) cannot receive one: nothing is wrong,
// and a library rewritten every 100 ms made hundreds of warnings a
// minute. The client learns of the change from its next tools/list.
type quietUndelivered struct{ slog.Handler }

// Handle implements slog.Handler.
func (h quietUndelivered) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && undelivered(r.Message) {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.Handler.Handle(ctx, r)
}

// Enabled implements slog.Handler.
func (h quietUndelivered) Enabled(ctx context.Context, l slog.Level) bool {
	return h.Handler.Enabled(ctx, l)
}

// WithAttrs implements slog.Handler.
func (h quietUndelivered) WithAttrs(as []slog.Attr) slog.Handler {
	return quietUndelivered{h.Handler.WithAttrs(as)}
}

// WithGroup implements slog.Handler.
func (h quietUndelivered) WithGroup(name string) slog.Handler {
	return quietUndelivered{h.Handler.WithGroup(name)}
}

// undelivered reports whether an SDK log message is that of a list-changed
// notification without a stream to go on.
func undelivered(msg string) bool {
	if !strings.HasPrefix(msg, "calling notifications/") || !strings.Contains(msg, "list_changed") {
		return false
	}
	for _, s := range []string{"stream not connected", "write to closed stream", "undelivered message"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
