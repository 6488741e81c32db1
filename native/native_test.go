package native_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

type addIn struct {
	A int `json:"a" jsonschema:"the first addend"`
	B int `json:"b" jsonschema:"the second addend"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func add(_ context.Context, in addIn) (addOut, error) { return addOut{Sum: in.A + in.B}, nil }

func mustTyped[In, Out any](t testing.TB, name string, fn func(context.Context, In) (Out, error)) *native.Tool {
	t.Helper()
	tl, err := native.Typed(name, "test tool "+name, fn)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func mustSet(t testing.TB, opts *native.Options, tools ...*native.Tool) *native.Toolset {
	t.Helper()
	ts, err := native.New(opts, tools...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestTypedSchemas(t *testing.T) {
	tl := mustTyped(t, "add", add)
	info := tl.Info()
	var in map[string]any
	if err := json.Unmarshal(info.InputSchema, &in); err != nil {
		t.Fatal(err)
	}
	props := in["properties"].(map[string]any)
	if props["a"].(map[string]any)["description"] != "the first addend" || props["a"].(map[string]any)["type"] != "integer" {
		t.Errorf("input schema: %s", info.InputSchema)
	}
	if len(info.OutputSchema) == 0 || !strings.Contains(string(info.OutputSchema), `"sum"`) {
		t.Errorf("output schema: %s", info.OutputSchema)
	}
}

func TestTypedCall(t *testing.T) {
	ts := mustSet(t, nil, mustTyped(t, "add", add))
	res, err := tool.Call(context.Background(), ts, "add", json.RawMessage(`{"a":2,"b":40}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || string(res.Output) != `{"sum":42}` || string(res.Structured) != `{"sum":42}` {
		t.Fatalf("result = %+v", res)
	}
}

func TestInvalidArguments(t *testing.T) {
	ts := mustSet(t, nil, mustTyped(t, "add", add))
	tests := []struct {
		args     string
		pointers []string
		message  string
	}{
		{`{"a":"two","b":1}`, []string{"/a"}, ""},
		{`{"a":1}`, []string{""}, ""},
		{`{"a":1,"b":2,"c":3}`, []string{""}, ""},
		{`{"a":1.5,"b":"x"}`, []string{"/a", "/b"}, ""},
		{`[1,2]`, nil, "must be a JSON object"},
		{`{"a":`, nil, "not valid JSON"},
		{`"x"`, nil, "must be a JSON object"},
	}
	for _, tt := range tests {
		_, err := tool.Call(context.Background(), ts, "add", json.RawMessage(tt.args), nil)
		var inv *tool.InvalidArgumentsError
		if !errors.As(err, &inv) {
			t.Errorf("%s: got %v, want *InvalidArgumentsError", tt.args, err)
			continue
		}
		var ptrs []string
		for _, v := range inv.Violations {
			ptrs = append(ptrs, v.Pointer)
		}
		if fmt.Sprint(ptrs) != fmt.Sprint(tt.pointers) {
			t.Errorf("%s: pointers %q, want %q (%v)", tt.args, ptrs, tt.pointers, inv)
		}
		if tt.message != "" && !strings.Contains(inv.Message, tt.message) {
			t.Errorf("%s: message %q lacks %q", tt.args, inv.Message, tt.message)
		}
		if tool.ErrorResult(err).StatusCode != 400 {
			t.Errorf("%s: not a 400", tt.args)
		}
	}
}

