package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/internal/jsontest"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/llm/llmtest"
)

const secretKey = "sk-test-0123456789abcdef"

func ptr[T any](v T) *T { return &v }

// jsonEqual fails the test when got and want are not the same JSON value.
func jsonEqual(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	eq, err := jsontest.Equal(got, []byte(want))
	if err != nil {
		t.Fatalf("%s: %v\ngot: %s", what, err, got)
	}
	if !eq {
		t.Errorf("%s mismatch\n got: %s\nwant: %s", what, got, want)
	}
}

func TestChatRequestBody(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("ok"))
	c := srv.Client()
	c.APIKey = secretKey
	spec := json.RawMessage(`{"type":"function","function":{"name":"tool_add","description":"Adds.","parameters":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}`)
	_, err := c.Chat(context.Background(), &llm.ChatRequest{
		Messages: []llm.Message{
			llm.System("sys"),
			llm.User("add 2"),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{llmtest.Call("c1", "tool_add", `{"a":2}`)}},
			llm.ToolResult("c1", "2"),
		},
		Tools:       []json.RawMessage{spec},
		MaxTokens:   64,
		Temperature: ptr(0.5),
		Extra:       map[string]json.RawMessage{"top_k": json.RawMessage(`40`), "model": json.RawMessage(`"other"`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if got := r.Header.Get("Authorization"); got != "Bearer "+secretKey {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path = %q", r.Path)
	}
	jsonEqual(t, "body", r.Body, `{
		"model": "test-model",
		"messages": [
			{"role": "system", "content": "sys"},
			{"role": "user", "content": "add 2"},
			{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "tool_add", "arguments": "{\"a\":2}"}}]},
			{"role": "tool", "content": "2", "tool_call_id": "c1"}
		],
		"tools": [`+string(spec)+`],
		"tool_choice": "auto",
		"max_tokens": 64,
		"temperature": 0.5,
		"top_k": 40
	}`)
}

func TestChatResponses(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  llm.Message
	}{
		{"text", llmtest.Text("hello"), llm.Assistant("hello")},
		{"tool call", llmtest.Calls(llmtest.Call("c9", "tool_x", `{"q":"a"}`)),
			llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{llmtest.Call("c9", "tool_x", `{"q":"a"}`)}}},
		{"content parts", llmtest.Raw("application/json", `{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"image_url"},{"type":"text","text":"b"}]}}]}`),
			llm.Assistant("ab")},
		{"arguments as an object, no type", llmtest.Raw("application/json", `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"k","function":{"name":"f","arguments":{"a": 1}}}]}}]}`),
			llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{llmtest.Call("k", "f", `{"a": 1}`)}}},
		{"no role", llmtest.Raw("application/json", `{"choices":[{"message":{"content":"x"}}]}`), llm.Assistant("x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, tt.reply)
			resp, err := srv.Client().Chat(context.Background(), &llm.ChatRequest{Messages: []llm.Message{llm.User("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp.Message()); diff != "" {
				t.Errorf("message mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatMissingCallID(t *testing.T) {
	srv := llmtest.New(t, llmtest.Raw("application/json", `{"choices":[{"message":{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{}"}},{"function":{"name":"g","arguments":"{}"}}]}}]}`))
	resp, err := srv.Client().Chat(context.Background(), &llm.ChatRequest{})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message().ToolCalls
	if len(calls) != 2 || calls[0].ID == "" || calls[0].ID == calls[1].ID || calls[0].Type != "function" {
		t.Errorf("calls = %+v: want distinct generated ids", calls)
	}
}

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name        string
		reply       llmtest.Reply
		status      int
		wantMessage string
		wantType    string
	}{
		{"openai error object", llmtest.Error(500, `{"error":{"message":"model crashed","type":"server_error","code":"boom"}}`), 500, "model crashed", "server_error"},
		{"error string", llmtest.Error(503, `{"error":"loading model"}`), 503, "loading model", ""},
		{"detail", llmtest.Error(422, `{"detail":[{"msg":"field required"}]}`), 422, `[{"msg":"field required"}]`, ""},
		{"html", Reply(502, "text/html", "<html>\n<body>Bad gateway</body>\n</html>"), 502, "<html> <body>Bad gateway</body> </html>", ""},
		{"key echoed", llmtest.Error(401, `{"error":{"message":"Incorrect API key provided: `+secretKey+`."}}`), 401, "Incorrect API key provided: [redacted].", ""},
		{"empty body", llmtest.Error(429, ``), 429, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, tt.reply)
			c := srv.Client()
			c.APIKey = secretKey
			_, err := c.Chat(context.Background(), &llm.ChatRequest{Messages: []llm.Message{llm.User("hi")}})
			var he *llm.HTTPError
			if !errors.As(err, &he) {
				t.Fatalf("err = %v (%T), want *HTTPError", err, err)
			}
			if he.StatusCode != tt.status || he.Message != tt.wantMessage || he.Type != tt.wantType {
				t.Errorf("got status %d message %q type %q, want %d %q %q", he.StatusCode, he.Message, he.Type, tt.status, tt.wantMessage, tt.wantType)
			}
			if strings.Contains(err.Error(), secretKey) {
				t.Errorf("the error shows the API key: %v", err)
			}
			if !strings.Contains(err.Error(), fmt.Sprint(tt.status)) || !strings.Contains(err.Error(), "/v1/chat/completions") {
				t.Errorf("error %q does not name the status and the endpoint", err)
			}
		})
	}
}

// Reply is a reply with a status and a content type.
func Reply(status int, ct, body string) llmtest.Reply {
	return llmtest.Reply{Status: status, ContentType: ct, Body: body}
}

func TestMalformedResponses(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"not json", `<html>hi</html>`, "not a chat-completions JSON object"},
		{"no choices", `{"choices":[]}`, "no choices"},
		{"choices not a list", `{"choices":{}}`, "not a chat-completions JSON object"},
		{"user role", `{"choices":[{"message":{"role":"user","content":"x"}}]}`, `role "user"`},
		{"error with 200", `{"error":{"message":"quota"}}`, "quota"},
		{"content a number", `{"choices":[{"message":{"role":"assistant","content":5}}]}`, "content is neither"},
		{"truncated", `{"choices":[{"message":{"role":"assis`, "not a chat-completions JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Raw("application/json", tt.body))
			_, err := srv.Client().Chat(context.Background(), &llm.ChatRequest{})
			var re *llm.ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v (%T), want *ResponseError", err, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestResponseTooLarge(t *testing.T) {
	srv := llmtest.New(t, llmtest.Huge(3<<20), llmtest.Huge(3<<20))
	c := srv.Client()
	c.MaxResponseBytes = 1 << 20
	_, err := c.Chat(context.Background(), &llm.ChatRequest{})
	if !errors.Is(err, llm.ErrResponseTooLarge) {
		t.Fatalf("err = %v, want ErrResponseTooLarge", err)
	}
	// Under the cap the same body is fine.
	c.MaxResponseBytes = 4 << 20
	resp, err := c.Chat(context.Background(), &llm.ChatRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.Message().Content); n < 3<<20-100 {
		t.Errorf("content of %d bytes", n)
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	stall := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}
	t.Run("timeout", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Reply{Handler: stall})
		c := srv.Client()
		c.Timeout = 50 * time.Millisecond
		_, err := c.Chat(context.Background(), &llm.ChatRequest{})
		var te *llm.TimeoutError
		if !errors.As(err, &te) || te.Limit != c.Timeout || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want a *TimeoutError of 50ms", err)
		}
		if !strings.Contains(err.Error(), "no answer within 50ms") {
			t.Errorf("err = %q", err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Reply{Handler: stall})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*time.Millisecond, cancel)
		_, err := srv.Client().Chat(ctx, &llm.ChatRequest{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("stream idle", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"he"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
			stall(w, r)
		}})
		c := srv.Client()
		c.Timeout = 100 * time.Millisecond
		var got strings.Builder
		_, err := c.Stream(context.Background(), &llm.ChatRequest{}, func(d llm.Delta) { got.WriteString(d.Content) })
		var te *llm.TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("err = %v, want a *TimeoutError", err)
		}
		if got.String() != "he" {
			t.Errorf("deltas %q before the stall, want %q", got.String(), "he")
		}
	})
}

