package hitl_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

// TestOpenDecidesAtOnce: what the broker can answer without a person,
// Open answers without a ticket, as Ask would.
func TestOpenDecidesAtOnce(t *testing.T) {
	for _, tt := range []struct {
		name   string
		setup  func(*hitl.Broker)
		opts   *hitl.Options
		req    *tool.Request
		action tool.Action
		value  any
		err    bool
	}{
		{name: "always memory", setup: func(b *hitl.Broker) { b.Remember("lib", "rm") },
			req: confirmReq("lib", "rm"), action: tool.Submit, value: tool.Always},
		{name: "policy allow", opts: &hitl.Options{Policy: hitl.Policy{Approve: hitl.ApproveAllow}},
			req: confirmReq("lib", "rm"), action: tool.Submit, value: tool.Allow},
		{name: "policy reject", opts: &hitl.Options{Policy: hitl.Policy{Approve: hitl.ApproveReject}},
			req: confirmReq("lib", "rm"), action: tool.Decline},
		{name: "draining", setup: func(b *hitl.Broker) { b.Drain("stopping") },
			req: &tool.Request{Kind: tool.KindText, Tool: "t", Prompt: "name?"}, action: tool.Decline},
		{name: "the host's own request", req: &tool.Request{Kind: tool.KindHost, Tool: "t", Host: 1}, action: tool.Decline},
		{name: "malformed", req: &tool.Request{Kind: tool.KindSelect, Tool: "t"}, action: tool.Decline, err: true},
		{name: "closed", setup: func(b *hitl.Broker) { b.Close() },
			req: confirmReq("lib", "rm"), action: tool.Cancel, err: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := hitl.New(nil, tt.opts)
			defer b.Close()
			if tt.setup != nil {
				tt.setup(b)
			}
			tk, resp, err := b.Open(context.Background(), tt.req)
			if tk != nil {
				t.Fatalf("Open gave a ticket for a request it can decide")
			}
			if (err != nil) != tt.err {
				t.Errorf("error %v, want one: %v", err, tt.err)
			}
			if resp.Action != tt.action || (tt.value != nil && resp.Value != tt.value) {
				t.Errorf("answer %+v, want %s %v", resp, tt.action, tt.value)
			}
			if len(b.Pending()) != 0 {
				t.Errorf("pending: %+v", b.Pending())
			}
		})
	}
}

// TestTicketSettles: a ticket's request is pending until the first of
// its front end, a person answering elsewhere, a grant, its limit, a
// drain or Close settles it; later settlements get the first answer.
func TestTicketSettles(t *testing.T) {
	question := func() *tool.Request { return &tool.Request{Kind: tool.KindText, Tool: "t", Prompt: "name?"} }
	for _, tt := range []struct {
		name   string
		req    *tool.Request
		opts   *hitl.Options
		settle func(*hitl.Broker, *hitl.Ticket) tool.Response // returns what the call gets
		action tool.Action
		value  any
		reason string
		by     hitl.By
	}{
		{name: "the front end answers", req: question(),
			settle: func(_ *hitl.Broker, tk *hitl.Ticket) tool.Response {
				return tk.Resolve(tk.Request().Submitted("Ada"))
			}, action: tool.Submit, value: "Ada", by: hitl.ByFrontEnd},
		{name: "an answer that does not fit is declined", req: &tool.Request{Kind: tool.KindSelect, Tool: "t", Options: []string{"a", "b"}},
			settle: func(_ *hitl.Broker, tk *hitl.Ticket) tool.Response {
				return tk.Resolve(tk.Request().Submitted("c"))
			}, action: tool.Decline, by: hitl.ByFrontEnd},
		{name: "the front end fails", req: confirmReq("lib", "rm"),
			settle: func(_ *hitl.Broker, tk *hitl.Ticket) tool.Response {
				return tk.Fail(errors.New("no form"))
			}, action: tool.Decline, by: hitl.ByFrontEnd},
		{name: "a person answers first", req: question(),
			settle: func(b *hitl.Broker, tk *hitl.Ticket) tool.Response {
				if err := b.Answer(tk.Request().ID, tool.Response{Action: tool.Submit, Value: "Grace"}); err != nil {
					t.Fatal(err)
				}
				return tk.Resolve(tk.Request().Submitted("Ada"))
			}, action: tool.Submit, value: "Grace", by: hitl.ByAnswer},
		{name: "an always grant settles it", req: confirmReq("lib", "rm"),
			settle: func(b *hitl.Broker, tk *hitl.Ticket) tool.Response {
				other, _, _ := b.Open(context.Background(), confirmReq("lib", "rm"))
				other.Resolve(other.Request().Submitted(tool.Always))
				resp, ok := tk.Settled()
				if !ok {
					t.Fatal("the grant did not settle the pending confirmation")
				}
				return resp
			}, action: tool.Submit, value: tool.Always, by: hitl.ByAlways},
		{name: "its limit", req: confirmReq("lib", "rm"), opts: &hitl.Options{ConfirmLimit: time.Millisecond},
			settle: func(_ *hitl.Broker, tk *hitl.Ticket) tool.Response {
				<-tk.Done()
				return tk.Resolve(tk.Request().Submitted(tool.Allow))
			}, action: tool.Decline, reason: hitl.ApprovalTimedOut, by: hitl.ByTimeout},
		{name: "a drain", req: question(),
			settle: func(b *hitl.Broker, tk *hitl.Ticket) tool.Response {
				b.Drain("stopping")
				return tk.Resolve(tk.Request().Submitted("Ada"))
			}, action: tool.Decline, reason: "stopping", by: hitl.ByDrain},
		{name: "withdrawn", req: question(),
			settle: func(_ *hitl.Broker, tk *hitl.Ticket) tool.Response {
				tk.Withdraw("")
				return tk.Resolve(tk.Request().Submitted("Ada"))
			}, action: tool.Cancel, by: hitl.ByCaller},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, capt := newCaptured(t, nil, tt.opts)
			tk, _, err := b.Open(context.Background(), tt.req)
			if err != nil || tk == nil {
				t.Fatalf("Open: %v, %v", tk, err)
			}
			// The limit settles its case on its own, at once: the request
			// may be gone from Pending by the time the test looks.
			if p := b.Pending(); tt.by != hitl.ByTimeout && (len(p) != 1 || p[0].Request.ID != tk.Request().ID) {
				t.Fatalf("pending %+v, want the ticket's request", p)
			}
			resp := tt.settle(b, tk)
			if resp.ID != tk.Request().ID || resp.Action != tt.action || (tt.value != nil && resp.Value != tt.value) ||
				(tt.reason != "" && resp.Reason != tt.reason) {
				t.Errorf("the call gets %+v, want %s %v %q", resp, tt.action, tt.value, tt.reason)
			}
			if again, ok := tk.Settled(); !ok || again != resp {
				t.Errorf("Settled %+v %v, want %+v", again, ok, resp)
			}
			if len(b.Pending()) != 0 {
				t.Errorf("still pending: %+v", b.Pending())
			}
			var by hitl.By
			for _, e := range capt.events(t, b) {
				if e.Request != nil && e.Request.ID == tk.Request().ID && e.Type != hitl.EventOpened {
					by = e.By
				}
			}
			if by != tt.by {
				t.Errorf("settled by %q, want %q", by, tt.by)
			}
		})
	}
}
