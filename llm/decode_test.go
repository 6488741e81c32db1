package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecodeResponse feeds arbitrary bodies to the decoder of
// non-streamed responses: never a panic, and an accepted body has an
// assistant message whose tool calls all have an id.
func FuzzDecodeResponse(f *testing.F) {
	f.Add(`{"choices":[{"message":{"role":"assistant","content":"x"}}]}`)
	f.Add(`{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":{"a":[1]}}}]}}],"usage":{"total_tokens":3}}`)
	f.Add(`{"error":{"message":"m","code":429}}`)
	f.Add(`{"choices":[{"message":{"content":[{"type":"text","text":"a"}]}}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		resp, err := decodeResponse([]byte(body))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "llm: malformed response: ") {
				t.Fatalf("error %q is not a *ResponseError's", err)
			}
			return
		}
		m := resp.Message()
		if m.Role != RoleAssistant {
			t.Fatalf("role %q accepted", m.Role)
		}
		for _, c := range m.ToolCalls {
			if c.ID == "" || c.Type == "" {
				t.Fatalf("tool call without id or type: %+v", c)
			}
		}
		if _, err := json.Marshal(resp); err != nil {
			t.Fatal(err)
		}
	})
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		body, msg, typ, code string
	}{
		{`{"error":{"message":"m","type":"t","code":429}}`, "m", "t", "429"},
		{`{"error":{"message":"m","code":"rate_limit"}}`, "m", "", "rate_limit"},
		{`{"error":"plain"}`, "plain", "", ""},
		{`{"error":{"msg":"odd"}}`, `{"error":{"msg":"odd"}}`, "", ""},
		{`{"message":"top"}`, "top", "", ""},
		{`{"detail":"fastapi"}`, "fastapi", "", ""},
		{"line1\nline2\x1b[31m", "line1 line2 [31m", "", ""},
		{strings.Repeat("é", 400), strings.Repeat("é", 250) + "...", "", ""},
		{"\xff\xfe", "\uFFFD", "", ""},
	}
	for _, tt := range tests {
		msg, typ, code := errorMessage([]byte(tt.body))
		if msg != tt.msg || typ != tt.typ || code != tt.code {
			t.Errorf("%q: got %q %q %q, want %q %q %q", tt.body, msg, typ, code, tt.msg, tt.typ, tt.code)
		}
	}
}
