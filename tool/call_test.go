package tool

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lcptools/lcp/autonomy"
)

// Regression: Respond must not hang when the call ended (its Invoke
// context was cancelled) while a request was pending.
func TestRespondAfterInvokeContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := NewHandler(&askCity, askCityFn, nil)
	step, err := h.Invoke(ctx, Invocation{})
	if err != nil || step.Request == nil {
		t.Fatalf("Invoke = %+v, %v", step, err)
	}
	cancel()
	done := make(chan error, 1)
	go func() {
		_, err := h.Respond(context.Background(), step.Request.Submitted("Paris"))
		done <- err
	}()
	select {
	case err := <-done:
		// The answer may reach the tool before it sees its context end
		// (its select has both ready): then the call completes, which is
		// also not a hang. Any error must be the cancellation.
		var ce *CancelledError
		if err != nil && !errors.As(err, &ce) && !errors.Is(err, ErrClosed) {
			t.Errorf("Respond = %v, want the call's cancellation or its result", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Respond hangs after the call ended")
	}
}

// Regression: an answer of the wrong shape does not leave the tool
// blocked: Call declines the request with a reason, and the tool goes on.
func TestCallDeclinesAnInvalidAnswer(t *testing.T) {
	sel := Info{Name: "pick", Interactions: Capabilities{Select: true}}
	var got error
	ts := newFuncs().add(sel, func(ctx context.Context, _ *CallRequest) (*Result, error) {
		_, got = AskSelect(ctx, "Colour", "Pick one", []string{"red", "blue"}, "")
		return textResult("done"), nil
	})
	res, err := Call(context.Background(), ts, "pick", nil, &CallOptions{
		Respond: func(_ context.Context, r *Request) Response { return r.Submitted("green") },
	})
	if err != nil || res.Text() != "done" {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	var d *InteractionDeclinedError
	if !errors.As(got, &d) || !strings.Contains(d.Reason, "not one of the options") {
		t.Errorf("the tool got %v, want a decline that says why", got)
	}
}

// When Drive gives up with an error, the call is over: its goroutine ends.
func TestDriveCancelsTheCallOnError(t *testing.T) {
	ended := make(chan struct{})
	info := Info{Name: "slow", Interactions: Capabilities{Text: true}}
	h := NewHandler(&info, func(ctx context.Context, _ *CallRequest) (*Result, error) {
		defer close(ended)
		_, err := AskText(ctx, "t", "p", false)
		return nil, err
	}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Drive(ctx, h, nil, &CallOptions{Respond: func(ctx context.Context, r *Request) Response {
		cancel()
		<-ctx.Done()
		return r.Submitted("late")
	}})
	if err == nil {
		t.Fatal("no error from a cancelled call")
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the tool is still blocked")
	}
}

// A call resolves its state once: the backend's defaults, the library's
// configuration and autonomy level, made-absolute workspaces.
func TestCallRequestResolution(t *testing.T) {
	info := Info{Name: "probe", Library: Library{ID: "lib"}}
	var got CallRequest
	fn := func(ctx context.Context, c *CallRequest) (*Result, error) {
		if CallFromContext(ctx) != c {
			t.Error("the context does not carry the call")
		}
		got = *c
		return textResult("ok"), nil
	}
	cfg := map[string]any{"autonomy_level": "strict"}
	h := NewHandler(&info, fn, &HandlerOptions{Workspace: "/default", Config: cfg})
	if _, err := h.Invoke(context.Background(), Invocation{CallID: "c1", Context: map[string]any{"u": 1}}); err != nil {
		t.Fatal(err)
	}
	if got.Tool != "probe" || got.Info != &info || got.CallID != "c1" || got.Workspace != "/default" || got.Autonomy != autonomy.Strict ||
		got.Config["autonomy_level"] != "strict" || got.Context["u"] != 1 || got.Depth != 0 {
		t.Errorf("call %+v", got)
	}
	h = NewHandler(&info, fn, nil)
	if _, err := h.Invoke(context.Background(), Invocation{Workspace: "rel"}); err != nil {
		t.Fatal(err)
	}
	if got.Config == nil || got.Autonomy != autonomy.Safe || !strings.HasPrefix(got.Workspace, "/") || !strings.HasSuffix(got.Workspace, "/rel") || got.CallID == "" {
		t.Errorf("defaults %+v", got)
	}
}

type conv string

func (c conv) JSON() json.RawMessage { return json.RawMessage(c) }

// A call made inside another (a tool calling the host's execute_tool)
// asks the parent's caller — the same request id, no rewriting — and
// inherits its depth, conversation and subscribers.
func TestChildCallAsksTheParentsCaller(t *testing.T) {
	child := Info{Name: "child", Interactions: Capabilities{Confirm: true}}
	parent := Info{Name: "parent", Library: Library{ID: "plib"}, Interactions: AllInteractions}
	var childCall CallRequest
	ts := newFuncs().add(child, func(ctx context.Context, c *CallRequest) (*Result, error) {
		childCall = *c
		c.Emit(Event{Kind: EventLog, Level: "info", Text: "from the child"})
		d, _, err := Confirm(ctx, "rm -rf x", "delete", nil)
		if err != nil {
			return nil, err
		}
		return textResult(string(d)), nil
	}).add(parent, nil)
	ts.fns["parent"] = func(ctx context.Context, c *CallRequest) (*Result, error) {
		return Call(ctx, ts, "child", nil, &CallOptions{Parent: c})
	}
	var (
		mu     sync.Mutex
		asked  []*Request
		events []Event
	)
	res, err := Call(context.Background(), ts, "parent", nil, &CallOptions{
		Conversation: conv(`[]`),
		Respond: func(_ context.Context, r *Request) Response {
			mu.Lock()
			asked = append(asked, r)
			mu.Unlock()
			return r.Submitted(Always)
		},
		OnEvent: func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() },
	})
	if err != nil || res.Text() != "always" {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	if len(asked) != 1 || asked[0].Tool != "parent" || asked[0].Library != "plib" || asked[0].Label != "delete" {
		t.Errorf("asked %+v", asked)
	}
	if childCall.Depth != 1 || childCall.Parent == nil || childCall.Conversation == nil {
		t.Errorf("child call %+v", childCall)
	}
	if len(events) != 1 || events[0].Tool != "child" || events[0].Text != "from the child" {
		t.Errorf("events %+v", events)
	}
}

func TestEventsAndHelpers(t *testing.T) {
	info := Info{Name: "worker", Library: Library{ID: "w"}}
	var got []Event
	ts := newFuncs().add(info, func(ctx context.Context, c *CallRequest) (*Result, error) {
		if !c.Listening() {
			t.Error("the call has a subscriber")
		}
		ReportProgress(ctx, 1, 2, "half")
		Log(ctx, "warning", "careful")
		return textResult("ok"), nil
	})
	if _, err := Call(context.Background(), ts, "worker", nil, &CallOptions{CallID: "c9", OnEvent: func(e Event) { got = append(got, e) }}); err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Kind: EventProgress, Tool: "worker", CallID: "c9", Library: "w", Progress: 1, Total: 2, Text: "half"},
		{Kind: EventLog, Tool: "worker", CallID: "c9", Library: "w", Level: "warning", Text: "careful"},
	}
	if len(got) != 2 || got[0].Kind != want[0].Kind || got[0].Progress != 1 || got[0].Total != 2 || got[0].Text != "half" ||
		got[1].Level != "warning" || got[1].CallID != "c9" || got[1].Library != "w" {
		t.Errorf("events %+v", got)
	}
	// Outside a call, the helpers do nothing.
	ReportProgress(context.Background(), 1, 0, "")
	Log(context.Background(), "info", "")
	if CallFromContext(context.Background()).Listening() {
		t.Error("no call listens")
	}
}

// goroutineID returns the id of the calling goroutine (tests only).
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return strings.Fields(string(buf))[1]
}