func TestTransportErrorHidesPassword(t *testing.T) {
	srv := llmtest.New(t)
	base := strings.Replace(srv.BaseURL(), "http://", "http://user:hunter2@", 1)
	srv.Close()
	c := &llm.Client{BaseURL: base, APIKey: secretKey, Timeout: 2 * time.Second}
	_, err := c.Chat(context.Background(), &llm.ChatRequest{})
	if err == nil {
		t.Fatal("no error from a closed server")
	}
	for _, secret := range []string{"hunter2", secretKey} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows a secret: %v", err)
		}
	}
	if !strings.Contains(err.Error(), "/v1/chat/completions") {
		t.Errorf("error does not name the endpoint: %v", err)
	}
}

func TestNoEndpoint(t *testing.T) {
	_, err := (&llm.Client{}).Chat(context.Background(), &llm.ChatRequest{})
	if !errors.Is(err, llm.ErrNoEndpoint) {
		t.Errorf("err = %v", err)
	}
	_, err = (&llm.Client{BaseURL: "ftp://x/v1"}).Chat(context.Background(), &llm.ChatRequest{})
	if err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("err = %v", err)
	}
}

func TestStream(t *testing.T) {
	calls := []llm.ToolCall{
		llmtest.Call("c1", "tool_a", `{"x": "héllo wörld"}`),
		llmtest.Call("c2", "tool_b", `{}`),
	}
	reply := llmtest.Reply{
		Message: llm.Message{Role: "assistant", Content: "Let me check — ✓.", ToolCalls: calls},
		Usage:   &llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15},
	}
	srv := llmtest.New(t, reply)
	var deltas []string
	resp, err := srv.Client().Stream(context.Background(), &llm.ChatRequest{Messages: []llm.Message{llm.User("go")}},
		func(d llm.Delta) { deltas = append(deltas, d.Content) })
	if err != nil {
		t.Fatal(err)
	}
	if !srv.Requests()[0].Stream {
		t.Error("the request did not ask for a stream")
	}
	if len(deltas) < 2 || strings.Join(deltas, "") != reply.Message.Content {
		t.Errorf("deltas = %q", deltas)
	}
	if diff := cmp.Diff(reply.Message, resp.Message()); diff != "" {
		t.Errorf("message mismatch (-want +got):\n%s", diff)
	}
	if resp.FinishReason() != "tool_calls" || resp.Usage == nil || resp.Usage.TotalTokens != 15 {
		t.Errorf("finish %q usage %+v", resp.FinishReason(), resp.Usage)
	}
}

