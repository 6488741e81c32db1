package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A Run is stepped by its caller: each request comes back as a Step,
// each answer goes in with Answer, and the call gets what Drive gives it
// (hooks, a wrong answer declined with a reason, a refusal after a
// declined confirmation).
func TestRunSteps(t *testing.T) {
	pick := Info{Name: "pick", Interactions: Capabilities{Select: true}}
	pickFn := func(ctx context.Context, _ *CallRequest) (*Result, error) {
		s, err := AskSelect(ctx, "Colour", "Pick one", []string{"red", "blue"}, "")
		if err != nil {
			return textResult("no colour: " + err.Error()), nil
		}
		return textResult(s), nil
	}
	del := Info{Name: "del", Interactions: Capabilities{Confirm: true}}
	delFn := func(ctx context.Context, _ *CallRequest) (*Result, error) {
		d, reason, err := Confirm(ctx, "rm -rf build", "rm", nil)
		if err != nil {
			return nil, err
		}
		if d == Reject {
			return &Result{Success: false, StatusCode: 500, Error: "not deleted: " + reason}, nil
		}
		return textResult("deleted"), nil
	}
	// plain declares no interaction and asks its host (a model, say).
	plain := Info{Name: "plain"}
	hostAnswer := func(r *Request) Response {
		if r.Kind != KindHost || r.Host != "the prompt" {
			return r.Declined(fmt.Sprintf("not the host's request: %+v", r))
		}
		return r.Submitted("the model's text")
	}
	for _, tt := range []struct {
		name    string
		info    *Info
		fn      RunFunc
		hopts   *HandlerOptions
		answers []func(r *Request) Response
		want    string // the result's text, or its error
		refused string // Result.Rejection's reason; "" for none
	}{
		// The host's own request pauses a call as a question does, also
		// a call whose tool declares no interaction.
		{"the host's request of a tool that declares no interaction", &plain, hostAskFn, nil,
			[]func(r *Request) Response{hostAnswer}, "the model's text", ""},
		{"the host's request of a tool that asks", &askCity, hostAskFn, nil,
			[]func(r *Request) Response{hostAnswer}, "the model's text", ""},
		{"answered", &askCity, askCityFn, nil,
			[]func(r *Request) Response{func(r *Request) Response { return r.Submitted("Paris") }}, "weather in Paris", ""},
		// A call Drive would run inline (a Python call) pauses at its
		// question when it is stepped.
		{"answered later, a call that returns on cancel", &askCity, askCityFn, &HandlerOptions{ReturnsOnCancel: true},
			[]func(r *Request) Response{func(r *Request) Response { return r.Submitted("Oslo") }}, "weather in Oslo", ""},
		{"a wrong answer is declined with a reason", &pick, pickFn, nil,
			[]func(r *Request) Response{func(r *Request) Response { return r.Submitted("green") }}, "not one of the options", ""},
		{"the option", &pick, pickFn, nil,
			[]func(r *Request) Response{func(r *Request) Response { return r.Submitted("blue") }}, "blue", ""},
		{"a declined confirmation is a refusal", &del, delFn, nil,
			[]func(r *Request) Response{func(r *Request) Response { return r.Declined("not now") }}, "not deleted: not now", "not now"},
		{"an approved one is not", &del, delFn, nil,
			[]func(r *Request) Response{func(r *Request) Response { return r.Submitted(Allow) }}, "deleted", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var requests, responses int
			run, step, err := Start(ctx, NewHandler(tt.info, tt.fn, tt.hopts), nil, &CallOptions{
				CallID:     "c1",
				OnRequest:  func(r *Request) { requests++ },
				OnResponse: func(r *Request, resp Response) { responses++ },
			})
			for _, answer := range tt.answers {
				if err != nil || step.Request == nil {
					t.Fatalf("step = %+v, %v; want a request", step, err)
				}
				if run.Pending() != step.Request || step.Request.CallID != "c1" {
					t.Fatalf("Pending = %+v, want the step's request of call c1", run.Pending())
				}
				step, err = run.Answer(ctx, answer(step.Request))
			}
			if err != nil || step.Result == nil {
				t.Fatalf("last step = %+v, %v; want the result", step, err)
			}
			if got := step.Result.Text() + step.Result.Error; !strings.Contains(got, tt.want) {
				t.Errorf("result %q, want %q", got, tt.want)
			}
			switch rej := step.Result.Rejection; {
			case tt.refused == "" && rej != nil:
				t.Errorf("Rejection = %+v, want none", rej)
			case tt.refused != "" && (rej == nil || rej.Reason != tt.refused):
				t.Errorf("Rejection = %+v, want %q", rej, tt.refused)
			}
			if requests != len(tt.answers) || responses != len(tt.answers) {
				t.Errorf("hooks saw %d requests and %d responses, want %d", requests, responses, len(tt.answers))
			}
			if run.Pending() != nil {
				t.Errorf("Pending = %+v after the result", run.Pending())
			}
			var closed *ClosedError
			if _, err := run.Answer(ctx, Response{Action: Submit}); !errors.As(err, &closed) {
				t.Errorf("Answer after the result = %v, want a ClosedError", err)
			}
		})
	}
}