// A handler whose function returns on cancel runs the calls Drive makes in
// Drive's goroutine, and answers requests made from other goroutines (a
// Python worker's) as Drive's loop would: the hooks see them, a wrong
// answer is declined with a reason, and one request is answered at a time.
func TestDriveRunsReturnsOnCancelInline(t *testing.T) {
	info := Info{Name: "pick", Library: Library{ID: "lib"}, Interactions: AllInteractions}
	drive := goroutineID()
	var ranIn string
	var got []string
	var gotErr error
	fn := func(ctx context.Context, c *CallRequest) (*Result, error) {
		ranIn = goroutineID()
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, opt := range []string{"red", "green"} {
			wg.Go(func() {
				s, err := AskSelect(ctx, "Colour", "Pick "+opt, []string{"red", "blue"}, "")
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					gotErr = err
					return
				}
				got = append(got, s)
			})
		}
		wg.Wait()
		return textResult("done"), nil
	}
	h := NewHandler(&info, fn, &HandlerOptions{ReturnsOnCancel: true})
	var inAnswer atomic.Int32
	var requests, responses atomic.Int32
	res, err := Drive(context.Background(), h, nil, &CallOptions{
		OnRequest:  func(r *Request) { requests.Add(1) },
		OnResponse: func(r *Request, resp Response) { responses.Add(1) },
		Respond: func(_ context.Context, r *Request) Response {
			if inAnswer.Add(1) != 1 {
				t.Error("two requests answered at once")
			}
			defer inAnswer.Add(-1)
			if r.Tool != "pick" || r.Library != "lib" || r.ID == "" {
				t.Errorf("request %+v", r)
			}
			time.Sleep(10 * time.Millisecond)
			return r.Submitted(strings.TrimPrefix(r.Prompt, "Pick "))
		},
	})
	if err != nil || res.Text() != "done" {
		t.Fatalf("Drive = %+v, %v", res, err)
	}
	if ranIn != drive {
		t.Errorf("the call ran in goroutine %s, Drive's is %s", ranIn, drive)
	}
	var d *InteractionDeclinedError
	if len(got) != 1 || got[0] != "red" || !errors.As(gotErr, &d) || !strings.Contains(d.Reason, "not one of the options") {
		t.Errorf("answers %v, error %v: want red and a decline that says why", got, gotErr)
	}
	if requests.Load() != 2 || responses.Load() != 2 {
		t.Errorf("hooks saw %d requests, %d responses", requests.Load(), responses.Load())
	}

	// Stepped by hand, the same handler runs in a goroutine of its own.
	h = NewHandler(&info, askCityFn, &HandlerOptions{ReturnsOnCancel: true})
	step, err := h.Invoke(context.Background(), Invocation{})
	if err != nil || step.Request == nil {
		t.Fatalf("Invoke = %+v, %v", step, err)
	}
	if step, err = h.Respond(context.Background(), step.Request.Submitted("Oslo")); err != nil || step.Result.Text() != "weather in Oslo" {
		t.Fatalf("Respond = %+v, %v", step, err)
	}
}

