package binding

import (
	"encoding/json"
	"testing"
)

func TestContentNotesDropped(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, ``},
		{`[{"path":"/_lcp_content/1/data","from":"bytes","to":"base64"}]`, ``},
		{`[{"path":"/_lcp_content/0/resource/blob","from":"bytes","to":"base64"},{"path":"/raw","from":"bytes","to":"base64"}]`,
			`[{"path":"/raw","from":"bytes","to":"base64"}]`},
		{`[{"path":"/_lcp_content/0/text","from":"bytes","to":"base64"}]`, `[{"path":"/_lcp_content/0/text","from":"bytes","to":"base64"}]`},
		{`[{"path":"/_lcp_content/0/data","from":"set","to":"list"}]`, `[{"path":"/_lcp_content/0/data","from":"set","to":"list"}]`},
		{`not json`, `not json`},
	}
	for _, tt := range tests {
		if got := string(contentNotesDropped(json.RawMessage(tt.in))); got != tt.want {
			t.Errorf("contentNotesDropped(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
