package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPHTTPInvalidUTF8Argument posts, through lcp mcp --http, a raw
// tools/call body whose string argument holds bytes that are not UTF-8:
// the call is answered, and the library's worker keeps its state (a
// counter keeps counting).
func TestMCPHTTPInvalidUTF8Argument(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	src := "_n = 0\n\n\ndef tool_bump(s: str):\n    \"\"\"Counts its calls.\n\n    Args:\n        s: any text\n    \"\"\"\n    global _n\n    _n += 1\n    return {\"success\": True, \"output\": f\"{_n}:{s}\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "counter.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	o := defaultMCPOptions()
	o.http, o.useHTTP, o.token, o.jsonResponse = "127.0.0.1:0", true, "0123456789abcdef-token", true
	o.inv.tools = []string{dir}
	srv := startMCP(t, o)
	url := srv.URL
	session := ""
	post := func(body []byte) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+o.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			session = s
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, b := post([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)); code != 200 {
		t.Fatalf("initialize: %d %s", code, b)
	}
	post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	call := func(id int, s []byte) string {
		t.Helper()
		body := append([]byte(`{"jsonrpc":"2.0","id":`+string(rune('0'+id))+`,"method":"tools/call","params":{"name":"tool_bump","arguments":{"s":"`), s...)
		body = append(body, `"}}}`...)
		code, b := post(body)
		var r struct {
			Result struct {
				IsError bool
				Content []struct{ Text string }
			}
			Error *struct{ Message string }
		}
		if err := json.Unmarshal(b, &r); err != nil || code != 200 {
			t.Fatalf("call %d: %d %s (%v)", id, code, b, err)
		}
		if r.Error != nil || r.Result.IsError || len(r.Result.Content) == 0 {
			t.Fatalf("call %d: %s", id, b)
		}
		return r.Result.Content[0].Text
	}
	if got := call(2, []byte("a")); got != "1:a" {
		t.Errorf("first call = %q", got)
	}
	if got := call(3, []byte("x\xff\xfey")); !strings.HasPrefix(got, "2:x") || !strings.Contains(got, "\uFFFD") {
		t.Errorf("invalid UTF-8 call = %q", got)
	}
	if got := call(4, []byte("z")); got != "3:z" {
		t.Errorf("after the invalid call = %q, want the count kept", got)
	}
	if err := srv.Stop(t); err != nil {
		t.Errorf("runMCP = %v", err)
	}
}
