package tool

import (
	"context"
	"encoding/json"
	"errors"
)

// Run is one call as a value its front end steps: the state machine of a
// call that may ask (a confirmation, a question, the client's model).
// Start invokes the handler and returns the first Step; while a Step
// carries a Request, Answer resolves it and returns the next, until the
// Step carries the Result. Drive is a Run whose every request is answered
// in place by the callbacks of CallOptions; a front end that answers
// later — an MCP client of the 2026-07-28 revision answers with its next
// request — keeps the Run between its requests and calls Answer when the
// answer comes.
//
// Every front end gets the same call from it: OnRequest sees each request
// and OnResponse each answer (secret values masked), an answer of the
// wrong shape (a select value that is not an option) is declined with a
// reason that says what was wrong, a failure after a declined confirmation
// is a refusal (Result.Rejection), and a step that fails cancels the call,
// so that its worker is freed.
//
// A Run is used by one goroutine at a time; to stop a call from another,
// cancel the context given to Start.
type Run struct {
	h    Handler
	opts *CallOptions
	// drv is set for a call Drive runs: a handler that runs the call
	// inline answers its requests with Drive's callbacks as they come
	// (Invocation.driver), and keeps the last confirmation's decline.
	drv *driver

	pending *Request
	// declined holds the answer to the call's last confirmation when it
	// was a decline: a failure after it is a refusal (Result.Rejection).
	declined *Rejection
	over     bool
}

// Start invokes a fresh handler with the JSON arguments args (nil means
// {}) and returns the call's first Step: its Result, or a Request for the
// caller to Answer. opts gives the Invocation's fields and OnRequest,
// OnResponse and OnEvent (nil: none); its answering callbacks (Respond,
// Confirm, Interact) and Parent's forwarding are Drive's and are not
// used: the caller answers. On an error the call is over.
func Start(ctx context.Context, h Handler, args json.RawMessage, opts *CallOptions) (*Run, Step, error) {
	if opts == nil {
		opts = &CallOptions{}
	}
	r := &Run{h: h, opts: opts}
	step, err := r.start(ctx, args)
	return r, step, err
}

func (r *Run) start(ctx context.Context, args json.RawMessage) (Step, error) {
	o := r.opts
	step, err := r.h.Invoke(ctx, Invocation{CallID: o.CallID, Arguments: args, Workspace: o.Workspace,
		Context: o.Context, Conversation: o.Conversation, OnEvent: o.OnEvent, Parent: o.Parent, Generator: o.Generator,
		driver: r.drv, stepped: r.drv == nil})
	return r.after(step, err)
}

// Pending returns the request the call waits for, nil when it waits for
// none (it runs, or it is over).
func (r *Run) Pending() *Request { return r.pending }

// Answer resolves the pending request with resp and returns the call's
// next Step. An answer the request does not accept is not the tool's
// fault: the tool gets the request declined with a reason that says what
// was wrong. Answer without a pending request is an
// *InvalidInteractionError, and leaves the call as it was; any other
// error ends the call. ctx bounds the wait for the next step: when it
// ends first, the call is cancelled.
func (r *Run) Answer(ctx context.Context, resp Response) (Step, error) {
	req := r.pending
	if req == nil {
		if r.over {
			return Step{}, &ClosedError{What: "call (already over)"}
		}
		return Step{}, &InvalidInteractionError{ID: resp.ID, Message: "no request is pending"}
	}
	r.pending = nil
	if req.Kind == KindConfirm {
		r.declined = nil
		if resp.Action == Decline {
			r.declined = &Rejection{Reason: resp.Reason}
		}
	}
	if r.opts.OnResponse != nil {
		r.opts.OnResponse(req, req.Redacted(resp))
	}
	step, err := r.h.Respond(ctx, resp)
	var bad *InvalidInteractionError
	if errors.As(err, &bad) {
		step, err = r.h.Respond(ctx, req.Declined("The answer was not valid: "+bad.Message))
	}
	return r.after(step, err)
}

// Cancel stops the call, for reason (the tool sees a *CancelledError):
// a front end whose person went away ends the call it holds. It is a
// *ClosedError when the call is already over.
func (r *Run) Cancel(reason string) error {
	r.over, r.pending = true, nil
	return r.h.Cancel(reason)
}

// after takes in the Step the handler returned.
func (r *Run) after(step Step, err error) (Step, error) {
	if err != nil {
		r.over, r.pending = true, nil
		_ = r.h.Cancel(err.Error()) // a ClosedError when the call is already over
		return Step{}, err
	}
	if step.Request != nil {
		r.pending = step.Request
		if r.opts.OnRequest != nil {
			r.opts.OnRequest(step.Request)
		}
		return step, nil
	}
	r.over = true
	declined := r.declined
	if declined == nil && r.drv != nil {
		declined = r.drv.declined // the call ran inline and asked from there
	}
	if declined != nil && step.Result != nil && !step.Result.Success {
		step.Result.Rejection = declined
	}
	return step, nil
}
