package mcp

import (
	"context"

	"github.com/lcptools/lcp/tool"
)

// Progress is one progress report of a running call.
type Progress struct {
	// Tool and CallID say which call it is about.
	Tool   string `json:"tool"`
	CallID string `json:"call_id,omitempty"`
	// Progress grows with every report; Total is 0 when unknown.
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

type progressKey struct{}

// WithProgress returns a context whose calls report their progress to fn:
// progress notifications of MCP servers (for tools of a ClientToolset)
// and ReportProgress of native tools. Reports from calls made under an
// outer WithProgress go to both.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	if outer, ok := ctx.Value(progressKey{}).(func(Progress)); ok {
		inner := fn
		fn = func(p Progress) { inner(p); outer(p) }
	}
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress reports the progress of the call ctx belongs to, to
// whoever listens (an MCP client that asked for progress, a host's
// WithProgress). It does nothing when nobody listens.
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	fn, _ := ctx.Value(progressKey{}).(func(Progress))
	if fn == nil {
		return
	}
	p := Progress{Progress: progress, Total: total, Message: message}
	if c := tool.CallFromContext(ctx); c != nil {
		p.Tool, p.CallID = c.Tool, c.CallID
	}
	fn(p)
}

func progressFunc(ctx context.Context) func(Progress) {
	fn, _ := ctx.Value(progressKey{}).(func(Progress))
	return fn
}
