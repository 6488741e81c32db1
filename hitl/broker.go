package hitl

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/lcptools/lcp/tool"
)

// The default limits of SPEC §10.
const (
	// DefaultConfirmLimit is how long a confirmation waits for an answer.
	DefaultConfirmLimit = 300 * time.Second
	// DefaultQuestionLimit is how long a question waits for an answer.
	DefaultQuestionLimit = 600 * time.Second
)

// The reasons of requests nobody answered in time.
const (
	// ApprovalTimedOut is the reason of a confirmation rejected because
	// nobody answered it within the limit (the seeds' exact text).
	ApprovalTimedOut = "Approval request timed out."
	// QuestionTimedOut is the reason of a question declined because nobody
	// answered it within the limit. LCP tools get None.
	QuestionTimedOut = "The question was not answered in time."
)

// Options configures a Broker. A nil *Options means the defaults.
type Options struct {
	// Policy decides confirmations before any front end sees them.
	Policy Policy
	// ConfirmLimit bounds how long a confirmation waits for an answer,
	// after which it is rejected with ApprovalTimedOut; zero means
	// DefaultConfirmLimit, a negative value no limit.
	ConfirmLimit time.Duration
	// QuestionLimit bounds how long a question (text, secret, select,
	// form) waits, after which it is declined with QuestionTimedOut; zero
	// means DefaultQuestionLimit, a negative value no limit.
	QuestionLimit time.Duration
	// Logger gets a record for each request opened and resolved, without
	// answer values; nil means no logging.
	Logger *slog.Logger
}

// Broker is the human in the loop of one session: every confirmation and
// question of every call goes through it. It applies the approval policy,
// answers confirmations the person already approved "always" for the same
// library and label, puts the rest to a front end, bounds the wait,
// withdraws the requests of cancelled calls, and publishes every step as
// an Event. Several requests may be pending at once; each is answered
// exactly once, by whichever comes first: the front end, Answer, the
// limit, or the call's cancellation.
//
// A Broker is safe for concurrent use. Its Respond method is a
// tool.CallOptions.Respond.
type Broker struct {
	fe            FrontEnd
	policy        Approval
	rejectReason  string
	confirmLimit  time.Duration
	questionLimit time.Duration
	log           *slog.Logger

	asking sync.WaitGroup // the front ends' Ask calls in flight

	mu      sync.Mutex
	closed  bool
	drain   string // the reason of Drain, once draining
	seq     uint64
	pending map[string]*entry
	grants  []Grant
	subs    map[*Subscription]struct{}
}

// entry is one pending request.
type entry struct {
	req      *tool.Request // as asked
	shown    *tool.Request // as events show it (secrets masked)
	seq      uint64        // of its opened event
	opened   time.Time
	deadline time.Time
	limit    time.Duration           // how long it may wait (<= 0: no limit)
	feCtx    context.Context         // the front end's context, cancelled by stop
	stop     context.CancelCauseFunc // cancels the front end's context
	done     chan struct{}           // closed once resolved
	resp     tool.Response           // the answer, set before done closes
	by       By
}

