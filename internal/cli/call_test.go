package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lcptools/lcp/agent"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/tool"
)

// A batch line is an envelope: "line" and "tool" beside the result
// object, whose own "line" and "tool" keys stay.
func TestWriteBatchLine(t *testing.T) {
	res := &tool.Result{Success: true, StatusCode: 200, Output: json.RawMessage(`"a<b"`),
		Payload: map[string]json.RawMessage{"line": json.RawMessage(`42`), "tool": json.RawMessage(`"grep"`), "count": json.RawMessage(`1`)}}
	var b bytes.Buffer
	name := "tool_grep"
	if err := writeBatchLine(&b, 3, &name, res); err != nil {
		t.Fatal(err)
	}
	want := `{"line":3,"tool":"tool_grep","result":{"count":1,"line":42,"tool":"grep","output":"a<b","success":true,"status_code":200}}` + "\n"
	if b.String() != want {
		t.Errorf("got  %s\nwant %s", b.String(), want)
	}
	b.Reset()
	if err := writeBatchLine(&b, 1, nil, badLine(1, "bad")); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), `{"line":1,"result":{"output":"batch line 1: bad"`) {
		t.Errorf("a line without a tool: %s", b.String())
	}
}

// lcp chat shows a refused tool call as a refusal.
func TestChatShowsRejection(t *testing.T) {
	var stderr bytes.Buffer
	env := &Env{Stdout: &bytes.Buffer{}, Stderr: &stderr}
	p := &chatPrinter{env: env, live: newLive(env, false)}
	res := tool.Failure("The operator rejected this action: not on Fridays")
	res.Rejection = &tool.Rejection{Reason: "not on Fridays"}
	call := &llm.ToolCall{Function: llm.FunctionCall{Name: "tool_execute_shell_command"}}
	p.event(agent.Event{Kind: agent.EventToolResult, Call: call, Result: res})
	p.event(agent.Event{Kind: agent.EventToolResult, Call: call, Result: tool.Failure("disk full")})
	want := "<- tool_execute_shell_command: Rejected by the operator: not on Fridays\n<- tool_execute_shell_command failed (500): disk full\n"
	if stderr.String() != want {
		t.Errorf("got %q, want %q", stderr.String(), want)
	}
}

func TestRestates(t *testing.T) {
	for _, tt := range []struct {
		text, reason string
		want         bool
	}{
		{"The operator rejected this action: not now", "not now", true},
		{"Not dropped: not now.", "not now", true},
		{"Not dropped: Not now.", "not now", false},
		{"not applied (not now): a.txt changed", "not now", false},
		{"Refused.", "", false},
	} {
		if got := restates(tt.text, tt.reason); got != tt.want {
			t.Errorf("restates(%q, %q) = %v", tt.text, tt.reason, got)
		}
	}
}
