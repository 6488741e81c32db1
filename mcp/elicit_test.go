package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

func TestFromElicit(t *testing.T) {
	def := "green"
	cases := []struct {
		name   string
		params string
		want   tool.Request
		answer tool.Response
		result sdk.ElicitResult
	}{
		{
			name:   "single string is text",
			params: `{"message":"Who are you?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","title":"Name","description":"Your name","default":"Ada"}}}}`,
			want:   tool.Request{Kind: tool.KindText, Title: "Name", Prompt: "Who are you?\n\nYour name", Default: ptr("Ada")},
			answer: tool.Response{Action: tool.Submit, Value: "Grace"},
			result: sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}},
		},
		{
			name:   "enum is select",
			params: `{"message":"Colour?","requestedSchema":{"type":"object","properties":{"c":{"type":"string","enum":["red","green"],"default":"green"}}}}`,
			want:   tool.Request{Kind: tool.KindSelect, Prompt: "Colour?", Options: []string{"red", "green"}, Default: &def},
			answer: tool.Response{Action: tool.Submit, Value: "red"},
			result: sdk.ElicitResult{Action: "accept", Content: map[string]any{"c": "red"}},
		},
		{
			name:   "titled oneOf is select",
			params: `{"message":"Hero?","requestedSchema":{"type":"object","properties":{"h":{"type":"string","oneOf":[{"const":"h1","title":"Superman"},{"const":"h2","title":"Batman"}],"default":"nope"}}}}`,
			want:   tool.Request{Kind: tool.KindSelect, Prompt: "Hero?", Options: []string{"h1", "h2"}, OptionTitles: []string{"Superman", "Batman"}},
			answer: tool.Response{Action: tool.Decline},
			result: sdk.ElicitResult{Action: "decline"},
		},
		{
			name:   "several fields are a form",
			params: `{"message":"Details","requestedSchema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}}`,
			want:   tool.Request{Kind: tool.KindForm, Prompt: "Details", Schema: json.RawMessage(`{"properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"],"type":"object"}`), Validate: true},
			answer: tool.Response{Action: tool.Submit, Value: map[string]any{"a": "x", "b": 2}},
			result: sdk.ElicitResult{Action: "accept", Content: map[string]any{"a": "x", "b": 2}},
		},
		{
			name:   "a boolean alone is a form",
			params: `{"message":"OK?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}`,
			want:   tool.Request{Kind: tool.KindForm, Prompt: "OK?", Schema: json.RawMessage(`{"properties":{"ok":{"type":"boolean"}},"type":"object"}`), Validate: true},
			answer: tool.Response{Action: tool.Cancel},
			result: sdk.ElicitResult{Action: "cancel"},
		},
		{
			name:   "url mode asks to open the link",
			params: `{"mode":"url","message":"Authorize","url":"https://auth.example/x","elicitationId":"e1"}`,
			want:   tool.Request{Kind: tool.KindConfirm, Title: "Open a link", Prompt: "Authorize", Label: "open https://auth.example/x", Source: "https://auth.example/x"},
			answer: tool.Response{Action: tool.Submit, Value: tool.Always},
			result: sdk.ElicitResult{Action: "accept"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p sdk.ElicitParams
			if err := json.Unmarshal([]byte(tc.params), &p); err != nil {
				t.Fatal(err)
			}
			in, err := fromElicit(&p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, *in.req); diff != "" {
				t.Errorf("request mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.result, *in.result(tc.answer)); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestToElicitRoundTrip(t *testing.T) {
	// What lcp's server sends is what lcp's client reads back.
	def := "b"
	for _, r := range []*tool.Request{
		{Kind: tool.KindText, Title: "Name", Prompt: "Your name?"},
		{Kind: tool.KindSelect, Title: "Pick", Prompt: "One of them", Options: []string{"a", "b"}, Default: &def},
	} {
		p, err := toElicit(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p)
		var back sdk.ElicitParams
		_ = json.Unmarshal(b, &back)
		in, err := fromElicit(&back)
		if err != nil {
			t.Fatal(err)
		}
		if in.req.Kind != r.Kind || in.req.Title != r.Title || !cmp.Equal(in.req.Options, r.Options) || !cmp.Equal(in.req.Default, r.Default) {
			t.Errorf("round trip of %+v gave %+v", r, in.req)
		}
	}
	if _, err := toElicit(&tool.Request{Kind: tool.KindSecret}); err == nil {
		t.Error("a secret was turned into a form")
	}
}

func TestFromResult(t *testing.T) {
	confirm := &tool.Request{ID: "1", Kind: tool.KindConfirm}
	sel := &tool.Request{ID: "2", Kind: tool.KindSelect, Options: []string{"x", "y"}}
	cases := []struct {
		r    *tool.Request
		res  sdk.ElicitResult
		want tool.Response
	}{
		{confirm, sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "always"}}, tool.Response{ID: "1", Action: tool.Submit, Value: tool.Always}},
		{confirm, sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "reject"}}, tool.Response{ID: "1", Action: tool.Decline, Reason: "The user rejected the action."}},
		{confirm, sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "bogus", "reason": "no"}}, tool.Response{ID: "1", Action: tool.Decline, Reason: "no"}},
		{confirm, sdk.ElicitResult{Action: "cancel"}, tool.Response{ID: "1", Action: tool.Decline, Reason: "The user dismissed the approval request."}},
		{sel, sdk.ElicitResult{Action: "accept", Content: map[string]any{"value": "y"}}, tool.Response{ID: "2", Action: tool.Submit, Value: "y"}},
		{sel, sdk.ElicitResult{Action: "accept", Content: map[string]any{"value": "z"}}, tool.Response{ID: "2", Action: tool.Decline, Reason: `The MCP client answered "z", which is not one of the options.`}},
		{sel, sdk.ElicitResult{Action: "cancel"}, tool.Response{ID: "2", Action: tool.Cancel, Reason: "The user dismissed the question."}},
	}
	for i, tc := range cases {
		if diff := cmp.Diff(tc.want, fromResult(tc.r, &tc.res)); diff != "" {
			t.Errorf("case %d mismatch (-want +got):\n%s", i, diff)
		}
	}
}

