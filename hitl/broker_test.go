package hitl_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

// TestUnattendedPolicies is the behaviour of a host without a terminal:
// every combination of the approval policy and request kind.
func TestUnattendedPolicies(t *testing.T) {
	sel := &tool.Request{Kind: tool.KindSelect, Options: []string{"a", "b"}, Default: ptr("b")}
	tests := []struct {
		name    string
		approve hitl.Approval
		req     *tool.Request
		action  tool.Action
		value   any
		reason  []string // substrings of the reason
	}{
		{"ask rejects and names the flags", hitl.ApproveAsk, confirmReq("sh", "deploy:production"), tool.Decline, nil,
			[]string{`"deploy:production"`, "--yes", "--approve=allow"}},
		{"empty policy is ask", "", confirmReq("sh", "x"), tool.Decline, nil, []string{"--yes"}},
		{"allow approves", hitl.ApproveAllow, confirmReq("sh", "x"), tool.Submit, tool.Allow, nil},
		{"reject rejects", hitl.ApproveReject, confirmReq("sh", "x"), tool.Decline, nil, []string{"--approve=reject"}},
		{"text default", hitl.ApproveAllow, &tool.Request{Kind: tool.KindText, Default: ptr("latest")}, tool.Submit, "latest", nil},
		{"text without default", hitl.ApproveAllow, &tool.Request{Kind: tool.KindText}, tool.Decline, nil, []string{"nobody can answer"}},
		{"select default", hitl.ApproveAsk, sel, tool.Submit, "b", nil},
		{"select default not an option", hitl.ApproveAsk, &tool.Request{Kind: tool.KindSelect, Options: []string{"a"}, Default: ptr("z")}, tool.Decline, nil, nil},
		{"select without default", hitl.ApproveAllow, &tool.Request{Kind: tool.KindSelect, Options: []string{"a"}}, tool.Decline, nil, nil},
		{"secret never from a policy", hitl.ApproveAllow, &tool.Request{Kind: tool.KindSecret, Default: ptr("hunter2")}, tool.Decline, nil, []string{"secret"}},
		{"form declined", hitl.ApproveAllow, &tool.Request{Kind: tool.KindForm, Schema: json.RawMessage(`{"type":"object"}`)}, tool.Decline, nil, nil},
		{"select without options is invalid", hitl.ApproveAllow, &tool.Request{Kind: tool.KindSelect}, tool.Decline, nil, []string{"needs options"}},
		{"unknown kind is invalid", hitl.ApproveAllow, &tool.Request{Kind: "color"}, tool.Decline, nil, []string{`unknown request type "color"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The texts a command line gives, naming its flags.
			b := hitl.New(hitl.Unattended{Hint: "run with --yes or --approve=allow to approve it"}, &hitl.Options{Policy: hitl.Policy{
				Approve: tt.approve, RejectReason: "Rejected by --approve=reject.",
			}})
			defer b.Close()
			resp := b.Respond(context.Background(), tt.req)
			if resp.Action != tt.action || resp.Value != tt.value {
				t.Fatalf("got %s %v (%q), want %s %v", resp.Action, resp.Value, resp.Reason, tt.action, tt.value)
			}
			for _, s := range tt.reason {
				if !strings.Contains(resp.Reason, s) {
					t.Errorf("reason %q lacks %q", resp.Reason, s)
				}
			}
			if len(b.Pending()) != 0 {
				t.Errorf("requests left pending: %v", b.Pending())
			}
		})
	}
}

// A library names no command-line flag: a host without a hint or reason
// of its own gets neutral texts.
func TestDefaultTextsNameNoFlags(t *testing.T) {
	for _, approve := range []hitl.Approval{hitl.ApproveAsk, hitl.ApproveReject} {
		b := hitl.New(hitl.Unattended{}, &hitl.Options{Policy: hitl.Policy{Approve: approve}})
		resp := b.Respond(context.Background(), confirmReq("sh", "x"))
		b.Close()
		if resp.Action != tool.Decline || strings.Contains(resp.Reason, "--") {
			t.Errorf("%s: %s %q", approve, resp.Action, resp.Reason)
		}
	}
}

func TestInvalidRequestIsAnError(t *testing.T) {
	b := hitl.New(hitl.Unattended{}, nil)
	defer b.Close()
	for _, r := range []*tool.Request{nil, {Kind: tool.KindSelect}, {Kind: "nope"}} {
		_, err := b.Ask(context.Background(), r)
		var inv *tool.InvalidInteractionError
		if !errors.As(err, &inv) {
			t.Errorf("Ask(%+v) = %v, want a *tool.InvalidInteractionError", r, err)
		}
	}
}

func TestDuplicateIDIsRefused(t *testing.T) {
	b := hitl.New(nil, nil)
	defer b.Close()
	sub := b.Subscribe(0)
	defer sub.Close()
	first := make(chan tool.Response, 1)
	go func() { first <- b.Respond(context.Background(), &tool.Request{ID: "same", Kind: tool.KindText}) }()
	<-sub.Events()
	var inv *tool.InvalidInteractionError
	if _, err := b.Ask(context.Background(), &tool.Request{ID: "same", Kind: tool.KindText}); !errors.As(err, &inv) {
		t.Fatalf("a second request with a pending id: %v, want *tool.InvalidInteractionError", err)
	}
	if err := b.Answer("same", tool.Response{Action: tool.Submit, Value: "one"}); err != nil {
		t.Fatal(err)
	}
	if r := <-first; r.Value != "one" {
		t.Errorf("first: %+v", r)
	}
}

func TestUnattendedHint(t *testing.T) {
	b := hitl.New(hitl.Unattended{Why: "no page is open", Hint: "answer from the web page"}, nil)
	defer b.Close()
	resp := b.Respond(context.Background(), confirmReq("sh", "x"))
	if want := "Not approved: nobody can approve \"x\" (no page is open); answer from the web page."; resp.Reason != want {
		t.Errorf("reason %q, want %q", resp.Reason, want)
	}
}

func TestAlwaysIsRememberedPerLibraryAndLabel(t *testing.T) {
	fe := &recorder{answer: func(r *tool.Request) tool.Response { return r.Submitted(tool.Always) }}
	b, c := newCaptured(t, fe, nil)
	ctx := context.Background()

	steps := []struct {
		lib, label string
		by         string // "asked" or "auto"
	}{
		{"system_shell", "rm", "asked"},
		{"system_shell", "rm", "auto"},
		{"system_shell", "rm", "auto"},
		{"system_shell", "curl", "asked"}, // another label
		{"execute_python", "rm", "asked"}, // another library
	}
	for i, s := range steps {
		before := fe.count()
		resp := b.Respond(ctx, confirmReq(s.lib, s.label))
		if resp.Action != tool.Submit || resp.Value != tool.Always {
			t.Fatalf("step %d: %+v, want always", i, resp)
		}
		if asked := fe.count() > before; asked != (s.by == "asked") {
			t.Errorf("step %d (%s/%s): asked=%v, want %s", i, s.lib, s.label, asked, s.by)
		}
	}
	got := b.Grants()
	if len(got) != 3 || got[0].Library != "system_shell" || got[0].Label != "rm" || got[0].Tool != "tool_x" {
		t.Fatalf("grants %+v", got)
	}
	if !b.Revoke("system_shell", "rm") || b.Revoke("system_shell", "rm") {
		t.Fatal("Revoke should report the grant once")
	}
	before := fe.count()
	b.Respond(ctx, confirmReq("system_shell", "rm"))
	if fe.count() != before+1 {
		t.Error("after Revoke the confirmation must be asked again")
	}
	if n := b.RevokeAll(); n != 3 {
		t.Errorf("RevokeAll = %d, want 3", n)
	}
	evs := c.events(t, b)
	var byAlways, granted, revoked int
	for _, ev := range evs {
		switch {
		case ev.Type == hitl.EventAnswered && ev.By == hitl.ByAlways:
			byAlways++
		case ev.Type == hitl.EventGranted:
			granted++
		case ev.Type == hitl.EventRevoked:
			revoked++
		}
	}
	if byAlways != 2 || granted != 4 || revoked != 4 {
		t.Errorf("events: %d answered by always, %d granted, %d revoked; want 2, 4, 4\n%v", byAlways, granted, revoked, types(evs))
	}
}

// An always answer settles the other pending confirmations it covers: the
// terminal never shows them.
func TestAlwaysSettlesPendingConfirmations(t *testing.T) {
	fe := &recorder{shown: make(chan *tool.Request, 4), gone: make(chan error, 4)}
	b := hitl.New(fe, nil)
	defer b.Close()
	ctx := context.Background()
	results := make(chan tool.Response, 3)
	reqs := []*tool.Request{confirmReq("lib", "deploy"), confirmReq("lib", "deploy"), confirmReq("lib", "other")}
	for _, r := range reqs {
		go func() { results <- b.Respond(ctx, r) }()
	}
	for range 3 {
		<-fe.shown
	}
	if err := b.Answer(reqs[0].ID, tool.Response{Action: tool.Submit, Value: "always"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r := <-results; r.Value != tool.Always {
			t.Errorf("got %+v, want always", r)
		}
	}
	p := b.Pending()
	if len(p) != 1 || p[0].Request.ID != reqs[2].ID {
		t.Fatalf("pending %+v, want only the other label", p)
	}
	if err := b.Answer(reqs[1].ID, tool.Response{Action: tool.Submit, Value: "allow"}); !errors.Is(err, hitl.ErrNotPending) {
		t.Errorf("answer to a settled request: %v, want ErrNotPending", err)
	}
	if err := b.Answer(reqs[2].ID, tool.Response{Action: tool.Decline, Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	if r := <-results; r.Action != tool.Decline || r.Reason != "no" {
		t.Errorf("got %+v", r)
	}
	// Every front end learns that its request was answered elsewhere; the
	// causes arrive asynchronously, after the results.
	for i := range 3 {
		select {
		case cause := <-fe.gone:
			if !errors.Is(cause, hitl.ErrAnswered) {
				t.Errorf("front end cause %d: %v, want ErrAnswered", i, cause)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("front end %d was never withdrawn", i)
		}
	}
}

func TestRemember(t *testing.T) {
	b := hitl.New(hitl.Unattended{}, nil)
	defer b.Close()
	b.Remember("system_shell", "git push")
	if r := b.Respond(context.Background(), confirmReq("system_shell", "git push")); r.Value != tool.Always {
		t.Errorf("got %+v, want always", r)
	}
	if r := b.Respond(context.Background(), confirmReq("system_shell", "git pull")); r.Action != tool.Decline {
		t.Errorf("got %+v, want a rejection", r)
	}
}

// The limits, measured on synctest's fake clock: the default limits are
// exactly 300 s and 600 s, without waiting for them.
func TestLimits(t *testing.T) {
	tests := []struct {
		name   string
		opts   *hitl.Options
		req    *tool.Request
		wait   time.Duration
		reason string
	}{
		{"confirm default", nil, confirmReq("l", "x"), 300 * time.Second, hitl.ApprovalTimedOut},
		{"question default", nil, &tool.Request{Kind: tool.KindText}, 600 * time.Second, hitl.QuestionTimedOut},
		{"secret default", nil, &tool.Request{Kind: tool.KindSecret}, 600 * time.Second, hitl.QuestionTimedOut},
		{"confirm configured", &hitl.Options{ConfirmLimit: 5 * time.Second}, confirmReq("l", "x"), 5 * time.Second, hitl.ApprovalTimedOut},
		{"question configured", &hitl.Options{QuestionLimit: time.Minute}, &tool.Request{Kind: tool.KindSelect, Options: []string{"a"}}, time.Minute, hitl.QuestionTimedOut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fe := &recorder{}
				b := hitl.New(fe, tt.opts)
				defer b.Close()
				start := time.Now()
				resp, err := b.Ask(context.Background(), tt.req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Action != tool.Decline || resp.Reason != tt.reason {
					t.Errorf("got %+v, want a decline with %q", resp, tt.reason)
				}
				if d := time.Since(start); d != tt.wait {
					t.Errorf("timed out after %v, want %v", d, tt.wait)
				}
				synctest.Wait()
				if !errors.Is(fe.cause(0), hitl.ErrTimedOut) {
					t.Errorf("front end saw %v, want ErrTimedOut", fe.cause(0))
				}
			})
		})
	}
}

func TestNoLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := hitl.New(nil, &hitl.Options{ConfirmLimit: -1})
		defer b.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 24*time.Hour)
		defer cancel()
		start := time.Now()
		_, err := b.Ask(ctx, confirmReq("l", "x"))
		if d := time.Since(start); d != 24*time.Hour {
			t.Errorf("waited %v, want until the call's deadline", d)
		}
		var te *tool.TimeoutError
		if !errors.As(err, &te) {
			t.Errorf("err = %v, want the call's *tool.TimeoutError", err)
		}
	})
}

func TestCancelledCallWithdrawsItsRequest(t *testing.T) {
	fe := &recorder{shown: make(chan *tool.Request, 1), gone: make(chan error, 1)}
	b, c := newCaptured(t, fe, nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	var resp tool.Response
	go func() {
		var err error
		resp, err = b.Ask(ctx, &tool.Request{Kind: tool.KindText, Tool: "tool_t"})
		done <- err
	}()
	<-fe.shown
	if len(b.Pending()) != 1 {
		t.Fatal("the request should be pending")
	}
	cancel(&tool.CancelledError{Tool: "tool_t", Reason: "stop"})
	err := <-done
	var ce *tool.CancelledError
	if !errors.As(err, &ce) || resp.Action != tool.Cancel {
		t.Fatalf("Ask = %+v, %v; want a Cancel and the call's *tool.CancelledError", resp, err)
	}
	if len(b.Pending()) != 0 {
		t.Error("a withdrawn request is still pending")
	}
	if cause := <-fe.gone; !errors.Is(cause, hitl.ErrWithdrawn) {
		t.Errorf("front end saw %v, want ErrWithdrawn", cause)
	}
	if got, want := types(c.events(t, b)), []hitl.EventType{hitl.EventOpened, hitl.EventWithdrawn}; !cmp.Equal(got, want) {
		t.Errorf("events mismatch (-want +got):\n%s", cmp.Diff(want, got))
	}
}

func TestAskWithDoneContext(t *testing.T) {
	fe := &recorder{}
	b := hitl.New(fe, nil)
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp, err := b.Ask(ctx, confirmReq("l", "x"))
	if err == nil || resp.Action != tool.Cancel || fe.count() != 0 {
		t.Errorf("Ask = %+v, %v; asked %d times; want a cancel without asking", resp, err, fe.count())
	}
}

// Many calls ask at once; subscribers and front end race to answer. Every
// request gets exactly one answer, and it is the one the broker reports.
func TestConcurrentRequestsAnsweredExactlyOnce(t *testing.T) {
	const n = 64
	fe := &recorder{answer: func(r *tool.Request) tool.Response { return r.Submitted("from-front-end") }}
	b := hitl.New(nil, nil) // a pure event queue: answers come from subscribers
	defer b.Close()
	sub := b.Subscribe(4 * n)
	var wins atomic.Int64
	var answerers sync.WaitGroup
	for range 3 {
		answerers.Go(func() {
			for ev := range sub.Events() {
				if ev.Type != hitl.EventOpened {
					continue
				}
				if err := b.Answer(ev.Request.ID, tool.Response{Action: tool.Submit, Value: "from-answer"}); err == nil {
					wins.Add(1)
				} else if !errors.Is(err, hitl.ErrNotPending) {
					t.Errorf("Answer: %v", err)
				}
			}
		})
	}
	var calls sync.WaitGroup
	var fromFE atomic.Int64
	for i := range n {
		calls.Go(func() {
			ctx := context.Background()
			if i%2 == 0 {
				ctx = hitl.WithFrontEnd(ctx, fe) // half also race a front end
			}
			resp, err := b.Ask(ctx, &tool.Request{Kind: tool.KindText, Tool: fmt.Sprint("t", i)})
			if err != nil || resp.Action != tool.Submit {
				t.Errorf("call %d: %+v, %v", i, resp, err)
			}
			if resp.Value == "from-front-end" {
				fromFE.Add(1)
			}
		})
	}
	calls.Wait()
	b.Close() // ends the subscription
	answerers.Wait()
	if got := wins.Load() + fromFE.Load(); got != n {
		t.Errorf("%d answers accepted (%d by Answer, %d by the front end), want exactly %d", got, wins.Load(), fromFE.Load(), n)
	}
	if sub.Dropped() != 0 {
		t.Errorf("%d events dropped", sub.Dropped())
	}
}

func TestAnswerChecksTheResponse(t *testing.T) {
	b := hitl.New(nil, nil)
	defer b.Close()
	sub := b.Subscribe(0)
	defer sub.Close()
	result := make(chan tool.Response, 1)
	go func() {
		result <- b.Respond(context.Background(), &tool.Request{ID: "q1", Kind: tool.KindSelect, Options: []string{"eu", "us"}})
	}()
	<-sub.Events()
	var inv *tool.InvalidInteractionError
	if err := b.Answer("q1", tool.Response{Action: tool.Submit, Value: "mars"}); !errors.As(err, &inv) {
		t.Fatalf("Answer(not an option) = %v, want *tool.InvalidInteractionError", err)
	}
	if err := b.Answer("q1", tool.Response{Action: "shrug"}); !errors.As(err, &inv) {
		t.Fatalf("Answer(unknown action) = %v", err)
	}
	if err := b.Answer("nope", tool.Response{Action: tool.Decline}); !errors.Is(err, hitl.ErrNotPending) {
		t.Fatalf("Answer(unknown id) = %v", err)
	}
	if len(b.Pending()) != 1 {
		t.Fatal("a bad answer must leave the request pending")
	}
	if err := b.Answer("q1", tool.Response{ID: "ignored", Action: tool.Submit, Value: "us"}); err != nil {
		t.Fatal(err)
	}
	if r := <-result; r.ID != "q1" || r.Value != "us" {
		t.Errorf("got %+v", r)
	}
}

func TestConfirmSubmittedAsRejectIsADecline(t *testing.T) {
	fe := hitl.FrontEndFunc(func(ctx context.Context, r *tool.Request) (tool.Response, error) {
		return tool.Response{Action: tool.Submit, Value: "reject"}, nil
	})
	b := hitl.New(fe, nil)
	defer b.Close()
	if r := b.Respond(context.Background(), confirmReq("l", "x")); r.Action != tool.Decline || r.Reason == "" {
		t.Errorf("got %+v, want a decline with a reason", r)
	}
}

func TestFrontEndFailureNeverApproves(t *testing.T) {
	tests := []struct {
		name string
		fe   hitl.FrontEndFunc
	}{
		{"error", func(ctx context.Context, r *tool.Request) (tool.Response, error) {
			return tool.Response{}, errors.New("terminal gone")
		}},
		{"wrong shape", func(ctx context.Context, r *tool.Request) (tool.Response, error) {
			return tool.Response{Action: tool.Submit, Value: 42}, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, c := newCaptured(t, tt.fe, nil)
			r := b.Respond(context.Background(), confirmReq("l", "x"))
			if r.Action != tool.Decline || !strings.HasPrefix(r.Reason, "Not approved") {
				t.Errorf("got %+v, want a rejection", r)
			}
			evs := c.events(t, b)
			if got := types(evs); len(got) != 2 || got[1] != hitl.EventFailed {
				t.Errorf("events %v, want opened, failed", got)
			}
		})
	}
}

// A call's own front end (an MCP client session) answers its questions,
// and shares the broker's always memory with every other call.
func TestWithFrontEndSharesAlwaysMemory(t *testing.T) {
	def := &recorder{answer: func(r *tool.Request) tool.Response { return r.Declined("default front end") }}
	session := &recorder{answer: func(r *tool.Request) tool.Response { return r.Submitted(tool.Always) }}
	b := hitl.New(def, nil)
	defer b.Close()
	ctx := hitl.WithFrontEnd(context.Background(), session)
	if r := b.Respond(ctx, confirmReq("l", "x")); r.Value != tool.Always {
		t.Fatalf("got %+v", r)
	}
	if r := b.Respond(context.Background(), confirmReq("l", "x")); r.Value != tool.Always {
		t.Fatalf("other call: %+v, want the remembered always", r)
	}
	if r := b.Respond(context.Background(), confirmReq("l", "y")); r.Reason != "default front end" {
		t.Fatalf("other label: %+v, want the default front end", r)
	}
	if def.count() != 1 || session.count() != 1 {
		t.Errorf("asked default %d and session %d times, want 1 and 1", def.count(), session.count())
	}
	if hitl.FrontEndFrom(context.Background()) != nil {
		t.Error("FrontEndFrom of a bare context should be nil")
	}
}

func TestCloseWithdrawsEverything(t *testing.T) {
	b := hitl.New(nil, nil)
	sub := b.Subscribe(0)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := b.Ask(context.Background(), confirmReq("l", "x"))
			errs <- err
		}()
	}
	<-sub.Events()
	<-sub.Events()
	b.Close()
	for range 2 {
		if err := <-errs; !errors.Is(err, tool.ErrClosed) {
			t.Errorf("Ask after Close: %v, want ErrClosed", err)
		}
	}
	var got []hitl.EventType
	for ev := range sub.Events() {
		got = append(got, ev.Type)
	}
	if want := []hitl.EventType{hitl.EventWithdrawn, hitl.EventWithdrawn}; !cmp.Equal(got, want) {
		t.Errorf("events mismatch (-want +got):\n%s", cmp.Diff(want, got))
	}
	if _, err := b.Ask(context.Background(), confirmReq("l", "x")); !errors.Is(err, tool.ErrClosed) {
		t.Errorf("Ask on a closed broker: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A subscriber that joins late is told about what is already pending.
func TestSubscribeReplaysPending(t *testing.T) {
	b := hitl.New(nil, nil)
	defer b.Close()
	first := b.Subscribe(0)
	defer first.Close()
	go b.Respond(context.Background(), &tool.Request{ID: "a", Kind: tool.KindText, Prompt: "name?"})
	opened := <-first.Events()
	late := b.Subscribe(0)
	defer late.Close()
	ev := <-late.Events()
	if !ev.Replayed || ev.Type != hitl.EventOpened || ev.Request.ID != "a" || ev.Seq != opened.Seq {
		t.Errorf("replayed %+v, want the opened event of a (seq %d)", ev, opened.Seq)
	}
	if err := b.Answer("a", tool.Response{Action: tool.Submit, Value: "Ada"}); err != nil {
		t.Fatal(err)
	}
	ev = <-late.Events()
	if ev.Type != hitl.EventAnswered || ev.By != hitl.ByAnswer || ev.Response.Value != "Ada" || ev.Seq <= opened.Seq {
		t.Errorf("got %+v", ev)
	}
}

func TestSlowSubscriberDoesNotBlock(t *testing.T) {
	b := hitl.New(hitl.Unattended{}, nil)
	defer b.Close()
	sub := b.Subscribe(0) // 16 events, never read
	for range 40 {
		b.Respond(context.Background(), confirmReq("l", "x"))
	}
	// Each request is opened and answered: 80 events for 16 places.
	if sub.Dropped() != 80-16 {
		t.Errorf("dropped %d, want %d", sub.Dropped(), 80-16)
	}
}

// The seeds' worked example, driven through tool.Call by the broker, with
// a scripted person: every branch the operator can take.
func TestPrepareDeploymentThroughTheBroker(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	tests := []struct {
		name    string
		answers map[tool.Kind]tool.Response
		success bool
		want    string
	}{
		{"all answered", map[tool.Kind]tool.Response{
			tool.KindConfirm: {Action: tool.Submit, Value: tool.Allow},
			tool.KindSelect:  {Action: tool.Submit, Value: "rolling"},
			tool.KindSecret:  {Action: tool.Submit, Value: key},
			tool.KindText:    {Action: tool.Submit, Value: "v1.2"},
		}, true, "Deployment prepared (strategy: rolling, tag: v1.2, key: ****ef)."},
		{"refused", map[tool.Kind]tool.Response{
			tool.KindConfirm: {Action: tool.Decline, Reason: "not on a Friday"},
		}, false, "Operator refused production access: not on a Friday"},
		{"strategy cancelled", map[tool.Kind]tool.Response{
			tool.KindConfirm: {Action: tool.Submit, Value: tool.Always},
			tool.KindSelect:  {Action: tool.Decline},
		}, false, "Cancelled by user (strategy selection)."},
		{"key cancelled", map[tool.Kind]tool.Response{
			tool.KindConfirm: {Action: tool.Submit, Value: tool.Allow},
			tool.KindSelect:  {Action: tool.Submit, Value: "canary"},
			tool.KindSecret:  {Action: tool.Decline},
		}, false, "Cancelled by user (registry API key is required)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := hitl.FrontEndFunc(func(ctx context.Context, r *tool.Request) (tool.Response, error) {
				return tt.answers[r.Kind], nil
			})
			b, c := newCaptured(t, fe, nil)
			res, err := tool.Call(context.Background(), prepareDeployment(t), "tool_prepare_deployment", nil, &tool.CallOptions{Respond: b.Respond})
			if err != nil {
				t.Fatal(err)
			}
			if res.Success != tt.success || (res.Success && string(res.Output) != fmt.Sprintf("%q", tt.want)) || (!res.Success && res.Error != tt.want) {
				t.Errorf("result %s %s, want %v %q", res.Output, res.Error, tt.success, tt.want)
			}
			data, _ := json.Marshal(res)
			if all := c.all(b) + string(data); strings.Contains(all, key) {
				t.Errorf("the secret leaked into the logs, events or result:\n%s", all)
			}
		})
	}
}

// TestHostRequestNeverReachesAPerson: a request of the host's own
// (tool.KindHost) that reaches a broker is declined at once, under every
// policy, and its front end never sees it.
func TestHostRequestNeverReachesAPerson(t *testing.T) {
	for _, approve := range []hitl.Approval{hitl.ApproveAsk, hitl.ApproveAllow} {
		var asked atomic.Bool
		fe := hitl.FrontEndFunc(func(_ context.Context, r *tool.Request) (tool.Response, error) {
			asked.Store(true)
			return r.Submitted("a person's answer"), nil
		})
		b := hitl.New(fe, &hitl.Options{Policy: hitl.Policy{Approve: approve}})
		resp, err := b.Ask(context.Background(), &tool.Request{Kind: tool.KindHost, Tool: "t", Host: "the model's request"})
		if err != nil || resp.Action != tool.Decline || asked.Load() {
			t.Errorf("policy %q: %+v, %v, front end asked: %v; want a decline, nobody asked", approve, resp, err, asked.Load())
		}
		b.Close()
	}
}
