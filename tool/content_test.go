package tool

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

// TestContentJSON checks that every block type reads and writes MCP's
// shape, and survives the round trip.
func TestContentJSON(t *testing.T) {
	tests := []struct {
		name string
		json string
		want Content
	}{
		{"text", `{"type":"text","text":"hi"}`, TextContent("hi")},
		{"empty text", `{"type":"text","text":""}`, TextContent("")},
		{"image", `{"type":"image","data":"iVBORw==","mimeType":"image/png"}`, ImageContent([]byte{0x89, 'P', 'N', 'G'}, "image/png")},
		{"audio", `{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}`, AudioContent([]byte("RIFF"), "audio/wav")},
		{"text resource", `{"type":"resource","resource":{"uri":"test://r","mimeType":"text/plain","text":"doc"}}`, ResourceContent("test://r", "text/plain", "doc")},
		{"blob resource", `{"type":"resource","resource":{"uri":"test://b","mimeType":"application/octet-stream","blob":"AAE="}}`, BlobContent("test://b", "application/octet-stream", []byte{0, 1})},
		{"empty blob", `{"type":"resource","resource":{"uri":"test://e","blob":""}}`, BlobContent("test://e", "", nil)},
		{"link", `{"type":"resource_link","mimeType":"text/plain","uri":"file:///a.txt","name":"a.txt","title":"A","description":"the a","size":3}`,
			Content{Type: ContentResourceLink, URI: "file:///a.txt", Name: "a.txt", Title: "A", Description: "the a", MIMEType: "text/plain", Size: ptr(int64(3))}},
		{"annotations and meta", `{"type":"text","text":"x","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":"v"}}`,
			Content{Type: ContentText, Text: "x", Annotations: &ContentAnnotations{Audience: []string{"user"}, Priority: ptr(0.5)}, Meta: map[string]any{"k": "v"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Content
			if err := json.Unmarshal([]byte(tt.json), &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Fatalf("mismatch (-want +got):\n%s", d)
			}
			out, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.json {
				t.Errorf("marshal = %s\nwant      %s", out, tt.json)
			}
		})
	}
}

func TestContentErrors(t *testing.T) {
	tests := []struct{ json, want string }{
		{`{"type":"video","data":"AA=="}`, `unknown content type "video"`},
		{`{"text":"no type"}`, `needs a "type"`},
		{`{"type":"image","mimeType":"image/png"}`, `needs "data"`},
		{`{"type":"image","data":"!!","mimeType":"image/png"}`, `not base64`},
		{`{"type":"image","data":"AA=="}`, `needs a mimeType`},
		{`{"type":"text"}`, `needs "text"`},
		{`{"type":"resource","uri":"x"}`, `needs "resource"`},
		{`{"type":"resource","resource":{"uri":"x"}}`, `"text" or "blob"`},
		{`{"type":"resource","resource":{"text":"t"}}`, `needs a uri`},
		{`{"type":"resource_link","name":"x"}`, `needs a uri`},
		{`"text"`, `must be an object`},
	}
	for _, tt := range tests {
		var c Content
		err := json.Unmarshal([]byte(tt.json), &c)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.json, err, tt.want)
		}
	}
	if _, err := ParseContent(json.RawMessage(`[{"type":"text","text":"a"},{"type":"video"}]`)); err == nil || !strings.Contains(err.Error(), "content block 1") {
		t.Errorf("ParseContent error = %v, want it to name block 1", err)
	}
	if _, err := ParseContent(json.RawMessage(`{"type":"text","text":"a"}`)); err == nil {
		t.Error("ParseContent of an object: no error")
	}
	if _, err := json.Marshal(&Result{Success: true, StatusCode: 200, Content: []Content{{Type: "video"}}}); err == nil {
		t.Error("marshalling a result with an unknown block: no error")
	}
}

func TestTextOfAndPlaceholders(t *testing.T) {
	img := ImageContent(make([]byte, 68), "image/png")
	tests := []struct {
		blocks []Content
		want   string
	}{
		{[]Content{TextContent("a"), img, TextContent("b")}, "a\nb"},
		{[]Content{img}, "[image image/png, 68 bytes]"},
		{[]Content{ResourceContent("test://r", "text/plain", "doc"), img}, "doc"},
		{[]Content{BlobContent("test://b", "image/png", make([]byte, 5)), ResourceLink("file:///x", "x")},
			"[resource test://b, image/png, 5 bytes]\n[resource link file:///x]"},
		{[]Content{AudioContent(make([]byte, 44), "audio/wav")}, "[audio audio/wav, 44 bytes]"},
	}
	for _, tt := range tests {
		if got := TextOf(tt.blocks); got != tt.want {
			t.Errorf("TextOf = %q, want %q", got, tt.want)
		}
	}
}

