package mcp

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// pollingServer serves the test inventory with PollAfter and counts the
// requests that resume a stream.
func pollingServer(t *testing.T, after time.Duration) (url string, resumed *atomic.Int32) {
	t.Helper()
	srv := newTestServer(t, nil)
	h := srv.Handler(&HTTPOptions{PollAfter: after})
	resumed = new(atomic.Int32)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumed.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL, resumed
}

// TestPollingResumesLongCalls: a call longer than PollAfter has its stream
// closed; the client reconnects and still gets the result.
func TestPollingResumesLongCalls(t *testing.T) {
	url, resumed := pollingServer(t, 100*time.Millisecond)
	var progress atomic.Int32
	cs := goClient(t, &sdk.StreamableClientTransport{Endpoint: url}, "2025-11-25", nil, nil, func(*sdk.ProgressNotificationClientRequest) { progress.Add(1) })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	p := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 500}}
	p.SetProgressToken("t1")
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if textOf(t, res) != "finished" {
		t.Errorf("slow = %q", textOf(t, res))
	}
	if resumed.Load() == 0 {
		t.Error("the client never resumed a stream: it was not closed")
	}
	if progress.Load() < 10 {
		t.Errorf("%d progress notifications, want those sent while the stream was closed too", progress.Load())
	}
	// A short call is not disturbed.
	before := resumed.Load()
	if textOf(t, call(t, cs, "echo", map[string]any{"text": "hi"})) != "hi" || resumed.Load() != before {
		t.Errorf("a short call resumed a stream")
	}
}

// TestPollingPrimesStreams: a request whose Mcp-Protocol-Version header
// names an older revision than its session negotiated is served under the
// session's: its stream starts with a priming event and its closing says
// when to come back.
func TestPollingPrimesStreams(t *testing.T) {
	url, _ := pollingServer(t, 100*time.Millisecond)
	cs := goClient(t, &sdk.StreamableClientTransport{Endpoint: url}, "2025-11-25", nil, nil, nil)
	body := `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"slow","arguments":{"ms":400}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	transcript := strings.Join(lines, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "event: prime") && !strings.HasPrefix(lines[0], "id: ") {
		t.Errorf("the stream does not start with a priming event:\n%s", transcript)
	}
	if !strings.Contains(transcript, "retry: 100") {
		t.Errorf("the stream was not closed with a retry hint:\n%s", transcript)
	}
	if strings.Contains(transcript, `"id":77,"result"`) {
		t.Errorf("the result came on the first stream, which should have been closed:\n%s", transcript)
	}
}