// An inline call ends as a call in a goroutine does: cancelled while it
// runs or while its request is answered, and its children ask its caller.
func TestDriveInlineCancellation(t *testing.T) {
	info := Info{Name: "wait", Interactions: AllInteractions}
	started := make(chan struct{})
	h := NewHandler(&info, func(ctx context.Context, c *CallRequest) (*Result, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}, &HandlerOptions{ReturnsOnCancel: true})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	var ce *CancelledError
	if _, err := Drive(ctx, h, nil, nil); !errors.As(err, &ce) {
		t.Fatalf("cancelled while running: %v", err)
	}

	var askErr error
	h = NewHandler(&info, func(ctx context.Context, c *CallRequest) (*Result, error) {
		_, askErr = AskText(ctx, "t", "p", false)
		return nil, askErr
	}, &HandlerOptions{ReturnsOnCancel: true})
	ctx, cancel = context.WithCancel(context.Background())
	_, err := Drive(ctx, h, nil, &CallOptions{Respond: func(_ context.Context, r *Request) Response {
		cancel()
		return r.Submitted("late")
	}})
	if !errors.As(err, &ce) || !errors.As(askErr, &ce) {
		t.Fatalf("cancelled while answering: Drive %v, the tool got %v", err, askErr)
	}

	child := Info{Name: "child", Interactions: Capabilities{Confirm: true}}
	parent := Info{Name: "parent", Interactions: AllInteractions}
	inline := &HandlerOptions{ReturnsOnCancel: true}
	ts := newFuncs().add(child, nil).add(parent, nil)
	ts.fns = map[string]RunFunc{
		"child": func(ctx context.Context, c *CallRequest) (*Result, error) {
			d, _, err := Confirm(ctx, "rm x", "delete", nil)
			return textResult(string(d)), err
		},
		"parent": func(ctx context.Context, c *CallRequest) (*Result, error) {
			return Call(ctx, inlineSet{ts, inline}, "child", nil, &CallOptions{Parent: c})
		},
	}
	res, err := Call(context.Background(), inlineSet{ts, inline}, "parent", nil, &CallOptions{
		Respond: func(_ context.Context, r *Request) Response {
			if r.Tool != "parent" {
				t.Errorf("the child's request names %q", r.Tool)
			}
			return r.Submitted(Allow)
		},
	})
	if err != nil || res.Text() != "allow" {
		t.Fatalf("nested inline call = %+v, %v", res, err)
	}
}

// inlineSet hands out handlers of a funcs toolset with options.
type inlineSet struct {
	*funcs
	opts *HandlerOptions
}

func (s inlineSet) Handler(_ context.Context, name string) (Handler, error) {
	for i := range s.infos {
		if s.infos[i].Name == name {
			return NewHandler(&s.infos[i], s.fns[name], s.opts), nil
		}
	}
	return nil, &UnknownToolError{Name: name}
}
