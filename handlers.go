package lcp

import (
	"context"
	"sync/atomic"

	"github.com/lcptools/lcp/tool"
)

// ConfirmHandler answers a confirmation: tool.Allow, tool.Always, or
// tool.Reject with a reason for the LLM. It is the Go form of the LCP
// binding's confirm_handler.
type ConfirmHandler func(ctx context.Context, r *tool.Request) (tool.Decision, string)

// UserInteractionHandler answers a question (text, secret, select, form)
// with its value; ok false declines. It is the Go form of the LCP
// binding's user_interaction_handler.
type UserInteractionHandler func(ctx context.Context, r *tool.Request) (value any, ok bool)

// handlers are the engine-level handlers, swapped at any time.
type handlers struct {
	confirm  atomic.Pointer[ConfirmHandler]
	interact atomic.Pointer[UserInteractionHandler]
}

// SetConfirmHandler makes h answer the confirmations of the engine's
// calls from now on, in place of Config.Respond; nil gives them back to
// Config.Respond. As the LCP binding's set_confirm_handler, it can be
// called mid-session and applies to the modules already loaded: Python
// tools hold a proxy that asks the engine each time, so the next
// confirmation of any tool, even of a call already running, gets h.
// Calls whose CallOptions carry their own callbacks keep them.
func (e *Engine) SetConfirmHandler(h ConfirmHandler) {
	if h == nil {
		e.handlers.confirm.Store(nil)
		return
	}
	e.handlers.confirm.Store(&h)
}

// SetUserInteractionHandler makes h answer the questions (text, secret,
// select, form) of the engine's calls from now on, in place of
// Config.Respond; nil gives them back. Like SetConfirmHandler, it applies
// at once to every tool, loaded or not.
func (e *Engine) SetUserInteractionHandler(h UserInteractionHandler) {
	if h == nil {
		e.handlers.interact.Store(nil)
		return
	}
	e.handlers.interact.Store(&h)
}

// respond answers a request of a call without callbacks of its own: the
// handler set for its kind, else Config.Respond, else the
// answer of a host without a person (tool.Nobody).
func (e *Engine) respond(ctx context.Context, r *tool.Request) tool.Response {
	if r.Kind == tool.KindConfirm {
		if h := e.handlers.confirm.Load(); h != nil {
			d, reason := (*h)(ctx, r)
			if d == tool.Allow || d == tool.Always {
				return r.Submitted(d)
			}
			return r.Declined(reason)
		}
	} else if h := e.handlers.interact.Load(); h != nil {
		v, ok := (*h)(ctx, r)
		if !ok {
			return r.Declined("")
		}
		return r.Submitted(v)
	}
	if e.cfg.Respond != nil {
		return e.cfg.Respond(ctx, r)
	}
	return tool.Nobody{}.Answer(r)
}

// canRespond reports whether a request would reach a person (a handler or
// Config.Respond).
func (e *Engine) canRespond(kind tool.Kind) bool {
	if e.cfg.Respond != nil {
		return true
	}
	if kind == tool.KindConfirm {
		return e.handlers.confirm.Load() != nil
	}
	return e.handlers.interact.Load() != nil
}
