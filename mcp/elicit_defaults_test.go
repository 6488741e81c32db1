package mcp

import (
	"encoding/json"
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