// New returns a broker that puts requests to fe unless the call's context
// names another front end (WithFrontEnd). With a nil fe the broker is a
// pure event queue: requests wait for Answer (from a subscriber such as a
// web page) until their limit; a host with nobody to ask passes
// Unattended{}. A nil opts means the defaults.
func New(fe FrontEnd, opts *Options) *Broker {
	if opts == nil {
		opts = &Options{}
	}
	b := &Broker{
		fe:            fe,
		policy:        opts.Policy.Approve,
		rejectReason:  opts.Policy.RejectReason,
		confirmLimit:  opts.ConfirmLimit,
		questionLimit: opts.QuestionLimit,
		log:           opts.Logger,
		pending:       map[string]*entry{},
		subs:          map[*Subscription]struct{}{},
	}
	if b.policy == "" {
		b.policy = ApproveAsk
	}
	if b.rejectReason == "" {
		b.rejectReason = PolicyRejected
	}
	if b.confirmLimit == 0 {
		b.confirmLimit = DefaultConfirmLimit
	}
	if b.questionLimit == 0 {
		b.questionLimit = DefaultQuestionLimit
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	return b
}

// Respond resolves r: it is Ask without the error, usable as
// tool.CallOptions.Respond. A malformed request is declined with a reason
// that says what is wrong; a withdrawn one is cancelled.
func (b *Broker) Respond(ctx context.Context, r *tool.Request) tool.Response {
	return b.RespondVia(ctx, nil, r)
}

// RespondVia is Respond with fe as the front end that asks the person
// this one request, instead of the one the context names (WithFrontEnd)
// or the broker's own; a nil fe means those. An MCP server puts each
// call's requests to the client the call came from this way.
func (b *Broker) RespondVia(ctx context.Context, fe FrontEnd, r *tool.Request) tool.Response {
	resp, err := b.ask(ctx, fe, r)
	if err != nil && resp.Action == "" {
		resp = tool.Response{Action: tool.Decline, Reason: err.Error()}
		if r != nil {
			resp.ID = r.ID
		}
	}
	return resp
}

// Ask resolves r and returns the answer. Its errors: a
// *tool.InvalidInteractionError for a malformed request (a select without
// options, an unknown kind), the error of tool.ContextError when ctx ended
// first (the request is withdrawn and the response is a Cancel), a
// *tool.ClosedError after Close. A request nobody answers in time is not
// an error: it is declined with ApprovalTimedOut or QuestionTimedOut.
func (b *Broker) Ask(ctx context.Context, r *tool.Request) (tool.Response, error) {
	return b.ask(ctx, nil, r)
}

// ask is Ask with fe as the front end (nil: the context's, else the
// broker's own).
func (b *Broker) ask(ctx context.Context, fe FrontEnd, r *tool.Request) (tool.Response, error) {
	if ctx.Err() != nil && r != nil {
		req := cloneRequest(r)
		if req.Check() == nil {
			if req.ID == "" {
				req.ID = tool.NewID()
			}
			return req.Cancelled("the call was cancelled"), tool.ContextError(ctx, req.Tool)
		}
	}
	if fe == nil {
		fe = FrontEndFrom(ctx)
	}
	if fe == nil {
		fe = b.fe
	}
	e, resp, err := b.open(ctx, r, fe != nil)
	if e == nil {
		return resp, err
	}
	if fe != nil {
		go func() {
			defer b.asking.Done()
			b.put(e.feCtx, fe, e)
		}()
	}
	var timeout <-chan time.Time
	if limit := e.limit; limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-e.done:
	case <-timeout:
		b.resolve(e, timedOut(e.req), ByTimeout, EventTimedOut, ErrTimedOut)
	case <-ctx.Done():
		b.resolve(e, e.req.Cancelled("the call was cancelled"), ByCaller, EventWithdrawn, ErrWithdrawn)
	}
	<-e.done
	return e.result(ctx)
}

// result is what Ask returns for e once it is resolved.
func (e *entry) result(ctx context.Context) (tool.Response, error) {
	if e.by == ByCaller {
		return e.resp, tool.ContextError(ctx, e.req.Tool)
	}
	if e.by == ByBroker {
		return e.resp, &tool.ClosedError{What: "hitl broker"}
	}
	return e.resp, nil
}

