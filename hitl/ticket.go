package hitl

import (
	"context"
	"time"

	"github.com/lcptools/lcp/tool"
)

// Ticket is a request the broker could not decide at once, opened by Open
// for a front end that answers later rather than while the call waits:
// an MCP client of the 2026-07-28 revision answers a call's question
// with its next request. Until it is settled the request is pending like
// one Ask waits for: its opened event is out, Pending lists it, Answer
// and an always grant may settle it, its limit declines it (with
// ApprovalTimedOut or QuestionTimedOut), Drain declines it and Close
// withdraws it. Whoever comes first settles it, once.
//
// A Ticket is safe for concurrent use.
type Ticket struct {
	b     *Broker
	e     *entry
	timer *time.Timer
}

// Open begins to resolve r without waiting for anybody. When the broker
// can answer at once — a malformed request, the host's own request (never
// a person's), the always memory, the policy, a drain, a closed broker —
// Open returns that answer, with the error Ask would return, and a nil
// Ticket. Otherwise it returns the pending request's Ticket, which the
// front end settles with Resolve when its answer comes, or Withdraw when
// the call no longer waits. ctx gives the request its values (it is not
// watched: Withdraw ends the wait).
func (b *Broker) Open(ctx context.Context, r *tool.Request) (*Ticket, tool.Response, error) {
	e, resp, err := b.open(ctx, r, false)
	if e == nil {
		return nil, resp, err
	}
	t := &Ticket{b: b, e: e}
	if e.limit > 0 {
		t.timer = time.AfterFunc(e.limit, func() {
			b.resolve(e, timedOut(e.req), ByTimeout, EventTimedOut, ErrTimedOut)
		})
	}
	return t, tool.Response{}, nil
}

// Request returns the request as the broker holds it: with its id (one
// is made for a request that had none) and the call's fields.
func (t *Ticket) Request() *tool.Request { return cloneRequest(t.e.req) }

// Done is closed once the request is settled, by whoever settled it.
func (t *Ticket) Done() <-chan struct{} { return t.e.done }

// Settled returns the answer when the request is settled already: by
// Answer, an always grant, its limit, a drain or Close.
func (t *Ticket) Settled() (tool.Response, bool) {
	select {
	case <-t.e.done:
		return t.e.resp, true
	default:
		return tool.Response{}, false
	}
}

// Resolve settles the request with the front end's answer and returns
// the answer the call gets: resp in its canonical form (as Ask returns
// it), a decline that says what was wrong when resp does not fit the
// request, or the answer that settled it first (a grant, the limit, a
// drain, a person on another front end). An always approval is
// remembered as Ask's are.
func (t *Ticket) Resolve(resp tool.Response) tool.Response {
	e := t.e
	norm, err := normalize(e.req, resp)
	if err != nil {
		t.b.log.Warn("hitl: front end failed", "id", e.req.ID, "error", err)
		t.b.resolve(e, failed(e.req, err), ByFrontEnd, EventFailed, ErrAnswered)
	} else {
		t.b.resolve(e, norm, ByFrontEnd, EventAnswered, ErrAnswered)
	}
	t.stopTimer()
	<-e.done
	return e.resp
}

// Fail settles the request as one the front end could not ask (a
// confirmation is not approved, a question is declined, with err as the
// reason) and returns the answer the call gets, which is the first one
// when something else settled it before.
func (t *Ticket) Fail(err error) tool.Response {
	t.b.log.Warn("hitl: front end failed", "id", t.e.req.ID, "error", err)
	t.b.resolve(t.e, failed(t.e.req, err), ByFrontEnd, EventFailed, ErrAnswered)
	t.stopTimer()
	<-t.e.done
	return t.e.resp
}

// Withdraw settles the request as cancelled by its call (the call ended,
// its client went away) with reason, unless it is settled already.
func (t *Ticket) Withdraw(reason string) {
	if reason == "" {
		reason = "the call was cancelled"
	}
	t.b.resolve(t.e, t.e.req.Cancelled(reason), ByCaller, EventWithdrawn, ErrWithdrawn)
	t.stopTimer()
}

func (t *Ticket) stopTimer() {
	if t.timer != nil {
		t.timer.Stop()
	}
}