func TestFuncWithExplicitSchema(t *testing.T) {
	info := tool.Info{
		Name:        "tool_echo",
		Description: "Echoes text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}
	echo, err := native.Func(info, func(_ context.Context, args map[string]any) (any, error) {
		s := args["text"].(string)
		if s == "fail" {
			return nil, errors.New("asked to fail")
		}
		if s == "dict" {
			return map[string]any{"success": false, "error": "tool says no", "hint": "try again"}, nil
		}
		return s, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := mustSet(t, nil, echo)
	ctx := context.Background()

	res, err := tool.Call(ctx, ts, "tool_echo", json.RawMessage(`{"text":"hi"}`), nil)
	if err != nil || res.Text() != "hi" {
		t.Fatalf("echo: %+v %v", res, err)
	}
	// A plain error is a tool failure the LLM reads.
	res, err = tool.Call(ctx, ts, "tool_echo", json.RawMessage(`{"text":"fail"}`), nil)
	if err != nil || res.Success || res.StatusCode != 500 || res.Error != "asked to fail" {
		t.Fatalf("plain error: %+v %v", res, err)
	}
	// A returned dict is normalized like any LCP result.
	res, err = tool.Call(ctx, ts, "tool_echo", json.RawMessage(`{"text":"dict"}`), nil)
	if err != nil || res.Success || res.Error != "tool says no" || string(res.Payload["hint"]) != `"try again"` {
		t.Fatalf("dict result: %+v %v", res, err)
	}
}

func TestDuplicateNames(t *testing.T) {
	_, err := native.New(nil, mustTyped(t, "add", add), mustTyped(t, "add", add))
	var dup *tool.DuplicateNameError
	if !errors.As(err, &dup) || dup.Name != "add" {
		t.Fatalf("got %v", err)
	}
}

func TestInteractiveTool(t *testing.T) {
	ask := mustTyped(t, "greet", func(ctx context.Context, in struct{}) (string, error) {
		name, err := tool.AskText(ctx, "Name", "Who are you?", false)
		if err != nil {
			return "", err
		}
		return "hello " + name, nil
	}).Interactive(tool.Capabilities{Text: true})
	ts := mustSet(t, nil, ask)
	ctx := context.Background()
	h, err := ts.Handler(ctx, "greet")
	if err != nil {
		t.Fatal(err)
	}
	step, err := h.Invoke(ctx, tool.Invocation{})
	if err != nil || step.Request == nil || step.Request.Kind != tool.KindText {
		t.Fatalf("invoke: %+v %v", step, err)
	}
	step, err = h.Respond(ctx, step.Request.Submitted("Ada"))
	if err != nil || step.Result.Text() != "hello Ada" {
		t.Fatalf("respond: %+v %v", step, err)
	}

	// Declining ends the call with an engine error.
	_, err = tool.Call(ctx, ts, "greet", nil, &tool.CallOptions{Interact: func(context.Context, *tool.Request) (any, bool) { return nil, false }})
	var dec *tool.InteractionDeclinedError
	if !errors.As(err, &dec) {
		t.Fatalf("declined: %v", err)
	}

	// Asking for something undeclared is an engine error.
	sneaky := mustTyped(t, "sneaky", func(ctx context.Context, in struct{}) (string, error) {
		return tool.AskSecret(ctx, "Key", "Key?")
	}).Interactive(tool.Capabilities{Text: true})
	ts2 := mustSet(t, nil, sneaky)
	_, err = tool.Call(ctx, ts2, "sneaky", nil, &tool.CallOptions{Interact: func(context.Context, *tool.Request) (any, bool) { return "k", true }})
	var und *tool.UndeclaredInteractionError
	if !errors.As(err, &und) || und.Kind != tool.KindSecret {
		t.Fatalf("undeclared: %v", err)
	}
}

func TestConfigAndWorkspaceReachTheTool(t *testing.T) {
	probe := mustTyped(t, "probe", func(ctx context.Context, in struct{}) (map[string]string, error) {
		c := tool.CallFromContext(ctx)
		return map[string]string{"level": c.ConfigString("autonomy_level"), "ws": c.Workspace, "lib": c.Info.Library.ID, "autonomy": string(c.Autonomy)}, nil
	}).InLibrary(tool.Library{ID: "system_shell"})
	ts := mustSet(t, &native.Options{Configs: map[string]map[string]any{"system_shell": {"autonomy_level": "strict"}}, Workspace: "/tmp/ws"}, probe)
	res, err := tool.Call(context.Background(), ts, "probe", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	_ = json.Unmarshal(res.Output, &got)
	if got["level"] != "strict" || got["ws"] != "/tmp/ws" || got["lib"] != "system_shell" || got["autonomy"] != "strict" {
		t.Fatalf("got %v", got)
	}
}

func TestDynamicDescription(t *testing.T) {
	tl := mustTyped(t, "sh", func(context.Context, struct{}) (string, error) { return "", nil }).
		InLibrary(tool.Library{ID: "system_shell"}).
		DescribeWith(func(cfg map[string]any) string { return fmt.Sprintf("level %v", cfg["autonomy_level"]) })
	ts := mustSet(t, &native.Options{Configs: map[string]map[string]any{"system_shell": {"autonomy_level": "safe"}}}, tl)
	infos, _ := ts.Tools(context.Background())
	if infos[0].Description != "level safe" {
		t.Fatalf("description %q", infos[0].Description)
	}
}

func TestTimeout(t *testing.T) {
	slow := mustTyped(t, "slow", func(ctx context.Context, in struct{}) (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(10 * time.Second):
			return "done", nil
		}
	})
	ts := mustSet(t, &native.Options{Timeout: 30 * time.Millisecond}, slow)
	_, err := tool.Call(context.Background(), ts, "slow", nil, nil)
	var to *tool.TimeoutError
	if !errors.As(err, &to) || tool.ErrorResult(err).StatusCode != 504 {
		t.Fatalf("got %v", err)
	}
}

func TestRemoveAndClose(t *testing.T) {
	ts := mustSet(t, nil, mustTyped(t, "add", add))
	if !ts.Remove("add") || ts.Remove("add") {
		t.Fatal("Remove")
	}
	var unknown *tool.UnknownToolError
	if _, err := ts.Handler(context.Background(), "add"); !errors.As(err, &unknown) {
		t.Fatalf("after Remove: %v", err)
	}
	_ = ts.Close()
	if _, err := ts.Tools(context.Background()); !errors.Is(err, tool.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func FuzzArguments(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":2}`, `{"a":1e400,"b":-0}`, `{}`, `[]`, `{"a":"\ud800"}`, `null`, ``} {
		f.Add([]byte(s))
	}
	ts := mustSet(f, nil, mustTyped(f, "add", add))
	f.Fuzz(func(t *testing.T, args []byte) {
		res, err := tool.Call(context.Background(), ts, "add", args, nil)
		if err == nil && (res == nil || !res.Success) {
			t.Fatalf("args %q: %+v", args, res)
		}
		if err != nil {
			var inv *tool.InvalidArgumentsError
			if !errors.As(err, &inv) {
				t.Fatalf("args %q: unexpected error %v", args, err)
			}
		}
	})
}

func BenchmarkTypedCall(b *testing.B) {
	ts := mustSet(b, nil, mustTyped(b, "add", add))
	ctx := context.Background()
	args := json.RawMessage(`{"a":2,"b":40}`)
	b.ReportAllocs()
	for b.Loop() {
		res, err := tool.Call(ctx, ts, "add", args, nil)
		if err != nil || !res.Success {
			b.Fatal(res, err)
		}
	}
}

func Example() {
	type in struct {
		A int `json:"a" jsonschema:"the first addend"`
		B int `json:"b" jsonschema:"the second addend"`
	}
	type out struct {
		Sum int `json:"sum"`
	}
	addTool, err := native.Typed("add", "Adds two integers.", func(ctx context.Context, v in) (out, error) {
		return out{Sum: v.A + v.B}, nil
	})
	if err != nil {
		panic(err)
	}
	ts, err := native.New(nil, addTool)
	if err != nil {
		panic(err)
	}
	res, err := tool.Call(context.Background(), ts, "add", json.RawMessage(`{"a":2,"b":3}`), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Success, res.Text())
	// Output: true {"sum":5}
}

// BenchmarkDirectReference is the floor BenchmarkTypedCall is compared
// with (bench/native.sh prints the ratio): the same function called
// directly with its arguments decoded and its result encoded by
// encoding/json, no schema, no handler, no normalization.
func BenchmarkDirectReference(b *testing.B) {
	ctx := context.Background()
	args := []byte(`{"a":2,"b":40}`)
	b.ReportAllocs()
	for b.Loop() {
		var in addIn
		if err := json.Unmarshal(args, &in); err != nil {
			b.Fatal(err)
		}
		out, err := add(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(out); err != nil {
			b.Fatal(err)
		}
	}
}

// A typed tool whose input is not an object (tools-kit's double: i64) takes
// it as the one argument "value": its schema says so, the call gives
// {"value": 21}, and the JSON result is structured without a schema of
// its own; a value of the wrong type, or none, is refused.
func TestTypedScalarInput(t *testing.T) {
	double, err := native.Typed("double", "Doubles.", func(_ context.Context, v int64) (int64, error) { return v * 2, nil })
	if err != nil {
		t.Fatal(err)
	}
	words, err := native.Typed("count", "Counts.", func(_ context.Context, v []string) (int, error) { return len(v), nil })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(double.Info().InputSchema), `{"additionalProperties":false,"properties":{"value":{"type":"integer"}},"required":["value"],"type":"object"}`; got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	ts := mustSet(t, nil, double, words)
	tests := []struct {
		tool, args string
		out        string
		bad        string
	}{
		{"double", `{"value": 21}`, "42", ""},
		{"count", `{"value": ["a", "b"]}`, "2", ""},
		{"double", `{"value": "x"}`, "", "/value"},
		{"double", `{}`, "", "value"},
		{"double", `{"value": 1, "other": 2}`, "", "other"},
		{"double", `21`, "", "a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			res, err := tool.Call(context.Background(), ts, tt.tool, json.RawMessage(tt.args), nil)
			if tt.bad != "" {
				var inv *tool.InvalidArgumentsError
				if !errors.As(err, &inv) || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("err %v, want invalid arguments naming %q", err, tt.bad)
				}
				return
			}
			if err != nil || !res.Success || string(res.Output) != tt.out || string(res.Structured) != tt.out {
				t.Fatalf("%+v, %v", res, err)
			}
		})
	}
}

// A native tool without an output schema that returns JSON data has it
// as the structured value, as tools-kit's ToolResult::json; text has none.
func TestStructuredWithoutSchema(t *testing.T) {
	mk := func(name string, v any) *native.Tool {
		tl, err := native.Func(tool.Info{Name: name}, func(context.Context, map[string]any) (any, error) { return v, nil })
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	res0, _ := tool.JSON(map[string]int{"n": 1})
	ts := mustSet(t, nil, mk("obj", map[string]any{"city": "Chicago"}), mk("num", 42), mk("text", "hi"),
		mk("lcp", map[string]any{"success": true, "output": []int{1, 2}}), mk("failed", map[string]any{"success": false, "error": "no"}),
		mk("given", res0))
	for _, tt := range []struct{ name, want string }{
		{"obj", `{"city":"Chicago"}`}, {"num", "42"}, {"text", ""}, {"lcp", "[1,2]"}, {"failed", ""}, {"given", `{"n":1}`},
	} {
		res, err := tool.Call(context.Background(), ts, tt.name, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Structured) != tt.want {
			t.Errorf("%s: structured %s, want %s", tt.name, res.Structured, tt.want)
		}
	}
}

func TestToolNamesAreChecked(t *testing.T) {
	for _, name := range []string{"", "bad name!", "a/b", "tab\tname", strings.Repeat("x", 129)} {
		if _, err := native.Raw(tool.Info{Name: name}, func(context.Context, json.RawMessage) (any, error) { return nil, nil }); err == nil {
			t.Errorf("name %q accepted", name)
		}
	}
	for _, name := range []string{"tool_greet", "alias::tool", "get-weather.v2", "tool_café", strings.Repeat("x", 128)} {
		if _, err := native.Raw(tool.Info{Name: name}, func(context.Context, json.RawMessage) (any, error) { return nil, nil }); err != nil {
			t.Errorf("name %q refused: %v", name, err)
		}
	}
}

// A tool with an output schema gets its value as the structured result,
// typed or not.
func TestStructuredResultOfUntypedTools(t *testing.T) {
	form, err := native.Func(tool.Info{Name: "form", OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(context.Context, map[string]any) (any, error) { return map[string]any{"n": 3}, nil })
	if err != nil {
		t.Fatal(err)
	}
	bad, err := native.Func(tool.Info{Name: "bad", OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(context.Context, map[string]any) (any, error) { return map[string]any{"n": "x"}, nil })
	if err != nil {
		t.Fatal(err)
	}
	ts := mustSet(t, nil, form, bad)
	res, err := tool.Call(context.Background(), ts, "form", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Structured) != `{"n":3}` {
		t.Errorf("structured = %s", res.Structured)
	}
	var pe *tool.ProtocolError
	if _, err := tool.Call(context.Background(), ts, "bad", nil, nil); !errors.As(err, &pe) {
		t.Errorf("output breaking its schema: %v", err)
	}
}