// open is what Ask and Open share: it checks r and answers it at once
// when it can (a malformed request, the host's own, the always memory,
// the policy, a drain, a closed broker), returning a nil entry and the
// answer; otherwise it makes r pending and returns its entry, whose
// opened event is out. asking counts a front end about to be asked
// (b.asking), under the lock Close takes.
func (b *Broker) open(ctx context.Context, r *tool.Request, asking bool) (*entry, tool.Response, error) {
	if r == nil {
		return nil, tool.Response{}, fmt.Errorf("hitl: %w", &tool.InvalidInteractionError{Message: "no request"})
	}
	req := cloneRequest(r)
	if req.ID == "" {
		req.ID = tool.NewID()
	}
	if err := req.Check(); err != nil {
		b.log.Warn("hitl: invalid request", "id", req.ID, "tool", req.Tool, "kind", string(req.Kind), "error", err)
		return nil, tool.Response{ID: req.ID, Action: tool.Decline, Reason: err.Error()}, fmt.Errorf("hitl: %w", err)
	}
	if req.Kind == tool.KindHost {
		// The host's own request (an MCP client's model, say) is for the
		// front end that made the call, never a person's question.
		return nil, tool.Nobody{}.Answer(req), nil
	}

	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, req.Cancelled("the broker is closed"), &tool.ClosedError{What: "hitl broker"}
	}
	if req.Kind == tool.KindConfirm {
		if resp, by, ok := b.decideLocked(req); ok {
			b.publishLocked(Event{Type: EventAnswered, Request: masked(req), Response: redacted(req, resp), By: by})
			b.mu.Unlock()
			b.logResolved(req, resp, by)
			return nil, resp, nil
		}
	}
	if b.drain != "" {
		// Nobody will be there to answer: the host is stopping.
		resp := req.Declined(b.drain)
		b.publishLocked(Event{Type: EventAnswered, Request: masked(req), Response: redacted(req, resp), By: ByDrain})
		b.mu.Unlock()
		b.logResolved(req, resp, ByDrain)
		return nil, resp, nil
	}
	if _, dup := b.pending[req.ID]; dup {
		b.mu.Unlock()
		err := &tool.InvalidInteractionError{ID: req.ID, Message: "a request with this id is already pending"}
		return nil, tool.Response{ID: req.ID, Action: tool.Decline, Reason: err.Error()}, fmt.Errorf("hitl: %w", err)
	}
	limit := b.questionLimit
	if req.Kind == tool.KindConfirm {
		limit = b.confirmLimit
	}
	e := &entry{req: req, shown: masked(req), opened: time.Now(), limit: limit, done: make(chan struct{})}
	if limit > 0 {
		e.deadline = e.opened.Add(limit)
	}
	// The front end's context keeps the call's values but is cancelled
	// only by the broker, so that its cause always says why.
	e.feCtx, e.stop = context.WithCancelCause(context.WithoutCancel(ctx))
	b.pending[req.ID] = e
	if asking {
		// Counted under the lock that Close takes first, so that Close
		// waits for every front end it did not prevent from starting.
		b.asking.Add(1)
	}
	e.seq = b.publishLocked(Event{Type: EventOpened, Request: e.shown, Deadline: e.deadline})
	b.mu.Unlock()
	b.log.Info("hitl: request opened", "id", req.ID, "kind", string(req.Kind), "tool", req.Tool,
		"library", req.Library, "call_id", req.CallID, "label", req.Label)
	return e, tool.Response{}, nil
}

// decideLocked answers a confirmation without a person when the always
// memory or the policy can.
func (b *Broker) decideLocked(req *tool.Request) (tool.Response, By, bool) {
	if b.grantedLocked(req.Library, req.Label) {
		return req.Submitted(tool.Always), ByAlways, true
	}
	switch b.policy {
	case ApproveAllow:
		return req.Submitted(tool.Allow), ByPolicy, true
	case ApproveReject:
		return req.Declined(b.rejectReason), ByPolicy, true
	}
	return tool.Response{}, "", false
}

// put puts e to fe and resolves e with the answer, unless something else
// resolved it first.
func (b *Broker) put(ctx context.Context, fe FrontEnd, e *entry) {
	resp, err := fe.Ask(ctx, cloneRequest(e.req))
	if ctx.Err() != nil {
		return // resolved meanwhile: the front end's answer is moot
	}
	if err == nil {
		resp, err = normalize(e.req, resp)
	}
	if err != nil {
		b.log.Warn("hitl: front end failed", "id", e.req.ID, "error", err)
		b.resolve(e, failed(e.req, err), ByFrontEnd, EventFailed, ErrAnswered)
		return
	}
	b.resolve(e, resp, ByFrontEnd, EventAnswered, ErrAnswered)
}