func TestStreamServerIgnoresStreaming(t *testing.T) {
	srv := llmtest.New(t, llmtest.Raw("application/json; charset=utf-8", `{"choices":[{"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}`))
	var deltas []string
	resp, err := srv.Client().Stream(context.Background(), &llm.ChatRequest{}, func(d llm.Delta) { deltas = append(deltas, d.Content) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message().Content != "whole" || len(deltas) != 1 || deltas[0] != "whole" {
		t.Errorf("content %q deltas %q", resp.Message().Content, deltas)
	}
}

func TestStreamErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"ended early", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n", "ended before"},
		{"no chunk", "data: [DONE]\n\n", "no chunk"},
		{"not json", "data: {oops}\n\n", "not a JSON object"},
		{"error chunk", "data: {\"error\":{\"message\":\"context overflow\"}}\n\n", "context overflow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Raw("text/event-stream", tt.body))
			_, err := srv.Client().Stream(context.Background(), &llm.ChatRequest{}, nil)
			var re *llm.ResponseError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a *ResponseError with %q", err, tt.want)
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
		}})
		_, err := srv.Client().Stream(context.Background(), &llm.ChatRequest{}, nil)
		if err == nil || !strings.Contains(err.Error(), "no chunk") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + strings.Repeat("x", 2<<20) + "\"}}]}\n\ndata: [DONE]\n\n"
		srv := llmtest.New(t, llmtest.Raw("text/event-stream", body))
		c := srv.Client()
		c.MaxResponseBytes = 1 << 20
		_, err := c.Stream(context.Background(), &llm.ChatRequest{}, nil)
		if !errors.Is(err, llm.ErrResponseTooLarge) {
			t.Fatalf("err = %v, want ErrResponseTooLarge", err)
		}
	})
	t.Run("http error", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Error(500, `{"error":{"message":"nope"}}`))
		_, err := srv.Client().Stream(context.Background(), &llm.ChatRequest{}, nil)
		var he *llm.HTTPError
		if !errors.As(err, &he) || he.Message != "nope" {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestGenerate(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("A caption."))
	text, err := srv.Client().GenerateJSON(context.Background(), "Write a caption.",
		json.RawMessage(`{"n_predict":128,"temperature":0.2,"top_k":40,"stop":"\n","system_prompt":"You write captions.","streaming_callback":null,"n_threads":4}`))
	if err != nil {
		t.Fatal(err)
	}
	if text != "A caption." {
		t.Errorf("text = %q", text)
	}
	jsonEqual(t, "body", srv.Requests()[0].Body, `{
		"model": "test-model",
		"messages": [{"role": "system", "content": "You write captions."}, {"role": "user", "content": "Write a caption."}],
		"max_tokens": 128, "temperature": 0.2, "stop": ["\n"], "top_k": 40
	}`)
}

