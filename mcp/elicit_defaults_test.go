package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// An accepted form carries the defaults of the fields the person left
// out (SEP-1034); what the person gave is kept.
func TestElicitationAnswerHasDefaults(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","default":"John Doe"},
		"age":{"type":"integer","default":30},
		"score":{"type":"number","default":95.5},
		"status":{"type":"string","enum":["active","inactive"],"default":"active"},
		"verified":{"type":"boolean","default":true},
		"note":{"type":"string"}}}`)
	in, err := fromElicit(&sdk.ElicitParams{Message: "m", RequestedSchema: schema})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		given, want map[string]any
	}{
		{map[string]any{}, map[string]any{"name": "John Doe", "age": float64(30), "score": 95.5, "status": "active", "verified": true}},
		{map[string]any{"name": "Ann", "verified": false, "note": "hi"}, map[string]any{"name": "Ann", "age": float64(30), "score": 95.5, "status": "active", "verified": false, "note": "hi"}},
	} {
		res := in.result(in.req.Submitted(c.given))
		if res.Action != actionAccept {
			t.Fatalf("action %q", res.Action)
		}
		if diff := cmp.Diff(c.want, res.Content); diff != "" {
			t.Errorf("content mismatch (-want +got):\n%s", diff)
		}
	}
	if res := in.result(tool.Response{Action: tool.Decline}); res.Action != actionDecline || res.Content != nil {
		t.Errorf("a declined form got %+v", res)
	}
}

// sep1330Form is the form of the conformance suite's enum scenario, with
// typed fields beside it.
const sep1330Form = `{"type":"object","properties":{
	"age":{"type":"integer","default":30},
	"score":{"type":"number"},
	"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
	"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"}]},
	"legacyEnum":{"type":"string","enum":["opt1","opt2"],"enumNames":["Option One","Option Two"]},
	"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
	"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"}]}}},
	"required":["age"]}`

// TestTypedFormAnswersReachTheServer answers a server's form the way the
// terminal does (numbers as json.Number, several choices as a list), and
// checks what the server gets: numbers as numbers, lists as lists — not
// strings refused by the schema check, not a silent decline.
func TestTypedFormAnswersReachTheServer(t *testing.T) {
	got := make(chan *sdk.ElicitResult, 1)
	server := sdk.NewServer(&sdk.Implementation{Name: "form-server", Version: "1"}, nil)
	server.AddTool(&sdk.Tool{Name: "fill", Description: "Asks for a form.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Fill this in", RequestedSchema: json.RawMessage(sep1330Form)})
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
			}
			got <- res
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "action=" + res.Action}}}, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(hs.Close)
	c := newClient(t, []ServerConfig{{Alias: "forms", Type: TypeHTTP, URL: hs.URL}}, nil)

	var asked *tool.Request
	res, err := tool.Call(context.Background(), c, "forms::fill", nil, &tool.CallOptions{
		Interact: func(_ context.Context, r *tool.Request) (any, bool) {
			asked = r
			return map[string]any{"age": json.Number("5"), "score": json.Number("88.5"), "titledSingle": "value2",
				"legacyEnum": "opt1", "untitledMulti": []any{"option1", "option3"}, "titledMulti": []any{"value2"}}, true
		},
	})
	if err != nil || !res.Success || res.Text() != "action=accept" {
		t.Fatalf("fill = %+v, %v", res, err)
	}
	if asked.Kind != tool.KindForm || !strings.Contains(string(asked.Schema), `"enumNames"`) {
		t.Errorf("asked %+v", asked)
	}
	// The fields come in the server's order, not sorted.
	if !strings.HasPrefix(string(asked.Schema), `{"type":"object","properties":{"age":{"type":"integer","default":30},"score"`) {
		t.Errorf("the form's schema lost its order: %s", asked.Schema)
	}
	want := map[string]any{"age": float64(5), "score": 88.5, "titledSingle": "value2", "legacyEnum": "opt1",
		"untitledMulti": []any{"option1", "option3"}, "titledMulti": []any{"value2"}}
	if d := cmp.Diff(want, (<-got).Content); d != "" {
		t.Errorf("the server got (-want +got):\n%s", d)
	}
}

// A single titled choice is a select whose options carry their titles.
func TestTitledChoiceIsASelectWithTitles(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"a","title":"Apple"},{"const":"b","title":"Banana"}]}}}`,
		`{"type":"object","properties":{"c":{"type":"string","enum":["a","b"],"enumNames":["Apple","Banana"]}}}`,
	} {
		in, err := fromElicit(&sdk.ElicitParams{Message: "Pick", RequestedSchema: json.RawMessage(schema)})
		if err != nil {
			t.Fatal(err)
		}
		if r := in.req; r.Kind != tool.KindSelect || strings.Join(r.Options, ",") != "a,b" || strings.Join(r.OptionTitles, ",") != "Apple,Banana" {
			t.Errorf("%s: request = %+v", schema, r)
		}
	}
	in, _ := fromElicit(&sdk.ElicitParams{Message: "Pick", RequestedSchema: json.RawMessage(
		`{"type":"object","properties":{"c":{"type":"string","enum":["a","b"],"default":"b"}}}`)})
	if in.req.Kind != tool.KindSelect || *in.req.Default != "b" || in.req.OptionTitles != nil {
		t.Errorf("an untitled choice: %+v", in.req)
	}
	// Sent by lcp's server, titles travel as enumNames.
	p, err := toElicit(&tool.Request{Kind: tool.KindSelect, Options: []string{"a", "b"}, OptionTitles: []string{"Apple", "Banana"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(p.RequestedSchema)
	if !strings.Contains(string(raw), `"enumNames":["Apple","Banana"]`) {
		t.Errorf("sent schema = %s", raw)
	}
}