// Answer resolves the pending request id with resp (its ID is set to id):
// the event-stream way to answer, for UIs that subscribe. It returns an
// error wrapping ErrNotPending when id is not pending (never asked,
// already answered, withdrawn, timed out) and a
// *tool.InvalidInteractionError when resp does not fit the request (the
// request then stays pending).
func (b *Broker) Answer(id string, resp tool.Response) error {
	b.mu.Lock()
	e := b.pending[id]
	b.mu.Unlock()
	if e == nil {
		return fmt.Errorf("hitl: answer to %s: %w", id, ErrNotPending)
	}
	resp, err := normalize(e.req, resp)
	if err != nil {
		return fmt.Errorf("hitl: %w", err)
	}
	if !b.resolve(e, resp, ByAnswer, EventAnswered, ErrAnswered) {
		return fmt.Errorf("hitl: answer to %s: %w", id, ErrNotPending)
	}
	return nil
}

// resolve settles e once; later calls report false.
func (b *Broker) resolve(e *entry, resp tool.Response, by By, typ EventType, cause error) bool {
	b.mu.Lock()
	ok := b.resolveLocked(e, resp, by, typ, cause)
	b.mu.Unlock()
	if ok {
		b.logResolved(e.req, resp, by)
	}
	return ok
}

func (b *Broker) resolveLocked(e *entry, resp tool.Response, by By, typ EventType, cause error) bool {
	if b.pending[e.req.ID] != e {
		return false
	}
	delete(b.pending, e.req.ID)
	resp.ID = e.req.ID
	e.resp, e.by = resp, by
	b.publishLocked(Event{Type: typ, Request: e.shown, Response: redacted(e.req, resp), By: by})
	if e.req.Kind == tool.KindConfirm && resp.Action == tool.Submit && resp.Value == tool.Always {
		b.grantLocked(e.req.Library, e.req.Label, e.req.Tool)
	}
	// Last, so that when Ask returns its events are out.
	e.stop(cause)
	close(e.done)
	return true
}

// grantLocked remembers an always approval and settles the confirmations
// it covers that are still pending.
func (b *Broker) grantLocked(library, label, toolName string) {
	if b.grantedLocked(library, label) {
		return
	}
	g := Grant{Library: library, Label: label, Tool: toolName, Time: time.Now()}
	b.grants = append(b.grants, g)
	b.publishLocked(Event{Type: EventGranted, Grant: &g})
	for _, e := range b.sortedPendingLocked() {
		if e.req.Kind == tool.KindConfirm && e.req.Library == library && e.req.Label == label {
			resp := e.req.Submitted(tool.Always)
			if b.resolveLocked(e, resp, ByAlways, EventAnswered, ErrAnswered) {
				b.logResolved(e.req, resp, ByAlways)
			}
		}
	}
}

func (b *Broker) logResolved(req *tool.Request, resp tool.Response, by By) {
	attrs := []any{"id", req.ID, "kind", string(req.Kind), "tool", req.Tool, "by", string(by), "action", string(resp.Action)}
	if req.Kind == tool.KindConfirm && resp.Action == tool.Submit {
		attrs = append(attrs, "decision", fmt.Sprint(resp.Value))
	}
	if resp.Reason != "" {
		attrs = append(attrs, "reason", resp.Reason)
	}
	b.log.Info("hitl: request resolved", attrs...)
}

// Pending is a request waiting for an answer, as Broker.Pending lists it.
type Pending struct {
	// Request is the request, secrets masked (a secret's default).
	Request *tool.Request `json:"request"`
	// Opened is when it was asked; Deadline when it times out (zero: never).
	Opened   time.Time `json:"opened"`
	Deadline time.Time `json:"deadline,omitzero"`
}

// Pending lists the requests waiting for an answer, oldest first.
func (b *Broker) Pending() []Pending {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Pending
	for _, e := range b.sortedPendingLocked() {
		out = append(out, Pending{Request: cloneRequest(e.shown), Opened: e.opened, Deadline: e.deadline})
	}
	return out
}

