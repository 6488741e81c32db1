package tool

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
)

// Toolset is a source of tools: it lists them and hands out one Handler per
// invocation. Implementations are safe for concurrent use.
type Toolset interface {
	// Tools lists the tools, in a stable order.
	Tools(ctx context.Context) ([]Info, error)
	// Handler returns a fresh handler for one call of the named tool, or an
	// *UnknownToolError.
	Handler(ctx context.Context, name string) (Handler, error)
	// Close releases the toolset's resources (processes, sessions). Calls
	// in flight end with an error; later use gives a *ClosedError.
	Close() error
}

// Invocation is what a caller sends to start a call.
type Invocation struct {
	// CallID identifies the call in requests, logs and events; a random
	// one is chosen when empty.
	CallID string
	// Arguments is the JSON object the LLM sent; nil means {}.
	Arguments json.RawMessage
	// Workspace is the directory the call works in (absolute); empty means
	// the backend's default.
	Workspace string
	// Context is the host's context for the call, handed to LCP tools that
	// declare tool_context; nil means {}.
	Context map[string]any
	// Conversation is the dialogue the call runs in (the agent loop's);
	// nil means none (or the parent's).
	Conversation Conversation
	// OnEvent subscribes to the call's events (output, progress, log); it
	// is called from the goroutine that reports them, so it must return
	// quickly. Nil: nobody listens (but the parent's subscribers).
	OnEvent func(Event)
	// Parent is the call this one runs inside (a tool calling the host's
	// execute_tool): the nesting depth, the conversation, the language
	// model and the subscribers come from it. Drive (CallOptions.Parent)
	// also puts the call's requests to the parent's caller.
	Parent *CallRequest
	// Generator is the language model the call may ask (Generate); nil
	// means none (or the parent's). An MCP server puts its client's
	// sampling here; an engine with a configured model puts that one.
	Generator Generator

	// driver is set by Drive: a handler whose RunFunc returns promptly
	// when its context ends (HandlerOptions.ReturnsOnCancel) then runs
	// the call in the caller's goroutine and answers its requests with
	// Drive's callbacks, from the goroutine that asks.
	driver *driver
	// stepped is set by Start: the caller answers between steps, so a
	// call must be able to pause at any request, its host's own
	// (KindHost) included, also when its tool declares no interaction.
	stepped bool
}

// driver is what Drive lends a handler that runs its call inline: the
// context Drive answers under and the options that answer.
type driver struct {
	ctx  context.Context
	opts *CallOptions
	// declined is the answer to the call's last confirmation when it was
	// a decline, as Drive's loop keeps it for a call it drives step by step.
	declined *Rejection
}

// Step is the outcome of driving a Handler one step: exactly one of Result
// (the call completed) and Request (the tool waits for a Response) is set.
type Step struct {
	Result  *Result
	Request *Request
}

// Handler is one resumable invocation. Invoke starts the call; while the
// returned Step carries a Request, Respond resolves it and returns the next
// Step. The call runs under the context given to Invoke: cancelling it, or
// the context of a later Respond while it waits, cancels the call, as does
// Cancel. A Handler serves one call; using it again is an error.
type Handler interface {
	Invoke(ctx context.Context, inv Invocation) (Step, error)
	Respond(ctx context.Context, resp Response) (Step, error)
	Cancel(reason string) error
}

// RunFunc runs one call to completion. It may put requests to the caller
// through c.Ask (or Ask and the helpers built on it, with the context it
// is given, which carries c) and report events through c.Emit. A returned
// error is an engine error; tool failures are Results.
type RunFunc func(ctx context.Context, c *CallRequest) (*Result, error)

// NewHandler returns a Handler that runs fn for one call of the tool info
// describes, with the backend's defaults opts (nil: none). When the call
// starts, the handler resolves its CallRequest once and hands it to fn.
// Requests fn makes are checked against info.Interactions and surface as
// Steps; a call that never asks completes within Invoke without a
// goroutine, and so does a call that Drive runs when opts.ReturnsOnCancel
// is set (its requests are answered by Drive's callbacks as they come).
func NewHandler(info *Info, fn RunFunc, opts *HandlerOptions) Handler {
	return &handler{info: info, fn: fn, opts: opts}
}

type handlerState int

const (
	stateNew handlerState = iota
	stateRunning
	stateWaiting
	stateDone
)

type handler struct {
	info *Info
	fn   RunFunc
	opts *HandlerOptions

	mu      sync.Mutex
	state   handlerState
	cancel  context.CancelCauseFunc
	pending *Request

	drv   *driver    // set when Drive answers the call's requests inline
	askMu sync.Mutex // one inline request at a time, as Drive's loop takes them

	requests chan *Request // from the call's goroutine
	replies  chan Response // to the call's goroutine: the answer to pending
	done     chan struct{} // closed when the call's goroutine has finished
	aborted  chan struct{} // closed when the caller gave up on the call
	abortErr error         // why, set before aborted is closed
	res      *Result       // the outcome, set before done is closed
	err      error
}

