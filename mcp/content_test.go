package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

var (
	png  = []byte("\x89PNG\r\n\x1a\nfake")
	wav  = []byte("RIFF....WAVEfmt ")
	yes  = true
	no   = false
	half = 0.5
)

// richInventory serves native tools that return every kind of block, and
// one annotated tool.
func richInventory(t *testing.T) *native.Toolset {
	t.Helper()
	blocks := func(name string, v any) *native.Tool {
		nt, err := native.Func(tool.Info{Name: name, Description: "Returns " + name + "."}, func(context.Context, map[string]any) (any, error) {
			return v, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return nt
	}
	annotated, err := native.Func(tool.Info{Name: "peek", Title: "Peek", Description: "Reads without changing anything.",
		Annotations: &tool.Annotations{Title: "Peek at a file", ReadOnlyHint: &yes, DestructiveHint: &no, OpenWorldHint: &no}},
		func(context.Context, map[string]any) (any, error) { return "peeked", nil })
	if err != nil {
		t.Fatal(err)
	}
	link := tool.ResourceLink("file:///tmp/report.pdf", "report.pdf")
	link.MIMEType, link.Size = "application/pdf", new(int64)
	*link.Size = 1234
	text := tool.TextContent("for the user")
	text.Annotations = &tool.ContentAnnotations{Audience: []string{"user"}, Priority: &half}
	ts, err := native.New(nil,
		blocks("image", tool.ImageContent(png, "image/png")),
		blocks("audio", tool.AudioContent(wav, "audio/wav")),
		blocks("resource", tool.ResourceContent("test://doc", "text/plain", "a document")),
		blocks("blob", tool.BlobContent("test://bin", "application/octet-stream", []byte{0, 1, 2})),
		blocks("mixed", []tool.Content{tool.TextContent("Here it is:"), tool.ImageContent(png, "image/png"), link, text}),
		blocks("injected", map[string]any{"output": "done", "prompt_injection": "Show it.",
			tool.ContentKey: []any{map[string]any{"type": "text", "text": "done"}, map[string]any{"type": "image", "data": "AAE=", "mimeType": "image/gif"}}}),
		blocks("failed", &tool.Result{Success: false, StatusCode: 500, Error: "no chart", Output: json.RawMessage(`"no chart"`),
			Content: []tool.Content{tool.TextContent("no chart"), tool.ImageContent(png, "image/png")}}),
		blocks("bogus", &tool.Result{Success: true, StatusCode: 200, Output: json.RawMessage(`"x"`), Content: []tool.Content{{Type: "hologram"}}}),
		annotated,
	)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestContentIsCarriedUnchanged serves rich results and reads them with
// the Go SDK's client (what MCP clients get) and with lcp's own client
// (what an inventory gets of an upstream server).
func TestContentIsCarriedUnchanged(t *testing.T) {
	srv := NewServer(richInventory(t), nil)
	t.Cleanup(func() { srv.Close() })
	url := serveHTTP(t, srv, nil)
	cs := goClient(t, &sdk.StreamableClientTransport{Endpoint: url}, "2025-11-25", nil, nil, nil)

	kinds := func(res *sdk.CallToolResult) string {
		var k []string
		for _, c := range res.Content {
			raw, _ := json.Marshal(c)
			var w struct{ Type string }
			_ = json.Unmarshal(raw, &w)
			k = append(k, w.Type)
		}
		return strings.Join(k, ",")
	}
	tests := []struct {
		tool, kinds string
		isError     bool
	}{
		{"image", "image", false},
		{"audio", "audio", false},
		{"resource", "resource", false},
		{"blob", "resource", false},
		{"mixed", "text,image,resource_link,text", false},
		{"injected", "text,image,text", false},
		{"failed", "text,image", true},
		{"bogus", "text", true},
	}
	for _, tt := range tests {
		res := call(t, cs, tt.tool, map[string]any{})
		if got := kinds(res); got != tt.kinds || res.IsError != tt.isError {
			t.Errorf("%s: blocks %s (isError %v), want %s (isError %v)", tt.tool, got, res.IsError, tt.kinds, tt.isError)
		}
	}
	if img := call(t, cs, "image", nil).Content[0].(*sdk.ImageContent); string(img.Data) != string(png) || img.MIMEType != "image/png" {
		t.Errorf("image = %q %s", img.Data, img.MIMEType)
	}
	if r := call(t, cs, "resource", nil).Content[0].(*sdk.EmbeddedResource).Resource; r.URI != "test://doc" || r.Text != "a document" || r.MIMEType != "text/plain" {
		t.Errorf("resource = %+v", r)
	}
	if b := call(t, cs, "blob", nil).Content[0].(*sdk.EmbeddedResource).Resource; string(b.Blob) != "\x00\x01\x02" {
		t.Errorf("blob = %+v", b)
	}
	if msg := textOf(t, call(t, cs, "bogus", nil)); !strings.Contains(msg, `unknown content type "hologram"`) {
		t.Errorf("bogus: %q", msg)
	}

	// Through lcp's client, the blocks arrive as they left.
	c := newClient(t, []ServerConfig{{Alias: "up", Type: TypeHTTP, URL: url}}, nil)
	local, _ := tool.Call(context.Background(), srv.ts, "mixed", nil, nil)
	remote, err := tool.Call(context.Background(), c, "up::mixed", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(local.Content, remote.Content); d != "" {
		t.Errorf("blocks through lcp's client: mismatch (-want +got):\n%s", d)
	}
	if remote.Text() != "Here it is:\nfor the user" {
		t.Errorf("what the LLM reads: %q", remote.Text())
	}
	img, err := tool.Call(context.Background(), c, "up::image", nil, nil)
	if err != nil || len(img.Content) != 1 || img.Text() != "[image image/png, 12 bytes]" {
		t.Errorf("image through lcp's client: %+v, %v", img, err)
	}
}

// TestAnnotationsTravel checks that a tool's title and annotations go out
// of lcp's server and come back into an inventory through lcp's client.
func TestAnnotationsTravel(t *testing.T) {
	srv := NewServer(richInventory(t), nil)
	t.Cleanup(func() { srv.Close() })
	url := serveHTTP(t, srv, nil)

	cs := goClient(t, &sdk.StreamableClientTransport{Endpoint: url}, "", nil, nil, nil)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var peek *sdk.Tool
	for _, tl := range list.Tools {
		if tl.Name == "peek" {
			peek = tl
		}
	}
	if peek == nil || peek.Title != "Peek" || peek.Annotations == nil || !peek.Annotations.ReadOnlyHint ||
		peek.Annotations.DestructiveHint == nil || *peek.Annotations.DestructiveHint || peek.Annotations.Title != "Peek at a file" {
		t.Fatalf("peek as served: %+v", peek)
	}

	c := newClient(t, []ServerConfig{{Alias: "up", Type: TypeHTTP, URL: url}}, nil)
	infos, err := c.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range infos {
		if i.Name != "up::peek" {
			continue
		}
		want := &tool.Annotations{Title: "Peek at a file", ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &no, OpenWorldHint: &no}
		if d := cmp.Diff(want, i.Annotations); d != "" || i.Title != "Peek" {
			t.Errorf("peek in the inventory (title %q): mismatch (-want +got):\n%s", i.Title, d)
		}
		return
	}
	t.Fatal("up::peek is not in the inventory")
}
