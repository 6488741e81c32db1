package llm_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/llm/llmtest"
)

func TestReadStream(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   llm.Message
		finish string
	}{
		{
			name: "crlf, comments, other fields",
			stream: ": keep-alive\r\nevent: message\r\nid: 1\r\n" +
				`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}` + "\r\n\r\n" +
				`data:{"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}` + "\r\n\r\n" +
				"data: [DONE]\r\n\r\n",
			want:   llm.Assistant("Hi there"),
			finish: "stop",
		},
		{
			name: "data split over lines",
			stream: "data: {\"choices\":[{\"index\":0,\n" +
				"data: \"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\n",
			want:   llm.Assistant("x"),
			finish: "stop",
		},
		{
			name: "ends without DONE after a finish reason, no final newline",
			stream: `data: {"choices":[{"index":0,"delta":{"content":"y"},"finish_reason":"length"}]}` + "\n\n" +
				`data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
			want:   llm.Assistant("y"),
			finish: "length",
		},
		{
			name: "tool calls without index, other choices ignored",
			stream: `data: {"choices":[{"index":1,"delta":{"content":"ignored"}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"q\":"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":{"r":2}}}]}}]}` + "\n\n" +
				"data: [DONE]\n\n",
			want: llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{
				llmtest.Call("a", "f", `{"q":1}`), llmtest.Call("b", "g", `{"r":2}`),
			}},
		},
		{
			name: "interleaved indexed tool calls",
			stream: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"["}},{"index":1,"id":"b","function":{"name":"g","arguments":"{"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"}"}},{"index":0,"function":{"arguments":"]"}}]}}]}` + "\n\n" +
				"data: [DONE]\n\n",
			want: llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{
				llmtest.Call("a", "f", `[]`), llmtest.Call("b", "g", `{}`),
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time, so that every line crosses reads.
			resp, err := llm.ReadStream(iotest.OneByteReader(strings.NewReader(tt.stream)), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp.Message()); diff != "" {
				t.Errorf("message mismatch (-want +got):\n%s", diff)
			}
			if resp.FinishReason() != tt.finish {
				t.Errorf("finish reason %q, want %q", resp.FinishReason(), tt.finish)
			}
		})
	}
}

func TestReadStreamReaderError(t *testing.T) {
	boom := errors.New("boom")
	_, err := llm.ReadStream(iotest.ErrReader(boom), nil)
	if !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
}

func TestReadStreamLongLine(t *testing.T) {
	line := "data: " + strings.Repeat("x", 9<<20)
	_, err := llm.ReadStream(strings.NewReader(line), nil)
	var re *llm.ResponseError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("err = %v", err)
	}
}

// FuzzReadStream feeds arbitrary event streams to the reader: it must
// never panic, and whatever it accepts must be an assistant message whose
// text is what the deltas said.
func FuzzReadStream(f *testing.F) {
	f.Add("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	f.Add("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":3,\"id\":\"x\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\ndata: [DONE]\n")
	f.Add("data: {\"error\":\"x\"}\n\n")
	f.Add(": c\r\ndata\r\n\r\ndata: [DONE]")
	f.Add("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"p\"}]}}]}\n\ndata: [DONE]\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		var text strings.Builder
		resp, err := llm.ReadStream(strings.NewReader(s), func(d llm.Delta) { text.WriteString(d.Content) })
		if err != nil {
			return
		}
		m := resp.Message()
		if m.Role != llm.RoleAssistant {
			t.Fatalf("role %q accepted", m.Role)
		}
		if m.Content != text.String() {
			t.Fatalf("content %q, deltas %q", m.Content, text.String())
		}
		for _, c := range m.ToolCalls {
			if c.ID == "" || c.Type == "" {
				t.Fatalf("tool call without id or type: %+v", c)
			}
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzMessageJSON decodes arbitrary messages: never a panic, and a decoded
// message encodes and decodes to itself.
func FuzzMessageJSON(f *testing.F) {
	f.Add(`{"role":"assistant","content":null,"tool_calls":[{"id":"1","function":{"name":"f","arguments":{"a":1}}}]}`)
	f.Add(`{"role":"user","content":[{"type":"text","text":"x"}]}`)
	f.Add(`{"role":"tool","content":"x","tool_call_id":"1"}`)
	f.Fuzz(func(t *testing.T, s string) {
		var m llm.Message
		if json.Unmarshal([]byte(s), &m) != nil {
			return
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back llm.Message
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if diff := cmp.Diff(m, back); diff != "" {
			t.Fatalf("round trip of %s (-first +second):\n%s", b, diff)
		}
	})
}

// FuzzParseGenerateOptions: never a panic on what a Python tool sends.
func FuzzParseGenerateOptions(f *testing.F) {
	f.Add(`{"n_predict":128,"temperature":0.2,"stop":["a"]}`)
	f.Add(`{"top_k":1e400}`)
	f.Add(`{"seed":-9007199254740993}`)
	f.Fuzz(func(t *testing.T, s string) {
		opts, err := llm.ParseGenerateOptions(json.RawMessage(s))
		if err == nil && opts.MaxTokens < 0 {
			t.Fatalf("negative MaxTokens from %s", s)
		}
	})
}

// FuzzParseEndpoint: never a panic, and an accepted endpoint parses again
// to itself.
func FuzzParseEndpoint(f *testing.F) {
	f.Add("http://localhost:8080/v1#m")
	f.Add("https://u:p@h/x/chat/completions?q=1#")
	f.Fuzz(func(t *testing.T, s string) {
		base, model, err := llm.ParseEndpoint(s)
		if err != nil {
			return
		}
		again, _, err := llm.ParseEndpoint(base)
		if err != nil || again != base {
			t.Fatalf("%q -> %q (model %q) -> %q, %v", s, base, model, again, err)
		}
	})
}
