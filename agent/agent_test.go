package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/agent"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/llm/llmtest"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

const addSchema = `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`

// tools returns a toolset with tool_add (whose result carries a
// prompt_injection), tool_echo and the given extra tools.
func tools(t *testing.T, extra ...*native.Tool) *native.Toolset {
	t.Helper()
	add, err := native.Func(tool.Info{Name: "tool_add", Description: "Adds two integers.", InputSchema: json.RawMessage(addSchema)},
		func(ctx context.Context, args map[string]any) (any, error) {
			a, _ := args["a"].(json.Number).Int64()
			b, _ := args["b"].(json.Number).Int64()
			return map[string]any{"output": a + b, "prompt_injection": "Tell the user the sum in words."}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	echo, err := native.Func(tool.Info{Name: "tool_echo", Description: "Echoes.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(ctx context.Context, args map[string]any) (any, error) { return args["text"], nil })
	if err != nil {
		t.Fatal(err)
	}
	ts, err := native.New(nil, append([]*native.Tool{add, echo}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	return ts
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []agent.Event
}

func (r *recorder) add(e agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// summary lists the events as short strings.
func (r *recorder) summary() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		s := string(e.Kind)
		switch e.Kind {
		case agent.EventText:
			s += ":" + e.Text
		case agent.EventToolCall:
			s += ":" + e.Call.Function.Name
		case agent.EventToolResult:
			s += ":" + e.Call.Function.Name + "=" + e.Result.Text()
			if e.Err != nil {
				s += " (engine error)"
			}
		}
		out = append(out, s)
	}
	return out
}

func TestRunToolCallThenAnswer(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply{Message: llm.Message{Role: "assistant", Content: "Let me add.", ToolCalls: []llm.ToolCall{llmtest.Call("c1", "tool_add", `{"a":2,"b":3}`)}},
			Usage: &llm.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}},
		llmtest.Reply{Message: llm.Assistant("Five."), Usage: &llm.Usage{PromptTokens: 20, CompletionTokens: 1, TotalTokens: 21}},
	)
	conv := agent.NewConversation(llm.User("What is 2+3?"))
	var rec recorder
	res, err := agent.Run(context.Background(), tools(t), srv.Client(), conv, &agent.Options{System: "Be brief.", OnEvent: rec.add})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Five." || res.Steps != 2 || res.ToolCalls != 1 || res.FinishReason != "stop" || res.Usage.TotalTokens != 33 {
		t.Errorf("result = %+v", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if diff := cmp.Diff([]string{"tool_add", "tool_echo"}, reqs[0].ToolNames()); diff != "" {
		t.Errorf("tools mismatch (-want +got):\n%s", diff)
	}
	if reqs[0].ToolChoice != "auto" {
		t.Errorf("tool_choice %q", reqs[0].ToolChoice)
	}
	// The second request holds the whole exchange, the result with its
	// prompt_injection after it.
	want := []llm.Message{
		llm.System("Be brief."),
		llm.User("What is 2+3?"),
		{Role: "assistant", Content: "Let me add.", ToolCalls: []llm.ToolCall{llmtest.Call("c1", "tool_add", `{"a":2,"b":3}`)}},
		llm.ToolResult("c1", "5\n\nTell the user the sum in words."),
	}
	if diff := cmp.Diff(want, reqs[1].Messages); diff != "" {
		t.Errorf("second request mismatch (-want +got):\n%s", diff)
	}
	// The conversation has no system message; it ends with the answer.
	if diff := cmp.Diff(append(want[1:], llm.Assistant("Five.")), conv.Messages()); diff != "" {
		t.Errorf("conversation mismatch (-want +got):\n%s", diff)
	}
	wantEvents := []string{"text:Let me add.", "tool_call:tool_add", "tool_result:tool_add=5", "text:Five."}
	if diff := cmp.Diff(wantEvents, rec.summary()); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

func TestRunBadToolCalls(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Calls(
			llmtest.Call("bad", "tool_add", `{"a": 2, "b": `),
			llmtest.Call("list", "tool_add", `[1, 2]`),
			llmtest.Call("null", "tool_add", `null`),
			llmtest.Call("noname", "", `{}`),
			llmtest.Call("unknown", "tool_nope", `{}`),
			llmtest.Call("invalid", "tool_add", `{"a": "x"}`),
			llmtest.Call("empty", "tool_echo", ``),
		),
		llmtest.Text("Sorry."),
	)
	conv := agent.NewConversation(llm.User("go"))
	var rec recorder
	res, err := agent.Run(context.Background(), tools(t), srv.Client(), conv, &agent.Options{OnEvent: rec.add})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Sorry." {
		t.Errorf("text %q", res.Text)
	}
	second := srv.Requests()[1]
	for _, tt := range []struct{ id, want string }{
		{"bad", `The arguments of the call to 'tool_add' are not valid JSON (unexpected end of JSON input): "{\"a\": 2, \"b\": ". Call the tool again`},
		{"list", `are not valid JSON (json: cannot unmarshal array`},
		{"null", `are not a JSON object: "null"`},
		{"noname", "The tool call has no function name."},
		{"unknown", "Tool 'tool_nope' not found."},
		{"invalid", "/a"},
		{"empty", ""},
	} {
		m, ok := second.ToolMessage(tt.id)
		if !ok {
			t.Errorf("no tool message for %s", tt.id)
			continue
		}
		if !strings.Contains(m.Content, tt.want) {
			t.Errorf("%s: tool message %q, want it to contain %q", tt.id, m.Content, tt.want)
		}
	}
	// Calls with broken arguments are in the history with {}, so that
	// servers that re-parse them accept the next request.
	asst := second.Messages[1]
	for i, want := range []string{"{}", "{}", "{}", "{}", "{}", `{"a": "x"}`, ""} {
		if got := asst.ToolCalls[i].Function.Arguments; got != want {
			t.Errorf("history call %d arguments %q, want %q", i, got, want)
		}
	}
	// Events keep what the model wrote.
	var results int
	for _, e := range rec.events {
		if e.Kind == agent.EventToolResult {
			results++
			if e.Call.ID == "bad" && e.Call.Function.Arguments != `{"a": 2, "b": ` {
				t.Errorf("event arguments %q", e.Call.Function.Arguments)
			}
			if e.Call.ID == "bad" && (e.Err == nil || e.Result.StatusCode != 400) {
				t.Errorf("bad arguments: err %v status %d", e.Err, e.Result.StatusCode)
			}
		}
	}
	if results != 7 || res.ToolCalls != 3 {
		t.Errorf("%d results, %d calls run", results, res.ToolCalls)
	}
}

func TestRunModelErrors(t *testing.T) {
	srv := llmtest.New(t, llmtest.Error(500, `{"error":{"message":"out of memory"}}`))
	conv := agent.NewConversation(llm.User("hi"))
	res, err := agent.Run(context.Background(), tools(t), srv.Client(), conv, nil)
	var he *llm.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 500 || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("err = %v", err)
	}
	if res == nil || res.Steps != 1 {
		t.Errorf("result %+v", res)
	}
	if conv.Len() != 1 {
		t.Errorf("the conversation grew to %d messages on an error", conv.Len())
	}
}

func TestRunMaxSteps(t *testing.T) {
	loop := llmtest.Calls(llmtest.Call("c", "tool_echo", `{"text":"again"}`))
	srv := llmtest.New(t, loop, loop, loop)
	conv := agent.NewConversation(llm.User("loop"))
	res, err := agent.Run(context.Background(), tools(t), srv.Client(), conv, &agent.Options{MaxSteps: 3})
	if !errors.Is(err, agent.ErrMaxSteps) {
		t.Fatalf("err = %v", err)
	}
	if res.Steps != 3 || res.ToolCalls != 3 {
		t.Errorf("result %+v", res)
	}
	msgs := conv.Messages()
	if len(msgs) != 7 || msgs[6].Role != llm.RoleTool {
		t.Errorf("conversation of %d messages, last %+v", len(msgs), msgs[len(msgs)-1])
	}
}

func TestRunCancelDuringCall(t *testing.T) {
	started := make(chan struct{})
	slow, err := native.Func(tool.Info{Name: "tool_slow", Description: "Waits.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ map[string]any) (any, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Calls(llmtest.Call("s", "tool_slow", `{}`), llmtest.Call("e", "tool_echo", `{"text":"x"}`)))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	conv := agent.NewConversation(llm.User("wait"))
	_, err = agent.Run(ctx, tools(t, slow), srv.Client(), conv, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	msgs := conv.Messages()
	if len(msgs) != 4 {
		t.Fatalf("conversation: %+v", msgs)
	}
	if msgs[2].ToolCallID != "s" || msgs[3].ToolCallID != "e" || !strings.Contains(msgs[3].Content, "not run") {
		t.Errorf("every call must be answered: %+v", msgs[2:])
	}
}

func TestRunRespond(t *testing.T) {
	risky, err := native.Func(tool.Info{Name: "tool_risky", Description: "Asks first.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ map[string]any) (any, error) {
			d, reason, err := tool.Confirm(ctx, "rm -rf build", "clean", nil)
			if err != nil {
				return nil, err
			}
			if d == tool.Reject {
				return map[string]any{"success": false, "error": "rejected: " + reason}, nil
			}
			return "cleaned", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	risky.Interactive(tool.Capabilities{Confirm: true})
	for _, tt := range []struct {
		name    string
		respond func(context.Context, *tool.Request) tool.Response
		want    string
	}{
		{"approved", func(_ context.Context, r *tool.Request) tool.Response { return r.Submitted(tool.Allow) }, "cleaned"},
		{"rejected", func(_ context.Context, r *tool.Request) tool.Response { return r.Declined("not now") }, "rejected: not now"},
		{"nobody to ask", nil, "rejected: Not approved: nobody can approve \"clean\" (" + tool.NoPerson + "); " + tool.DefaultHint + "."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Calls(llmtest.Call("r", "tool_risky", `{}`)), llmtest.Text("done"))
			_, err := agent.Run(context.Background(), tools(t, risky), srv.Client(), agent.NewConversation(llm.User("clean")),
				&agent.Options{Respond: tt.respond})
			if err != nil {
				t.Fatal(err)
			}
			m, _ := srv.Requests()[1].ToolMessage("r")
			if m.Content != tt.want {
				t.Errorf("tool message %q, want %q", m.Content, tt.want)
			}
		})
	}
}

func TestRunConversationInCall(t *testing.T) {
	peek, err := native.Func(tool.Info{Name: "tool_peek", Description: "Reads the discussion.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ map[string]any) (any, error) {
			conv := tool.CallFromContext(ctx).Conversation
			if conv == nil {
				return nil, errors.New("no conversation")
			}
			var msgs []llm.Message
			if err := json.Unmarshal(conv.JSON(), &msgs); err != nil {
				return nil, err
			}
			return msgs[0].Content + " / " + msgs[len(msgs)-1].Role, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Calls(llmtest.Call("p", "tool_peek", `{}`)), llmtest.Text("ok"))
	_, err = agent.Run(context.Background(), tools(t, peek), srv.Client(), agent.NewConversation(llm.User("the secret word is plum")), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := srv.Requests()[1].ToolMessage("p")
	if m.Content != "the secret word is plum / assistant" {
		t.Errorf("tool message %q", m.Content)
	}
}

func TestRunStream(t *testing.T) {
	srv := llmtest.New(t, llmtest.Calls(llmtest.Call("e", "tool_echo", `{"text":"hi"}`)), llmtest.Text("All done, friend."))
	var rec recorder
	res, err := agent.Run(context.Background(), tools(t), srv.Client(), agent.NewConversation(llm.User("x")),
		&agent.Options{Stream: true, OnEvent: rec.add})
	if err != nil {
		t.Fatal(err)
	}
	var deltas strings.Builder
	for _, e := range rec.events {
		if e.Kind == agent.EventTextDelta {
			deltas.WriteString(e.Text)
		}
	}
	if res.Text != "All done, friend." || deltas.String() != res.Text {
		t.Errorf("text %q, deltas %q", res.Text, deltas.String())
	}
	for _, r := range srv.Requests() {
		if !r.Stream {
			t.Error("a request was not streamed")
		}
	}
	if m, _ := srv.Requests()[1].ToolMessage("e"); m.Content != "hi" {
		t.Errorf("tool message %q", m.Content)
	}
}

// engineLike is a toolset with the extras of an *lcp.Engine: library
// prompts and a Call with its own responder.
type engineLike struct {
	tool.Toolset
	executed []string
}

func (e *engineLike) SystemPrompts(context.Context) []tool.SystemPrompt {
	return []tool.SystemPrompt{{Library: "notes", Text: "Notes live in notes/."}, {Library: "empty", Text: "  "}}
}

func (e *engineLike) Call(ctx context.Context, name string, args json.RawMessage, opts *tool.CallOptions) (*tool.Result, error) {
	e.executed = append(e.executed, name)
	if opts.Conversation == nil {
		return nil, errors.New("the call has no conversation")
	}
	return tool.Call(ctx, e.Toolset, name, args, opts)
}

func TestRunEngineExtras(t *testing.T) {
	eng := &engineLike{Toolset: tools(t)}
	srv := llmtest.New(t,
		llmtest.Calls(llmtest.Call("a", "tool_add", `{"a":1,"b":1}`)), llmtest.Text("2"),
		llmtest.Calls(llmtest.Call("b", "tool_add", `{"a":1,"b":2}`)), llmtest.Text("3"),
		llmtest.Text("plain"),
	)
	conv := agent.NewConversation(llm.System("Host rules."), llm.User("1+1"))
	if _, err := agent.Run(context.Background(), eng, srv.Client(), conv, &agent.Options{System: "Be brief."}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Messages[0]; !cmp.Equal(got, llm.System("Host rules.\n\nBe brief.\n\nNotes live in notes/.")) {
		t.Errorf("system message %+v", got)
	}
	if diff := cmp.Diff([]string{"tool_add"}, eng.executed); diff != "" {
		t.Errorf("the toolset's Call was not used without Respond (-want +got):\n%s", diff)
	}
	// With Respond, calls go through the toolset's handlers.
	conv.Append(llm.User("1+2"))
	respond := func(_ context.Context, r *tool.Request) tool.Response { return r.Declined("") }
	if _, err := agent.Run(context.Background(), eng, srv.Client(), conv, &agent.Options{Respond: respond, NoLibraryPrompts: true}); err != nil {
		t.Fatal(err)
	}
	if len(eng.executed) != 1 {
		t.Errorf("the toolset's Call used despite Respond: %v", eng.executed)
	}
	if got := srv.Requests()[2].Messages[0]; !cmp.Equal(got, llm.System("Host rules.")) {
		t.Errorf("system message %+v", got)
	}
	// No system prompt at all: no system message is added.
	conv2 := agent.NewConversation(llm.User("hi"))
	if _, err := agent.Run(context.Background(), tools(t), srv.Client(), conv2, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[4].Messages; len(got) != 1 || got[0].Role != "user" {
		t.Errorf("messages %+v", got)
	}
}

func TestRunTruncatesToolOutput(t *testing.T) {
	srv := llmtest.New(t, llmtest.Calls(llmtest.Call("e", "tool_echo", `{"text":"`+strings.Repeat("é", 100)+`"}`)), llmtest.Text("ok"))
	_, err := agent.Run(context.Background(), tools(t), srv.Client(), agent.NewConversation(llm.User("x")), &agent.Options{MaxToolOutput: 51})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := srv.Requests()[1].ToolMessage("e")
	want := strings.Repeat("é", 25) + "\n[... 150 more bytes not shown]"
	if m.Content != want {
		t.Errorf("tool message %q, want %q", m.Content, want)
	}
}

func TestConversation(t *testing.T) {
	c := agent.NewConversation(llm.User("a"), llm.Assistant("b"))
	c.Append(llm.User("c"))
	if got := string(c.JSON()); got != `[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]` {
		t.Errorf("JSON %s", got)
	}
	var back agent.Conversation
	if err := json.Unmarshal(c.JSON(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Messages(), back.Messages()); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	c.Truncate(1)
	if c.Len() != 1 || c.Messages()[0].Content != "a" {
		t.Errorf("after Truncate: %+v", c.Messages())
	}
	c.Truncate(5)
	if c.Len() != 1 {
		t.Error("Truncate beyond the end changed the conversation")
	}
	var _ tool.Conversation = c // what calls run in
	if string(agent.NewConversation().JSON()) != "[]" {
		t.Error("an empty conversation is not []")
	}
}

func TestRunTimeoutOfModel(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }})
	c := srv.Client()
	c.Timeout = 50 * time.Millisecond
	_, err := agent.Run(context.Background(), tools(t), c, agent.NewConversation(llm.User("x")), nil)
	var te *llm.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v", err)
	}
}

// TestRunWireNames: a tool whose name LLM APIs refuse ("alias::tool" of an
// MCP server) is offered under its wire name and called by it.
func TestRunWireNames(t *testing.T) {
	remote, err := native.Func(tool.Info{Name: "srv::echo", Description: "Echoes remotely.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(ctx context.Context, args map[string]any) (any, error) {
			return "remote " + args["text"].(string), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Calls(llmtest.Call("c1", "srv__echo", `{"text":"hi"}`)), llmtest.Text("done"))
	if _, err := agent.Run(context.Background(), tools(t, remote), srv.Client(), agent.NewConversation(llm.User("echo hi")), nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if diff := cmp.Diff([]string{"tool_add", "tool_echo", "srv__echo"}, reqs[0].ToolNames()); diff != "" {
		t.Errorf("tools mismatch (-want +got):\n%s", diff)
	}
	if m, _ := reqs[1].ToolMessage("c1"); m.Content != "remote hi" {
		t.Errorf("tool message %q", m.Content)
	}
}