// Invoke starts the call.
func (h *handler) Invoke(ctx context.Context, inv Invocation) (Step, error) {
	h.mu.Lock()
	if h.state != stateNew {
		h.mu.Unlock()
		return Step{}, &ClosedError{What: "handler for " + h.info.Name + " (already invoked)"}
	}
	h.state = stateRunning
	if inv.CallID == "" {
		inv.CallID = newCallID()
	}
	if (h.info.Interactions == (Capabilities{}) && !inv.stepped) || (inv.driver != nil && h.opts != nil && h.opts.ReturnsOnCancel) {
		// A tool that cannot ask anything runs to completion right here:
		// no goroutine, no channels (under Drive its host's requests are
		// answered in place; a Run that Start steps gets a goroutine, so
		// that they can be Steps). So does a call that Drive runs, when
		// its function returns as soon as it is cancelled: Drive answers
		// its requests from the goroutine that asks, and a cancelled call
		// returns at once as it would from a goroutine of its own. (Waking
		// a goroutine and back costs a fast call a third of its time.)
		callCtx, cancel := context.WithCancelCause(ctx)
		h.cancel = cancel
		h.drv = inv.driver
		h.mu.Unlock()
		return h.runInline(callCtx, &inv)
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	h.cancel = cancel
	h.requests = make(chan *Request)
	h.replies = make(chan Response)
	h.done = make(chan struct{})
	h.aborted = make(chan struct{})
	h.mu.Unlock()

	cc := &callContext{Context: callCtx}
	cc.call.resolve(h.info, h.opts, &inv)
	cc.call.h = h
	go func() {
		defer close(h.done)
		h.res, h.err = h.fn(cc, &cc.call)
		if h.err == nil && h.res == nil {
			h.err = &ProtocolError{Tool: h.info.Name, Message: "the tool returned neither a result nor an error"}
		}
	}()
	return h.next(ctx)
}

func (h *handler) runInline(ctx context.Context, inv *Invocation) (Step, error) {
	cc := &callContext{Context: ctx}
	cc.call.resolve(h.info, h.opts, inv)
	if h.drv != nil {
		cc.call.h = h
	}
	res, err := h.fn(cc, &cc.call)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == stateDone && h.abortErr != nil {
		return Step{}, h.abortErr
	}
	h.state = stateDone
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		err = cancelledBy(ctx, h.info.Name)
	}
	h.cancel(nil)
	if err == nil && res == nil {
		err = &ProtocolError{Tool: h.info.Name, Message: "the tool returned neither a result nor an error"}
	}
	if err != nil {
		return Step{}, err
	}
	return Step{Result: res}, nil
}

// next waits for the call's next step.
func (h *handler) next(ctx context.Context) (Step, error) {
	select {
	case r := <-h.requests:
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.state == stateDone {
			return Step{}, h.abortErr
		}
		h.state = stateWaiting
		h.pending = r
		return Step{Request: r}, nil
	case <-h.done:
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.state == stateDone && h.abortErr != nil {
			return Step{}, h.abortErr
		}
		h.state = stateDone
		h.cancel(nil)
		if h.err != nil {
			return Step{}, h.err
		}
		return Step{Result: h.res}, nil
	case <-h.aborted:
		return Step{}, h.abortErr
	case <-ctx.Done():
		err := cancelledBy(ctx, h.info.Name)
		h.abort(err)
		return Step{}, h.abortErr
	}
}

// abort cancels the call. The call's goroutine notices through its context;
// anything waiting in next returns the abort error.
func (h *handler) abort(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == stateDone {
		return
	}
	h.state = stateDone
	h.pending = nil
	h.abortErr = err
	h.cancel(err)
	if h.aborted != nil { // nil for calls run inline
		close(h.aborted)
	}
}

// Respond resolves the pending request.
func (h *handler) Respond(ctx context.Context, resp Response) (Step, error) {
	h.mu.Lock()
	switch h.state {
	case stateNew:
		h.mu.Unlock()
		return Step{}, &InvalidInteractionError{ID: resp.ID, Message: "the call has not started"}
	case stateDone:
		h.mu.Unlock()
		return Step{}, &ClosedError{What: "handler for " + h.info.Name}
	case stateRunning:
		h.mu.Unlock()
		return Step{}, &InvalidInteractionError{ID: resp.ID, Message: "no request is pending"}
	}
	req := h.pending
	if _, err := req.CheckResponse(resp); err != nil {
		h.mu.Unlock()
		return Step{}, err
	}
	h.pending = nil
	h.state = stateRunning
	h.mu.Unlock()
	select {
	case h.replies <- resp:
	case <-h.done:
		// The call ended while the request was pending (its context was
		// cancelled): next reports how.
	case <-h.aborted:
		return Step{}, h.abortErr
	case <-ctx.Done():
		err := cancelledBy(ctx, h.info.Name)
		h.abort(err)
		return Step{}, h.abortErr
	}
	return h.next(ctx)
}