func TestParseGenerateOptions(t *testing.T) {
	tests := []struct {
		in      string
		want    *llm.GenerateOptions
		wantErr string
	}{
		{``, &llm.GenerateOptions{}, ""},
		{`null`, &llm.GenerateOptions{}, ""},
		{`{}`, &llm.GenerateOptions{}, ""},
		{`{"n_predict": 64}`, &llm.GenerateOptions{MaxTokens: 64}, ""},
		{`{"n_predict": 64.0}`, &llm.GenerateOptions{MaxTokens: 64}, ""},
		{`{"n_predict": -1}`, &llm.GenerateOptions{}, ""},
		{`{"n_predict": null, "max_new_tokens": 9}`, &llm.GenerateOptions{MaxTokens: 9}, ""},
		{`{"max_tokens": 7}`, &llm.GenerateOptions{MaxTokens: 7}, ""},
		{`{"temperature": 0, "top_p": 0.9, "seed": 42, "repeat_penalty": 1.1}`,
			&llm.GenerateOptions{Temperature: ptr(0.0), TopP: ptr(0.9), Seed: ptr(int64(42)), RepeatPenalty: ptr(1.1)}, ""},
		{`{"stop_sequences": ["a", "b"]}`, &llm.GenerateOptions{Stop: []string{"a", "b"}}, ""},
		{`{"system": "s", "images": ["x"], "stream": true}`, &llm.GenerateOptions{System: "s"}, ""},
		{`{"n_predict": "64"}`, nil, "n_predict must be an integer"},
		{`{"temperature": "hot"}`, nil, "temperature must be a number"},
		{`{"n_predict": 6.5}`, nil, "n_predict must be an integer"},
		{`{"top_k": 1e300}`, nil, "top_k must be an integer"},
		{`{"stop": 5}`, nil, "stop must be a string or a list of strings"},
		{`{"system_prompt": 1}`, nil, "system_prompt must be a string"},
		{`[1]`, nil, "not a JSON object"},
	}
	for _, tt := range tests {
		got, err := llm.ParseGenerateOptions(json.RawMessage(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in, base, model, wantErr string
	}{
		{"http://localhost:8080/v1", "http://localhost:8080/v1", "", ""},
		{"http://localhost:8080/v1/", "http://localhost:8080/v1", "", ""},
		{"http://localhost:8080", "http://localhost:8080/v1", "", ""},
		{"http://localhost:11434/v1#qwen2.5:7b", "http://localhost:11434/v1", "qwen2.5:7b", ""},
		{"https://api.openai.com/v1/chat/completions#gpt-4o-mini", "https://api.openai.com/v1", "gpt-4o-mini", ""},
		{"https://example.com/openai/deployments/x?api-version=1#m", "https://example.com/openai/deployments/x?api-version=1", "m", ""},
		{" http://h/api/v1# m ", "http://h/api/v1", "m", ""},
		{"localhost:8080/v1", "", "", "must start with http"},
		{"ftp://h/v1", "", "", "must start with http"},
		{"http:///v1", "", "", "no host"},
		{"", "", "", "not a URL"},
		{"http://u:pw@h/v1%zz", "", "", "not a URL"},
	}
	for _, tt := range tests {
		base, model, err := llm.ParseEndpoint(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err = %v, want %q", tt.in, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("%q: the error shows the password: %v", tt.in, err)
			}
			continue
		}
		if err != nil || base != tt.base || model != tt.model {
			t.Errorf("%q = %q, %q, %v; want %q, %q", tt.in, base, model, err, tt.base, tt.model)
		}
	}
}

func TestAPIKeyFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := llm.APIKeyFromEnv(env(map[string]string{"LCP_API_KEY": "a", "OPENAI_API_KEY": "b"})); got != "a" {
		t.Errorf("got %q, want a", got)
	}
	if got := llm.APIKeyFromEnv(env(map[string]string{"LCP_API_KEY": " ", "OPENAI_API_KEY": "b"})); got != "b" {
		t.Errorf("got %q, want b", got)
	}
	if got := llm.APIKeyFromEnv(env(nil)); got != "" {
		t.Errorf("got %q, want none", got)
	}
}

func TestModels(t *testing.T) {
	srv := llmtest.New(t)
	srv.Models = []string{"a", "b"}
	got, err := srv.Client().Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, got); diff != "" {
		t.Errorf("models mismatch (-want +got):\n%s", diff)
	}
}

func TestMessageJSON(t *testing.T) {
	tests := []struct {
		msg  llm.Message
		want string
	}{
		{llm.User("hi"), `{"role":"user","content":"hi"}`},
		{llm.Assistant(""), `{"role":"assistant","content":""}`},
		{llm.Message{Role: "assistant", Content: "x", ToolCalls: []llm.ToolCall{llmtest.Call("1", "f", "{}")}},
			`{"role":"assistant","content":"x","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]}`},
		{llm.ToolResult("1", "out"), `{"role":"tool","content":"out","tool_call_id":"1"}`},
		{llm.Message{Role: "user", Name: "ada", Content: "x"}, `{"role":"user","content":"x","name":"ada"}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.msg)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("got  %s\nwant %s", b, tt.want)
		}
		var back llm.Message
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.msg, back); diff != "" {
			t.Errorf("round trip mismatch (-want +got):\n%s", diff)
		}
	}
}
