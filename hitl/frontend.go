package hitl

import (
	"context"
	"slices"

	"github.com/lcptools/lcp/tool"
)

// FrontEnd puts a request to a person and returns the answer: the
// terminal (package hitl/term), a web page, an MCP client's elicitation.
// The broker calls Ask once per request, possibly from several goroutines
// at once; a front end that can show one request at a time serializes
// them itself. ctx is cancelled when the request is withdrawn (the call
// was cancelled, the request timed out or was answered elsewhere; its
// cause says which: ErrWithdrawn, ErrTimedOut, ErrAnswered); the front
// end then stops asking and returns promptly (Broker.Close waits for it,
// so that a terminal is restored before a command exits).
//
// The answer is checked by the broker (tool.Request.CheckResponse); an
// error, or an answer of the wrong shape, resolves the request as if
// nobody had approved or answered it.
type FrontEnd interface {
	Ask(ctx context.Context, r *tool.Request) (tool.Response, error)
}

// FrontEndFunc adapts a function to the FrontEnd interface.
type FrontEndFunc func(ctx context.Context, r *tool.Request) (tool.Response, error)

// Ask calls f.
func (f FrontEndFunc) Ask(ctx context.Context, r *tool.Request) (tool.Response, error) {
	return f(ctx, r)
}

type frontEndKey struct{}

// WithFrontEnd returns a context whose requests Broker.Respond puts to fe
// instead of the broker's default front end: an MCP server routes the
// questions of a call to the client session that made it this way, while
// the session-wide always memory, policy and limits stay the broker's.
// A nil fe means the broker's default.
func WithFrontEnd(ctx context.Context, fe FrontEnd) context.Context {
	return context.WithValue(ctx, frontEndKey{}, fe)
}

// FrontEndFrom returns the front end WithFrontEnd put in ctx, or nil.
func FrontEndFrom(ctx context.Context) FrontEnd {
	fe, _ := ctx.Value(frontEndKey{}).(FrontEnd)
	return fe
}

// DefaultHint is the advice Unattended gives when it rejects an action and
// its host gave none (tool.DefaultHint). A command line names its own
// flags instead (lcp: "run with --yes or --approve=allow to approve it").
const DefaultHint = tool.DefaultHint

// Unattended is the front end of a host with nobody to ask (no terminal,
// no page, an MCP client without elicitation): it answers every request
// with tool.Nobody, the one answer of every front end that finds nobody
// there. It never approves: a confirmation is refused with a reason that
// names the action, says why (Why) and how to approve it (Hint); a text or
// select question gets its default when it has one, and everything else
// is declined.
type Unattended struct {
	// Why says why nobody can answer; "there is no terminal" when empty.
	Why string
	// Hint tells the operator how to approve; DefaultHint when empty.
	Hint string
}

// NoTerminal is Unattended's reason when it gives none.
const NoTerminal = "there is no terminal"

// Ask answers r without a person.
func (u Unattended) Ask(_ context.Context, r *tool.Request) (tool.Response, error) {
	why := u.Why
	if why == "" {
		why = NoTerminal
	}
	return tool.Nobody{Why: why, Hint: u.Hint}.Answer(r), nil
}

// Callbacks is a front end made of blocking callbacks in the seeds' shape,
// for embedders that already have them. Confirm gets the source, the
// script label and argv, and returns "allow", "always" or "reject" with a
// reason; Interact gets the request as the seeds' dict (see
// InteractionMap) and returns the answer, or nil to decline. A nil
// callback declines what it would have answered; forms are declined.
//
// A blocking callback cannot be interrupted: when the request is
// withdrawn, Ask returns at once and the callback's eventual answer is
// dropped.
type Callbacks struct {
	Confirm  func(source, label string, argv []string) (decision, reason string)
	Interact func(request map[string]any) *string
}

// Ask runs the callback that fits r.
func (c Callbacks) Ask(ctx context.Context, r *tool.Request) (tool.Response, error) {
	var run func() tool.Response
	switch r.Kind {
	case tool.KindConfirm:
		if c.Confirm == nil {
			return tool.Nobody{Why: "the host gave no confirmation callback"}.Answer(r), nil
		}
		source, label, argv := r.Source, r.Label, slices.Clone(r.Argv)
		run = func() tool.Response {
			d, reason := c.Confirm(source, label, argv)
			switch tool.Decision(d) {
			case tool.Allow, tool.Always:
				return tool.Response{ID: r.ID, Action: tool.Submit, Value: tool.Decision(d), Reason: reason}
			}
			if reason == "" {
				reason = "The operator rejected the action."
			}
			return r.Declined(reason)
		}
	case tool.KindForm:
		return tool.Nobody{Why: "the host's callbacks cannot fill in forms"}.Answer(r), nil
	default:
		if c.Interact == nil {
			return tool.Nobody{Why: "the host gave no question callback"}.Answer(r), nil
		}
		m := InteractionMap(r)
		run = func() tool.Response {
			if ans := c.Interact(m); ans != nil {
				return r.Submitted(*ans)
			}
			return r.Declined("")
		}
	}
	done := make(chan tool.Response, 1)
	go func() { done <- run() }()
	select {
	case resp := <-done:
		return resp, nil
	case <-ctx.Done():
		return tool.Response{}, context.Cause(ctx)
	}
}