func FuzzFromElicit(f *testing.F) {
	for _, s := range []string{
		`{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string","enum":["x",1]}}}}`,
		`{"mode":"url","url":"https://x"}`, `{"mode":"url"}`, `{"requestedSchema":[]}`, `{"requestedSchema":{"properties":{"a":null}}}`,
		`{"requestedSchema":{"properties":{"a":{"oneOf":[{"const":2},{}]}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p sdk.ElicitParams
		if json.Unmarshal(data, &p) != nil {
			return
		}
		in, err := fromElicit(&p)
		if err != nil {
			return
		}
		r := in.req
		r.ID = "x"
		if err := r.Check(); err != nil && !strings.Contains(err.Error(), "schema") {
			t.Errorf("fromElicit made an invalid request %+v: %v", r, err)
		}
		for _, resp := range []tool.Response{r.Declined(""), r.Cancelled(""), r.Submitted("v"), r.Submitted(map[string]any{"k": 1}), r.Submitted(tool.Allow)} {
			res := in.result(resp)
			switch res.Action {
			case "accept", "decline", "cancel":
			default:
				t.Errorf("action %q", res.Action)
			}
		}
	})
}

func FuzzSchemaCapture(f *testing.F) {
	f.Add([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\",\"b\":1,\"a\":2}}]}}\n\n"), uint8(7))
	f.Add([]byte("data: {\"inputSchema\"\r\ndata: x\n\n\n"), uint8(1))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"elicitation/create\",\"params\":{\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"b\":{},\"a\":{}}}}}\n\n"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		store := newSchemaStore()
		tee := &sseTee{store: store}
		n := int(chunk%16) + 1
		for i := 0; i < len(data); i += n {
			tee.feed(data[i:min(i+n, len(data))])
		}
		store.captureMessage(data)
	})
}

func TestSSECaptureKeepsKeyOrder(t *testing.T) {
	store := newSchemaStore()
	tee := &sseTee{store: store}
	ev := "id: 1\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"t\",\r\ndata:  \"inputSchema\":{\"type\":\"object\",\"properties\":{\"z\":{},\"a\":{}}}}]}}\r\n\r\n"
	for i := 0; i < len(ev); i += 5 {
		tee.feed([]byte(ev[i:min(i+5, len(ev))]))
	}
	in, _ := store.get("t")
	if string(in) != `{"type":"object","properties":{"z":{},"a":{}}}` {
		t.Errorf("captured %s", in)
	}
}

// A server's form keeps its fields' order through lcp's client.
func TestSSECaptureKeepsFormOrder(t *testing.T) {
	store := newSchemaStore()
	tee := &sseTee{store: store}
	ev := "data: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"z\":{\"type\":\"string\"},\"a\":{\"type\":\"integer\"}}}}}\n\n"
	for i := 0; i < len(ev); i += 7 {
		tee.feed([]byte(ev[i:min(i+7, len(ev))]))
	}
	decoded := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer"}, "z": map[string]any{"type": "string"}}}
	if got := string(store.form(decoded)); got != `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer"}}}` {
		t.Errorf("form = %s", got)
	}
	if store.form(map[string]any{"type": "object"}) != nil {
		t.Error("a form never seen was found")
	}
}