func (b *Broker) sortedPendingLocked() []*entry {
	es := make([]*entry, 0, len(b.pending))
	for _, e := range b.pending {
		es = append(es, e)
	}
	slices.SortFunc(es, func(x, y *entry) int { return cmp.Compare(x.seq, y.seq) })
	return es
}

// Drain declines every pending request with reason (a confirmation is
// rejected, a question declined), and every later one that the always
// memory or the policy cannot answer, while the calls themselves go on:
// a host that stops takes no new questions to a person who may not be
// there to answer in time. It returns how many pending requests it
// declined. Drain is for a graceful stop (before Close); a later Drain
// changes the reason.
func (b *Broker) Drain(reason string) int {
	if reason == "" {
		reason = "The host is shutting down: nobody can answer this request."
	}
	b.mu.Lock()
	b.drain = reason
	var declined []*entry
	for _, e := range b.sortedPendingLocked() {
		if b.resolveLocked(e, e.req.Declined(reason), ByDrain, EventAnswered, ErrWithdrawn) {
			declined = append(declined, e)
		}
	}
	b.mu.Unlock()
	for _, e := range declined {
		b.logResolved(e.req, e.resp, ByDrain)
	}
	return len(declined)
}

// Close withdraws every pending request (cancelled, with ErrWithdrawn as
// the front ends' cause), ends every subscription, makes later requests
// fail with a *tool.ClosedError, and waits until every front end has
// returned from Ask — so that a terminal is restored when Close returns.
// It is idempotent.
func (b *Broker) Close() error {
	b.mu.Lock()
	if !b.closed {
		for _, e := range b.sortedPendingLocked() {
			b.resolveLocked(e, e.req.Cancelled("the host is shutting down"), ByBroker, EventWithdrawn, ErrWithdrawn)
		}
		b.closed = true
		for s := range b.subs {
			s.closeLocked()
		}
		clear(b.subs)
	}
	b.mu.Unlock()
	b.asking.Wait()
	return nil
}

// normalize checks resp against req and returns it in its canonical form:
// the request's id, a normalized value, and a confirmation submitted as
// reject turned into the Decline it means.
func normalize(req *tool.Request, resp tool.Response) (tool.Response, error) {
	resp.ID = req.ID
	v, err := req.CheckResponse(resp)
	if err != nil {
		return resp, err
	}
	if resp.Action != tool.Submit {
		resp.Value = nil
		return resp, nil
	}
	if v == tool.Reject {
		reason := resp.Reason
		if reason == "" {
			reason = "The operator rejected the action."
		}
		return req.Declined(reason), nil
	}
	resp.Value = v
	return resp, nil
}

func timedOut(req *tool.Request) tool.Response {
	if req.Kind == tool.KindConfirm {
		return req.Declined(ApprovalTimedOut)
	}
	return req.Declined(QuestionTimedOut)
}

// failed is the answer to a request whose front end failed: never an
// approval.
func failed(req *tool.Request, err error) tool.Response {
	if req.Kind == tool.KindConfirm {
		return req.Declined(fmt.Sprintf("Not approved: the approval could not be asked (%v).", err))
	}
	return req.Declined(fmt.Sprintf("The question could not be asked (%v).", err))
}

func cloneRequest(r *tool.Request) *tool.Request {
	c := *r
	c.Options = slices.Clone(r.Options)
	c.Argv = slices.Clone(r.Argv)
	c.Schema = slices.Clone(r.Schema)
	if r.Default != nil {
		d := *r.Default
		c.Default = &d
	}
	return &c
}

// masked returns a copy of r safe to publish: a secret's default, if it
// has one, is masked like its answer.
func masked(r *tool.Request) *tool.Request {
	c := cloneRequest(r)
	if c.Kind == tool.KindSecret && c.Default != nil {
		m := tool.Mask(*c.Default)
		c.Default = &m
	}
	return c
}

func redacted(req *tool.Request, resp tool.Response) *tool.Response {
	r := req.Redacted(resp)
	return &r
}
