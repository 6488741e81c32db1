package tool

import (
	"context"
	"encoding/json"
)

// CallOptions configures Call and Drive. The zero value is a call with no
// person to ask: its requests get Nobody's answer (confirmations refused,
// questions declined or given their default), with a reason that says so.
type CallOptions struct {
	// CallID, Workspace, Context, Conversation and Generator go into the
	// Invocation.
	CallID       string
	Workspace    string
	Context      map[string]any
	Conversation Conversation
	Generator    Generator
	// Parent is the call this one runs inside (a tool calling the host's
	// execute_tool). Its caller answers this call's requests — the same
	// person, through the parent's handler — and its subscribers see this
	// call's events; the answering callbacks below are not used.
	Parent *CallRequest
	// Respond answers every request. When set, Confirm and Interact are
	// not used.
	Respond func(ctx context.Context, r *Request) Response
	// Confirm answers confirmations: Allow, Always, or Reject with a
	// reason for the LLM.
	Confirm func(ctx context.Context, r *Request) (Decision, string)
	// Interact answers questions (text, secret, select, form); ok false
	// declines.
	Interact func(ctx context.Context, r *Request) (value any, ok bool)
	// OnRequest, when set, sees every request before it is answered, and
	// OnResponse every answer (secret values masked). For logs and UIs.
	OnRequest  func(r *Request)
	OnResponse func(r *Request, resp Response)
	// OnEvent subscribes to the call's events (output, progress, log).
	OnEvent func(Event)
}

// Call runs one call of the named tool to completion, answering its
// requests with the callbacks of opts. args is the JSON arguments object
// (nil means {}).
func Call(ctx context.Context, ts Toolset, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	h, err := ts.Handler(ctx, name)
	if err != nil {
		return nil, err
	}
	return Drive(ctx, h, args, opts)
}

// Drive runs a fresh handler's call to completion: a Run (Start) whose
// every Request is answered in place with the answer of opts, until the
// result. An answer of the wrong shape (a select value that is not an
// option, say) is not the tool's fault: the tool gets the request
// declined with a reason that says what was wrong. When Drive returns an error, the call is over: a
// call still running is cancelled, so that its worker is freed.
func Drive(ctx context.Context, h Handler, args json.RawMessage, opts *CallOptions) (*Result, error) {
	if opts == nil {
		opts = &CallOptions{}
	}
	r := &Run{h: h, opts: opts, drv: &driver{ctx: ctx, opts: opts}}
	step, err := r.start(ctx, args)
	for err == nil && step.Request != nil {
		step, err = r.Answer(ctx, opts.answer(ctx, step.Request))
	}
	if err != nil {
		return nil, err
	}
	return step.Result, nil
}

func (o *CallOptions) answer(ctx context.Context, r *Request) Response {
	if o.Parent != nil {
		// The same question, to the person the parent call asks: the
		// request keeps its id, so the answer fits as it is.
		fwd := *r
		resp, err := o.Parent.Ask(ctx, &fwd)
		if err != nil {
			return r.Cancelled(err.Error())
		}
		return resp
	}
	if o.Respond != nil {
		resp := o.Respond(ctx, r)
		resp.ID = r.ID
		return resp
	}
	if r.Kind == KindConfirm {
		if o.Confirm == nil {
			return Nobody{}.Answer(r)
		}
		d, reason := o.Confirm(ctx, r)
		if d == Allow || d == Always {
			return r.Submitted(d)
		}
		return r.Declined(reason)
	}
	if o.Interact == nil {
		return Nobody{}.Answer(r)
	}
	v, ok := o.Interact(ctx, r)
	if !ok {
		return r.Declined("")
	}
	return r.Submitted(v)
}