// A Run cancelled while it waits for an answer is over: the tool gets
// the cancellation, and an answer that comes later is refused.
func TestRunCancelWhileWaiting(t *testing.T) {
	ctx := context.Background()
	toolErr := make(chan error, 1)
	fn := func(ctx context.Context, c *CallRequest) (*Result, error) {
		_, err := AskText(ctx, "City", "Which city?", false)
		toolErr <- err
		return nil, err
	}
	run, step, err := Start(ctx, NewHandler(&askCity, fn, nil), nil, nil)
	if err != nil || step.Request == nil {
		t.Fatalf("Start = %+v, %v", step, err)
	}
	if err := run.Cancel("the client went away"); err != nil {
		t.Fatal(err)
	}
	var ce *CancelledError
	if err := <-toolErr; !errors.As(err, &ce) || ce.Reason != "the client went away" {
		t.Errorf("the tool got %v, want the cancellation", err)
	}
	var closed *ClosedError
	if _, err := run.Answer(ctx, step.Request.Submitted("Paris")); !errors.As(err, &closed) {
		t.Errorf("Answer after Cancel = %v, want a ClosedError", err)
	}
	if err := run.Cancel("again"); !errors.As(err, &closed) {
		t.Errorf("a second Cancel = %v, want a ClosedError", err)
	}
}

// ExampleStart steps a call by hand, as a front end that gets its answer
// later does: the request comes back, the answer goes in with Answer.
func ExampleStart() {
	info := Info{Name: "weather", Interactions: Capabilities{Text: true}}
	h := NewHandler(&info, func(ctx context.Context, _ *CallRequest) (*Result, error) {
		city, err := AskText(ctx, "City", "Which city?", false)
		if err != nil {
			return nil, err
		}
		return NormalizeValue("sunny in " + city)
	}, nil)
	ctx := context.Background()
	run, step, err := Start(ctx, h, nil, nil)
	for err == nil && step.Request != nil {
		fmt.Println("asked:", step.Request.Prompt)
		step, err = run.Answer(ctx, step.Request.Submitted("Lyon"))
	}
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(step.Result.Text())
	// Output:
	// asked: Which city?
	// sunny in Lyon
}

// hostAskFn puts a request of its host's own ("the prompt") and returns
// the host's answer, or why there was none.
func hostAskFn(ctx context.Context, _ *CallRequest) (*Result, error) {
	resp, err := Ask(ctx, &Request{Kind: KindHost, Host: "the prompt"})
	if err != nil {
		return nil, err
	}
	if resp.Action != Submit {
		return textResult("no answer: " + resp.Reason), nil
	}
	return textResult(fmt.Sprint(resp.Value)), nil
}

// Drive answers the host's requests in place, also for a tool that
// declares no interaction (run inline): with Respond, or Nobody's
// decline when it has no callbacks.
func TestDriveHostRequests(t *testing.T) {
	plain := Info{Name: "plain"}
	respond := func(_ context.Context, r *Request) Response {
		if r.Kind != KindHost {
			return r.Declined("not the host's request")
		}
		return r.Submitted("from the host: " + fmt.Sprint(r.Host))
	}
	for _, tt := range []struct {
		name string
		info *Info
		opts *CallOptions
		want string
	}{
		{"inline", &plain, &CallOptions{Respond: respond}, "from the host: the prompt"},
		{"in a goroutine", &askCity, &CallOptions{Respond: respond}, "from the host: the prompt"},
		{"no callbacks", &plain, nil, "no answer: Not answered: the call's host has no client"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Drive(context.Background(), NewHandler(tt.info, hostAskFn, nil), nil, tt.opts)
			if err != nil || !strings.Contains(res.Text(), tt.want) {
				t.Fatalf("Drive = %+v, %v; want %q", res, err, tt.want)
			}
		})
	}
}