// Cancel stops the call.
func (h *handler) Cancel(reason string) error {
	h.mu.Lock()
	switch h.state {
	case stateNew:
		h.state = stateDone
		h.mu.Unlock()
		return nil
	case stateDone:
		h.mu.Unlock()
		return &ClosedError{What: "handler for " + h.info.Name}
	}
	h.mu.Unlock()
	h.abort(&CancelledError{Tool: h.info.Name, Reason: reason})
	return nil
}

func causeText(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil {
		return c.Error()
	}
	return ""
}

// Ask puts r to the caller of the call ctx belongs to and waits for the
// answer: CallFromContext(ctx).Ask. Outside a call made through
// NewHandler it returns an *UndeclaredInteractionError.
func Ask(ctx context.Context, r *Request) (Response, error) {
	return CallFromContext(ctx).Ask(ctx, r)
}

// Ask puts r to the caller of the call and waits for the answer; ctx
// bounds the wait. It fills r.ID (when empty), r.Tool, r.CallID and
// r.Library (when empty), checks r against the tool's declared
// capabilities, and checks the answer's shape; the returned Response's
// Value is normalized as Request.CheckResponse says. A call whose tool
// declares no interaction cannot ask: *UndeclaredInteractionError.
func (c *CallRequest) Ask(ctx context.Context, r *Request) (Response, error) {
	if c == nil || c.h == nil {
		return Response{}, &UndeclaredInteractionError{Tool: c.toolName(), Kind: r.Kind}
	}
	if r.ID == "" {
		r.ID = NewID()
	}
	r.Tool, r.CallID = c.Info.Name, c.CallID
	if r.Library == "" {
		r.Library = c.Info.Library.ID
	}
	if err := r.Check(); err != nil {
		return Response{}, err
	}
	if !c.Info.Interactions.allows(r) {
		return Response{}, &UndeclaredInteractionError{Tool: c.Info.Name, Kind: r.Kind}
	}
	h := c.h
	if h.drv != nil {
		return h.askInline(ctx, r)
	}
	select {
	case h.requests <- r:
	case <-ctx.Done():
		return Response{}, cancelledBy(ctx, c.Info.Name)
	}
	select {
	case resp := <-h.replies:
		v, _ := r.CheckResponse(resp) // checked in Respond
		resp.Value = v
		return resp, nil
	case <-ctx.Done():
		return Response{}, cancelledBy(ctx, c.Info.Name)
	}
}

// askInline answers a request of a call Drive runs inline, as Drive's
// loop would have: OnRequest, the answer, OnResponse, an answer of the
// wrong shape declined with a reason, and the call's end or Drive's
// context ending the wait with the call's cancellation.
func (h *handler) askInline(ctx context.Context, r *Request) (Response, error) {
	h.askMu.Lock()
	defer h.askMu.Unlock()
	if err := h.stillAsking(ctx); err != nil {
		return Response{}, err
	}
	d := h.drv
	if d.opts.OnRequest != nil {
		d.opts.OnRequest(r)
	}
	resp := d.opts.answer(d.ctx, r)
	if d.opts.OnResponse != nil {
		d.opts.OnResponse(r, r.Redacted(resp))
	}
	if err := h.stillAsking(ctx); err != nil {
		return Response{}, err
	}
	v, err := r.CheckResponse(resp)
	if err != nil {
		var bad *InvalidInteractionError
		if !errors.As(err, &bad) {
			return Response{}, err
		}
		resp = r.Declined("The answer was not valid: " + bad.Message)
		if v, err = r.CheckResponse(resp); err != nil {
			return Response{}, err
		}
	}
	resp.Value = v
	if r.Kind == KindConfirm {
		d.declined = nil
		if resp.Action == Decline {
			d.declined = &Rejection{Reason: resp.Reason}
		}
	}
	return resp, nil
}

// stillAsking returns the error that ends an inline request: the call
// is over or cancelled (ctx, the asker's), or Drive's context ended.
func (h *handler) stillAsking(ctx context.Context) error {
	h.mu.Lock()
	done, abortErr := h.state == stateDone, h.abortErr
	h.mu.Unlock()
	switch {
	case abortErr != nil:
		return abortErr
	case ctx.Err() != nil:
		return cancelledBy(ctx, h.info.Name)
	case done:
		return &ClosedError{What: "handler for " + h.info.Name}
	case h.drv.ctx.Err() != nil:
		err := cancelledBy(h.drv.ctx, h.info.Name)
		h.abort(err)
		return err
	}
	return nil
}

// cancelledBy returns the error a call ends with when ctx is done: the
// cause if it is a *CancelledError or *TimeoutError, else a *CancelledError.
func cancelledBy(ctx context.Context, tool string) error {
	cause := context.Cause(ctx)
	var c *CancelledError
	var t *TimeoutError
	if errors.As(cause, &c) || errors.As(cause, &t) {
		return cause
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return &TimeoutError{Tool: tool}
	}
	return &CancelledError{Tool: tool, Reason: causeText(ctx)}
}

// ContextError returns the engine error a call of the named tool ends with
// when ctx is done: a *TimeoutError for a deadline, a *CancelledError
// otherwise (or the context's cause when it is one of those).
func ContextError(ctx context.Context, tool string) error { return cancelledBy(ctx, tool) }