// TestNormalizeContent checks the Python result convention: ContentKey
// carries the blocks, the contract's own keys keep their meaning.
func TestNormalizeContent(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		success bool
		output  string
		blocks  int
		errText string
	}{
		{"blocks only", `{"_lcp_content":[{"type":"text","text":"hi"},{"type":"image","data":"AA==","mimeType":"image/png"}]}`, true, `"hi"`, 2, ""},
		{"image only", `{"_lcp_content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, true, `"[image image/png, 1 bytes]"`, 1, ""},
		{"with output", `{"output":"see the chart","_lcp_content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, true, `"see the chart"`, 1, ""},
		{"content keeps its contract meaning", `{"content":"the text","_lcp_content":[{"type":"text","text":"x"}]}`, true, `"the text"`, 1, ""},
		{"plain content key", `{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, true, `[{"type":"image","data":"AA==","mimeType":"image/png"}]`, 0, ""},
		{"other keys stay the output", `{"count":3,"_lcp_content":[{"type":"text","text":"x"}]}`, true, `{"count":3}`, 1, ""},
		{"null", `{"output":"x","_lcp_content":null}`, true, `"x"`, 0, ""},
		{"failure with blocks", `{"success":false,"error":"bad","_lcp_content":[{"type":"text","text":"details"}]}`, false, `"details"`, 1, "bad"},
		{"unknown block", `{"output":"x","_lcp_content":[{"type":"video","data":"AA=="}]}`, false, "", 0, `content block 0: unknown content type "video"`},
		{"not a list", `{"_lcp_content":"oops"}`, false, "", 0, "must be a JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Normalize(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if res.Success != tt.success {
				t.Fatalf("success = %v, want %v (error %q)", res.Success, tt.success, res.Error)
			}
			if tt.errText != "" && !strings.Contains(res.Error, tt.errText) {
				t.Errorf("error = %q, want it to contain %q", res.Error, tt.errText)
			}
			if tt.output != "" && string(res.Output) != tt.output {
				t.Errorf("output = %s, want %s", res.Output, tt.output)
			}
			if len(res.Content) != tt.blocks {
				t.Errorf("%d blocks, want %d", len(res.Content), tt.blocks)
			}
			if _, ok := res.Payload[ContentKey]; ok {
				t.Errorf("%s left in the payload", ContentKey)
			}
		})
	}
}

func TestResultJSONCarriesContent(t *testing.T) {
	in := ContentResult(TextContent("a chart"), ImageContent([]byte{1, 2, 3}, "image/png"))
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_lcp_content":[{"type":"text","text":"a chart"},{"type":"image","data":"AQID","mimeType":"image/png"}],"output":"a chart","success":true,"status_code":200}`
	if string(raw) != want {
		t.Fatalf("marshal = %s\nwant      %s", raw, want)
	}
	var back Result
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in.Content, back.Content); d != "" {
		t.Errorf("content mismatch (-want +got):\n%s", d)
	}
	if len(back.Payload) != 0 {
		t.Errorf("payload = %v, want none", back.Payload)
	}
	if err := json.Unmarshal([]byte(`{"output":1,"_lcp_content":[{"type":"nope"}]}`), &back); err == nil {
		t.Error("unmarshalling a result with a bad block: no error")
	}
}

func TestNormalizeValueContent(t *testing.T) {
	res, err := NormalizeValue(ImageContent([]byte{1}, "image/png"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || len(res.Content) != 1 || string(res.Output) != `"[image image/png, 1 bytes]"` {
		t.Errorf("got %+v", res)
	}
	res, err = NormalizeValue([]Content{{Type: "hologram"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || !strings.Contains(res.Error, "hologram") {
		t.Errorf("an unknown block: success %v, error %q", res.Success, res.Error)
	}
}

func FuzzParseContent(f *testing.F) {
	for _, s := range []string{
		`[{"type":"text","text":"a"}]`,
		`[{"type":"image","data":"AA==","mimeType":"image/png"}]`,
		`[{"type":"resource","resource":{"uri":"u","blob":"AAE"}}]`,
		`[{"type":"resource_link","uri":"u","size":-1}]`,
		`[{"type":"x"}]`, `[]`, `null`, `[1]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		blocks, err := ParseContent(data)
		if err != nil {
			return
		}
		// What was read is carried: it writes and reads back the same.
		r := &Result{Success: true, StatusCode: 200, Output: json.RawMessage(`null`), Content: blocks}
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal of parsed blocks: %v", err)
		}
		var back Result
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatalf("read back %s: %v", raw, err)
		}
		if len(back.Content) != len(blocks) {
			t.Fatalf("%d blocks read back, want %d", len(back.Content), len(blocks))
		}
	})
}
