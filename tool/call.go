package tool

import (
	"context"
	"encoding/json"
)

// CallOptions configures Call. The zero value is a call with no person to
// ask: confirmations are rejected and questions declined, with a reason
// that says so.
type CallOptions struct {
	// CallID, Workspace and Context go into the Invocation.
	CallID    string
	Workspace string
	Context   map[string]any
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
}

// NoApprover is the reason given when a confirmation reaches a caller that
// has no way to ask a person.
const NoApprover = "No approver is configured in this host: the action was not approved."

// Call runs one call of the named tool to completion, answering its
// requests with the callbacks of opts. args is the JSON arguments object
// (nil means {}).
func Call(ctx context.Context, ts Toolset, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	if opts == nil {
		opts = &CallOptions{}
	}
	h, err := ts.Handler(ctx, name)
	if err != nil {
		return nil, err
	}
	step, err := h.Invoke(ctx, Invocation{CallID: opts.CallID, Arguments: args, Workspace: opts.Workspace, Context: opts.Context})
	for err == nil && step.Request != nil {
		req := step.Request
		if opts.OnRequest != nil {
			opts.OnRequest(req)
		}
		resp := opts.answer(ctx, req)
		if opts.OnResponse != nil {
			opts.OnResponse(req, req.Redacted(resp))
		}
		step, err = h.Respond(ctx, resp)
	}
	if err != nil {
		return nil, err
	}
	return step.Result, nil
}

func (o *CallOptions) answer(ctx context.Context, r *Request) Response {
	if o.Respond != nil {
		resp := o.Respond(ctx, r)
		resp.ID = r.ID
		return resp
	}
	if r.Kind == KindConfirm {
		if o.Confirm == nil {
			return r.Declined(NoApprover)
		}
		d, reason := o.Confirm(ctx, r)
		if d == Allow || d == Always {
			return r.Submitted(d)
		}
		return r.Declined(reason)
	}
	if o.Interact == nil {
		return r.Declined("This host cannot ask the user questions.")
	}
	v, ok := o.Interact(ctx, r)
	if !ok {
		return r.Declined("")
	}
	return r.Submitted(v)
}
