package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// funcs is a toolset of RunFuncs for tests.
type funcs struct {
	infos []Info
	fns   map[string]RunFunc
}

func newFuncs() *funcs { return &funcs{fns: map[string]RunFunc{}} }

func (f *funcs) add(info Info, fn RunFunc) *funcs {
	f.infos = append(f.infos, info)
	f.fns[info.Name] = fn
	return f
}

func (f *funcs) Tools(context.Context) ([]Info, error) { return f.infos, nil }

func (f *funcs) Handler(_ context.Context, name string) (Handler, error) {
	for i := range f.infos {
		if f.infos[i].Name == name {
			return NewHandler(&f.infos[i], f.fns[name], nil), nil
		}
	}
	return nil, &UnknownToolError{Name: name}
}

func (f *funcs) Close() error { return nil }

func textResult(s string) *Result {
	r, _ := NormalizeValue(s)
	return r
}

var askCity = Info{Name: "ask", Interactions: Capabilities{Text: true, Confirm: true}}

func askCityFn(ctx context.Context, c *CallRequest) (*Result, error) {
	city, err := AskText(ctx, "City", "Which city?", false)
	if err != nil {
		return nil, err
	}
	return textResult("weather in " + city), nil
}

func TestHandlerSubmit(t *testing.T) {
	ctx := context.Background()
	h := NewHandler(&askCity, askCityFn, nil)
	step, err := h.Invoke(ctx, Invocation{CallID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	req := step.Request
	if req == nil || req.Kind != KindText || req.Prompt != "Which city?" || req.Tool != "ask" || req.CallID != "c1" || req.ID == "" {
		t.Fatalf("first step = %+v, want a text request", step)
	}
	step, err = h.Respond(ctx, req.Submitted("Paris"))
	if err != nil {
		t.Fatal(err)
	}
	if step.Result == nil || step.Result.Text() != "weather in Paris" {
		t.Fatalf("second step = %+v", step)
	}
	// The handler served its call: everything else is an error.
	if _, err := h.Respond(ctx, req.Submitted("again")); !errors.Is(err, ErrClosed) {
		t.Errorf("Respond after completion: %v, want ErrClosed", err)
	}
	if _, err := h.Invoke(ctx, Invocation{}); !errors.Is(err, ErrClosed) {
		t.Errorf("second Invoke: %v, want ErrClosed", err)
	}
	if err := h.Cancel("late"); !errors.Is(err, ErrClosed) {
		t.Errorf("Cancel after completion: %v, want ErrClosed", err)
	}
}

func TestHandlerBadResponses(t *testing.T) {
	ctx := context.Background()
	sel := Info{Name: "pick", Interactions: Capabilities{Select: true}}
	h := NewHandler(&sel, func(ctx context.Context, _ *CallRequest) (*Result, error) {
		v, err := AskSelect(ctx, "Region", "Pick one", []string{"eu", "us"}, "eu")
		if err != nil {
			return nil, err
		}
		return textResult(v), nil
	}, nil)
	if _, err := h.Respond(ctx, Response{ID: "x", Action: Submit, Value: "eu"}); err == nil {
		t.Fatal("Respond before Invoke succeeded")
	}
	step, err := h.Invoke(ctx, Invocation{})
	if err != nil {
		t.Fatal(err)
	}
	req := step.Request
	if req.Default == nil || *req.Default != "eu" {
		t.Errorf("default not carried: %+v", req)
	}
	bad := []Response{
		{ID: "not-the-id", Action: Submit, Value: "eu"},
		{ID: req.ID, Action: Submit, Value: 3},
		{ID: req.ID, Action: Submit, Value: "asia"},
		{ID: req.ID, Action: "maybe"},
	}
	for _, resp := range bad {
		var inv *InvalidInteractionError
		if _, err := h.Respond(ctx, resp); !errors.As(err, &inv) {
			t.Errorf("Respond(%+v) = %v, want *InvalidInteractionError", resp, err)
		}
	}
	// The request is still pending after the bad replies.
	step, err = h.Respond(ctx, req.Submitted("us"))
	if err != nil || step.Result.Text() != "us" {
		t.Fatalf("good reply after bad ones: %+v, %v", step, err)
	}
}

func TestHandlerDeclineAndCancelReplies(t *testing.T) {
	ctx := context.Background()
	h := NewHandler(&askCity, askCityFn, nil)
	step, _ := h.Invoke(ctx, Invocation{})
	_, err := h.Respond(ctx, step.Request.Declined("not telling"))
	var dec *InteractionDeclinedError
	if !errors.As(err, &dec) || dec.Reason != "not telling" {
		t.Fatalf("declined: %v", err)
	}

	h = NewHandler(&askCity, askCityFn, nil)
	step, _ = h.Invoke(ctx, Invocation{})
	_, err = h.Respond(ctx, step.Request.Cancelled("caller stopped"))
	var can *CancelledError
	if !errors.As(err, &can) || can.Reason != "caller stopped" {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestHandlerUndeclaredInteraction(t *testing.T) {
	info := Info{Name: "sneaky", Interactions: Capabilities{Text: true}}
	h := NewHandler(&info, func(ctx context.Context, _ *CallRequest) (*Result, error) {
		_, err := AskSecret(ctx, "Key", "Your key?")
		return nil, err
	}, nil)
	_, err := h.Invoke(context.Background(), Invocation{})
	var und *UndeclaredInteractionError
	if !errors.As(err, &und) || und.Kind != KindSecret || und.Tool != "sneaky" {
		t.Fatalf("got %v, want *UndeclaredInteractionError for secret", err)
	}
	// Outside any handler, asking is undeclared too.
	if _, err := AskText(context.Background(), "", "x", false); !errors.As(err, &und) {
		t.Fatalf("Ask outside a call: %v", err)
	}
}

func TestHandlerInvalidRequest(t *testing.T) {
	info := Info{Name: "t", Interactions: AllInteractions}
	h := NewHandler(&info, func(ctx context.Context, _ *CallRequest) (*Result, error) {
		_, err := AskSelect(ctx, "", "no options", nil, "")
		return nil, err
	}, nil)
	var inv *InvalidInteractionError
	if _, err := h.Invoke(context.Background(), Invocation{}); !errors.As(err, &inv) {
		t.Fatalf("select without options: %v", err)
	}
}

func TestHandlerCancelWhileWaiting(t *testing.T) {
	ctx := context.Background()
	stopped := make(chan error, 1)
	h := NewHandler(&askCity, func(ctx context.Context, c *CallRequest) (*Result, error) {
		_, err := AskText(ctx, "", "?", false)
		stopped <- err
		return nil, err
	}, nil)
	step, err := h.Invoke(ctx, Invocation{})
	if err != nil || step.Request == nil {
		t.Fatal(step, err)
	}
	if err := h.Cancel("user pressed stop"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stopped:
		var c *CancelledError
		if !errors.As(err, &c) || !strings.Contains(c.Reason, "user pressed stop") {
			t.Fatalf("tool saw %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the tool was not told about the cancellation")
	}
	if _, err := h.Respond(ctx, step.Request.Submitted("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Respond after Cancel: %v", err)
	}
}

func TestHandlerContextCancelWhileRunning(t *testing.T) {
	info := Info{Name: "slow"}
	h := NewHandler(&info, func(ctx context.Context, _ *CallRequest) (*Result, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := h.Invoke(ctx, Invocation{})
	var to *TimeoutError
	if !errors.As(err, &to) {
		t.Fatalf("deadline: got %v, want *TimeoutError", err)
	}
	if r := ErrorResult(err); r.StatusCode != 504 {
		t.Fatalf("ErrorResult status %d", r.StatusCode)
	}
}

func TestHandlerCancelFromAnotherGoroutine(t *testing.T) {
	info := Info{Name: "slow"}
	h := NewHandler(&info, func(ctx context.Context, _ *CallRequest) (*Result, error) {
		<-ctx.Done()
		return textResult("too late"), nil
	}, nil)
	go func() {
		time.Sleep(10 * time.Millisecond)
		_ = h.Cancel("stop")
	}()
	_, err := h.Invoke(context.Background(), Invocation{})
	var c *CancelledError
	if !errors.As(err, &c) {
		t.Fatalf("got %v, want *CancelledError", err)
	}
	if ErrorResult(err).StatusCode != 499 {
		t.Fatal("cancel is not 499")
	}
}

func TestHandlerNilResult(t *testing.T) {
	info := Info{Name: "nothing"}
	h := NewHandler(&info, func(context.Context, *CallRequest) (*Result, error) { return nil, nil }, nil)
	var p *ProtocolError
	if _, err := h.Invoke(context.Background(), Invocation{}); !errors.As(err, &p) {
		t.Fatalf("got %v", err)
	}
}

func TestCallHooks(t *testing.T) {
	ts := newFuncs().add(Info{Name: "deploy", Library: Library{ID: "ops"}, Interactions: Capabilities{Confirm: true, Secret: true}},
		func(ctx context.Context, c *CallRequest) (*Result, error) {
			d, reason, err := Confirm(ctx, "rm -rf build", "clean build", []string{"rm", "-rf", "build"})
			if err != nil {
				return nil, err
			}
			if d == Reject {
				return NormalizeValue(map[string]any{"success": false, "error": "refused: " + reason})
			}
			key, err := AskSecret(ctx, "Key", "API key?")
			if err != nil {
				return nil, err
			}
			return textResult(string(d) + " with key of length " + string(rune('0'+len(key)))), nil
		})
	ctx := context.Background()

	// No hooks: nothing is approved.
	res, err := Call(ctx, ts, "deploy", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || !strings.Contains(res.Error, "Not approved: nobody can approve") || !strings.Contains(res.Error, NoPerson) {
		t.Fatalf("without hooks: %+v", res)
	}

	var seen []Response
	var mu sync.Mutex
	opts := &CallOptions{
		Confirm: func(_ context.Context, r *Request) (Decision, string) {
			if r.Library != "ops" || r.Label != "clean build" || len(r.Argv) != 3 {
				t.Errorf("confirm request %+v", r)
			}
			return Always, ""
		},
		Interact: func(_ context.Context, r *Request) (any, bool) { return "s3cr3t-value", true },
		OnResponse: func(r *Request, resp Response) {
			mu.Lock()
			seen = append(seen, resp)
			mu.Unlock()
		},
	}
	res, err = Call(ctx, ts, "deploy", json.RawMessage(`{}`), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.Text() != "always with key of length <" {
		t.Fatalf("approved call: %+v %q", res, res.Text())
	}
	for _, r := range seen {
		if s, _ := r.Value.(string); strings.Contains(s, "s3cr3t") {
			t.Fatalf("OnResponse saw the secret: %+v", r)
		}
	}

	opts.Confirm = func(context.Context, *Request) (Decision, string) { return Reject, "not on a Friday" }
	res, err = Call(ctx, ts, "deploy", nil, opts)
	if err != nil || res.Success || res.Error != "refused: not on a Friday" {
		t.Fatalf("rejected call: %+v, %v", res, err)
	}

	if _, err := Call(ctx, ts, "nope", nil, nil); err == nil || ErrorResult(err).StatusCode != 404 || ErrorResult(err).Error != "Tool 'nope' not found." {
		t.Fatalf("unknown tool: %v", err)
	}
}

func TestComposeFirstWins(t *testing.T) {
	a := newFuncs().add(Info{Name: "x", Source: "a.py"}, func(context.Context, *CallRequest) (*Result, error) { return textResult("a"), nil })
	b := newFuncs().add(Info{Name: "x", Source: "b.py"}, func(context.Context, *CallRequest) (*Result, error) { return textResult("b"), nil }).
		add(Info{Name: "y"}, func(context.Context, *CallRequest) (*Result, error) { return textResult("y"), nil })
	inv := Compose(a, b)
	ctx := context.Background()
	infos, err := inv.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Name != "x" || infos[0].Source != "a.py" || infos[1].Name != "y" {
		t.Fatalf("tools = %+v", infos)
	}
	d := inv.Diagnostics()
	if len(d) != 1 || d[0].Code != "duplicate-tool" || !strings.Contains(d[0].Message, "a.py") || d[0].File != "b.py" {
		t.Fatalf("diagnostics = %+v", d)
	}
	for name, want := range map[string]string{"x": "a", "y": "y"} {
		res, err := Call(ctx, inv, name, nil, nil)
		if err != nil || res.Text() != want {
			t.Errorf("call %s = %v, %v; want %s", name, res, err, want)
		}
	}
	if err := inv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Tools(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Tools after Close: %v", err)
	}
	if _, err := Call(ctx, inv, "x", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Call after Close: %v", err)
	}
}

func TestSpecFormats(t *testing.T) {
	info := Info{Name: "tool_x", Description: "Does <x> & y.", InputSchema: json.RawMessage(`{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"}},"required":["b"]}`)}
	tests := map[Format]string{
		FormatLCP:       `{"name":"tool_x","description":"Does <x> & y.","input_schema":{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"}},"required":["b"]}}`,
		FormatAnthropic: `{"name":"tool_x","description":"Does <x> & y.","input_schema":{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"}},"required":["b"]}}`,
		FormatOpenAI:    `{"type":"function","function":{"name":"tool_x","description":"Does <x> & y.","parameters":{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"}},"required":["b"]}}}`,
		FormatMCP:       `{"name":"tool_x","description":"Does <x> & y.","inputSchema":{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"}},"required":["b"]}}`,
	}
	buf := []byte("prefix ")
	for f, want := range tests {
		if got := string(info.Spec(f)); got != want {
			t.Errorf("%s:\n got  %s\n want %s", f, got, want)
		}
		buf = info.AppendSpec(buf[:len("prefix ")], f)
		if string(buf) != "prefix "+want {
			t.Errorf("AppendSpec %s:\n got  %s\n want prefix %s", f, buf, want)
		}
	}
	info.ParsedViaRegexFallback = true
	if got := string(info.Spec(FormatLCP)); !strings.HasSuffix(got, `,"_parsed_via_regex_fallback":true}`) {
		t.Errorf("fallback mark missing: %s", got)
	}
	if _, err := ParseFormat("yaml"); err == nil {
		t.Error("ParseFormat accepted yaml")
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{"": "****", "short": "****", "sk-abcdefghijkl": "****kl"} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormValidation(t *testing.T) {
	info := Info{Name: "f", Interactions: Capabilities{Form: true, FormValidation: true}}
	schema := json.RawMessage(`{"type":"object","required":["age"],"properties":{"age":{"type":"integer","minimum":0}}}`)
	h := NewHandler(&info, func(ctx context.Context, _ *CallRequest) (*Result, error) {
		v, err := AskForm(ctx, "Age", "How old?", schema, true)
		if err != nil {
			return nil, err
		}
		return NormalizeValue(v)
	}, nil)
	ctx := context.Background()
	step, err := h.Invoke(ctx, Invocation{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Respond(ctx, step.Request.Submitted(map[string]any{"age": -3}))
	var inv *InvalidInteractionError
	if !errors.As(err, &inv) || !strings.Contains(inv.Message, "/age") {
		t.Fatalf("invalid form: %v", err)
	}
	step, err = h.Respond(ctx, step.Request.Submitted(json.RawMessage(`{"age": 41}`)))
	if err != nil || step.Result == nil || !strings.Contains(step.Result.Text(), "41") {
		t.Fatalf("valid form: %+v %v", step, err)
	}
}

// TestWriteJSONString checks the fast path of plain strings against the
// encoder the other strings go through.
func TestWriteJSONString(t *testing.T) {
	for _, s := range []string{"", "tool_a", "Do the thing.", "a \"q\"", `back\slash`, "tab\there", "\x7f", "é", "<&>",
		"\u2028", "\xff", "line\nbreak", "~ !#$%&'()*+,-./:;<=>?@[]^_`{|}"} {
		var got bytes.Buffer
		writeJSONString(&got, s)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got.String() != strings.TrimSuffix(want.String(), "\n") {
			t.Errorf("writeJSONString(%q) = %s, want %s", s, got.String(), want.String())
		}
	}
}

// TestComposeDuplicatesNameTheFirst: each duplicate names the source of
// the tool that was kept, also for tools listed after a first duplicate.
func TestComposeDuplicatesNameTheFirst(t *testing.T) {
	run := func(context.Context, *CallRequest) (*Result, error) { return textResult(""), nil }
	a := newFuncs().add(Info{Name: "x", Source: "a.py"}, run)
	b := newFuncs().add(Info{Name: "x", Source: "b.py"}, run).add(Info{Name: "y", Source: "b.py"}, run)
	c := newFuncs().add(Info{Name: "y", Source: "c.py"}, run).add(Info{Name: "x", Source: "c.py"}, run)
	inv := Compose(a, b, c)
	if _, err := inv.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range inv.Diagnostics() {
		got = append(got, d.File+": "+d.Message)
	}
	want := []string{
		"b.py: tool x is defined again (first in a.py); the first one is kept",
		"c.py: tool y is defined again (first in b.py); the first one is kept",
		"c.py: tool x is defined again (first in a.py); the first one is kept",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostics:\n got %q\nwant %q", got, want)
	}
}
