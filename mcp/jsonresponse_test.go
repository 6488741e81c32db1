package mcp

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestJSONResponse: with HTTPOptions.JSONResponse a call's result comes
// as one application/json body; what the call sends meanwhile (progress,
// a question) travels on the session's GET stream, which the Go SDK's
// client keeps open, so that asking still works.
func TestJSONResponse(t *testing.T) {
	srv := newTestServer(t, nil)
	url := serveHTTP(t, srv, &HTTPOptions{JSONResponse: true})
	var progress atomic.Int32
	elicit := func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
	}
	cs := goClient(t, &sdk.StreamableClientTransport{Endpoint: url}, "2025-11-25", elicit, formAndURL,
		func(*sdk.ProgressNotificationClientRequest) { progress.Add(1) })
	if got := textOf(t, call(t, cs, "echo", map[string]any{"text": "hi"})); got != "hi" {
		t.Errorf("echo = %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	p := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 300}}
	p.SetProgressToken("t1")
	res, err := cs.CallTool(ctx, p)
	if err != nil || textOf(t, res) != "finished" {
		t.Fatalf("slow = %+v, %v", res, err)
	}
	if !eventually(func() bool { return progress.Load() > 0 }) {
		t.Error("no progress notification reached the client")
	}
	if got := textOf(t, call(t, cs, "danger", map[string]any{})); !strings.HasPrefix(got, "deleted") {
		t.Errorf("danger = %q, want the approval asked on the GET stream to go through", got)
	}

	// On the wire: one JSON body.
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"raw"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || !strings.Contains(string(b), `"raw"`) {
		t.Errorf("answer %q (%s): want the result as JSON", b, ct)
	}
}

// TestJSONResponseWithoutGETStream: a client that never opens the GET
// stream gets its results, but nobody receives a question: the approval
// is not given, and the result says why.
func TestJSONResponseWithoutGETStream(t *testing.T) {
	srv := newTestServer(t, nil)
	url := serveHTTP(t, srv, &HTTPOptions{JSONResponse: true})
	post := func(sid, body string) (*http.Response, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session")
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if _, b := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`); !strings.Contains(b, `"text":"x"`) {
		t.Errorf("echo = %s", b)
	}
	_, b := post(sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"danger","arguments":{}}}`)
	if !strings.Contains(b, `"isError":true`) || !strings.Contains(b, "could not be asked") {
		t.Errorf("danger = %s, want the approval refused because it could not be asked", b)
	}
}
