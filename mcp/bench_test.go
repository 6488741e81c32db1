package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// rawSession is a minimal streamable HTTP client: what the benchmarks
// measure is the server.
type rawSession struct {
	url, id string
	hc      *http.Client
}

func (s *rawSession) post(b *testing.B, msg string) string {
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if s.id == "" {
		s.id = resp.Header.Get("Mcp-Session-Id")
	}
	return string(body)
}

func benchHTTP(b *testing.B, h http.Handler) {
	hs := httptest.NewServer(h)
	defer hs.Close()
	b.RunParallel(func(pb *testing.PB) {
		s := &rawSession{url: hs.URL, hc: hs.Client()}
		s.post(b, initBody)
		s.post(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		n := 0
		for pb.Next() {
			n++
			out := s.post(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":%d}}}`, n, n))
			if !strings.Contains(out, fmt.Sprintf(`"text":"%d"`, n+1)) {
				b.Fatalf("answer %s", out)
			}
		}
	})
}

var addSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)

// BenchmarkServerHTTPCall is a tools/call of a trivial native tool through
// lcp's server over streamable HTTP.
func BenchmarkServerHTTPCall(b *testing.B) {
	add, _ := native.Func(tool.Info{Name: "add", InputSchema: addSchema}, func(ctx context.Context, args map[string]any) (any, error) {
		x, _ := args["a"].(json.Number).Int64()
		y, _ := args["b"].(json.Number).Int64()
		return x + y, nil
	})
	ts, _ := native.New(nil, add)
	srv := NewServer(ts, nil)
	defer srv.Close()
	benchHTTP(b, srv.Handler(nil))
}

// BenchmarkSDKHTTPCall is the same call on a bare SDK server, the floor
// of what lcp's server can do.
func BenchmarkSDKHTTPCall(b *testing.B) {
	s := sdk.NewServer(&sdk.Implementation{Name: "bare", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "add", InputSchema: addSchema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in struct{ A, B int64 }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil
	})
	benchHTTP(b, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
}

// BenchmarkServerHTTPCall2026 is BenchmarkServerHTTPCall on the
// stateless wire of 2026-07-28: no session, the version and client
// capabilities in each request's _meta, the Mcp-* headers.
func BenchmarkServerHTTPCall2026(b *testing.B) {
	add, _ := native.Func(tool.Info{Name: "add", InputSchema: addSchema}, func(ctx context.Context, args map[string]any) (any, error) {
		x, _ := args["a"].(json.Number).Int64()
		y, _ := args["b"].(json.Number).Int64()
		return x + y, nil
	})
	ts, _ := native.New(nil, add)
	srv := NewServer(ts, nil)
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler(nil))
	defer hs.Close()
	b.RunParallel(func(pb *testing.PB) {
		hc := hs.Client()
		n := 0
		for pb.Next() {
			n++
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":%d},`+
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, n, n)
			req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(msg))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "add")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(out), fmt.Sprintf(`"text":"%d"`, n+1)) {
				b.Fatalf("answer %s", out)
			}
		}
	})
}
