package tool

import (
	"context"
	"encoding/json"
	"errors"
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

// Drive runs a fresh handler's call to completion: Invoke, then Respond to
// each Request with the answer of opts, until the result. An answer of the
// wrong shape (a select value that is not an option, say) is not the
// tool's fault: the tool gets the request declined with a reason that
// says what was wrong. When Drive returns an error, the call is over: a
// call still running is cancelled, so that its worker is freed.
func Drive(ctx context.Context, h Handler, args json.RawMessage, opts *CallOptions) (*Result, error) {
	if opts == nil {
		opts = &CallOptions{}
	}
	drv := &driver{ctx: ctx, opts: opts}
	step, err := h.Invoke(ctx, Invocation{CallID: opts.CallID, Arguments: args, Workspace: opts.Workspace,
		Context: opts.Context, Conversation: opts.Conversation, OnEvent: opts.OnEvent, Parent: opts.Parent, Generator: opts.Generator,
		driver: drv})
	// declined holds the answer to the call's last confirmation when it
	// was a decline: a failure after it is a refusal (Result.Rejection).
	var declined *Rejection
	for err == nil && step.Request != nil {
		req := step.Request
		if opts.OnRequest != nil {
			opts.OnRequest(req)
		}
		resp := opts.answer(ctx, req)
		if req.Kind == KindConfirm {
			declined = nil
			if resp.Action == Decline {
				declined = &Rejection{Reason: resp.Reason}
			}
		}
		if opts.OnResponse != nil {
			opts.OnResponse(req, req.Redacted(resp))
		}
		step, err = h.Respond(ctx, resp)
		var bad *InvalidInteractionError
		if errors.As(err, &bad) {
			step, err = h.Respond(ctx, req.Declined("The answer was not valid: "+bad.Message))
		}
	}
	if err != nil {
		_ = h.Cancel(err.Error()) // a ClosedError when the call is already over
		return nil, err
	}
	if declined == nil {
		declined = drv.declined // the call ran inline and asked from there
	}
	if declined != nil && step.Result != nil && !step.Result.Success {
		step.Result.Rejection = declined
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
