package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawSession opens a session at protocol version over plain HTTP and
// returns its id.
func openRawSession(t *testing.T, url, version string) string {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, version)
	resp := post(t, url, body, nil, false)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("initialize: %d %s", resp.StatusCode, b)
	}
	_, _ = io.ReadAll(resp.Body)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version}
	if r := post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h, false); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", r.StatusCode)
	}
	return sid
}

// rpcErrorOf reads the JSON-RPC error of a refused request.
func rpcErrorOf(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	var m struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %q is not a JSON-RPC error: %v", b, err)
	}
	return m.Error.Code, m.Error.Message
}

func batchOf(n int) string {
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+10)
	}
	return "[" + strings.Join(msgs, ",") + "]"
}

// TestBatchLimits: batches are refused for revisions that dropped them,
// even when the request does not name its revision, and capped where
// they are allowed.
func TestBatchLimits(t *testing.T) {
	srv := newTestServer(t, nil)
	url := serveHTTP(t, srv, &HTTPOptions{MaxBatch: 4, MaxBatchBytes: 2048})
	old := openRawSession(t, url, "2025-03-26")
	current := openRawSession(t, url, "2025-06-18")
	cases := []struct {
		name   string
		body   string
		header map[string]string
		status int
		want   string
	}{
		{"allowed batch", batchOf(2), map[string]string{"Mcp-Session-Id": old}, http.StatusOK, ""},
		{"too many messages", batchOf(5), map[string]string{"Mcp-Session-Id": old}, http.StatusRequestEntityTooLarge, "at most 4 messages, not 5"},
		{"too many bytes", "[" + strings.Repeat(" ", 2100) + "]", map[string]string{"Mcp-Session-Id": old}, http.StatusRequestEntityTooLarge, "at most 2048 bytes"},
		{"dropped by the session's revision", batchOf(2), map[string]string{"Mcp-Session-Id": current}, http.StatusBadRequest, "dropped in 2025-06-18"},
		{"dropped by the header's revision", batchOf(2), map[string]string{"Mcp-Session-Id": old, "Mcp-Protocol-Version": "2025-11-25"}, http.StatusBadRequest, "dropped in 2025-06-18"},
		{"batch opening a session", batchOf(1), nil, http.StatusBadRequest, "cannot open a session"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, url, tc.body, tc.header, false)
			if resp.StatusCode != tc.status {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.want != "" {
				if _, msg := rpcErrorOf(t, resp); !strings.Contains(msg, tc.want) {
					t.Errorf("error %q, want it to say %q", msg, tc.want)
				}
			}
		})
	}
}

// TestSessionLimit: a full server makes room for a new session by
// closing the session idle the longest, however briefly idle, so that a
// client opening sessions cannot lock others out; it serves the sessions
// it keeps, and refuses a new session with 503 and a clear error only when
// every session is serving a request.
func TestSessionLimit(t *testing.T) {
	srv := newTestServer(t, nil)
	url := serveHTTP(t, srv, &HTTPOptions{MaxSessions: 2})
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	headers := func(id string) map[string]string {
		return map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"}
	}
	first := openRawSession(t, url, "2025-06-18")
	second := openRawSession(t, url, "2025-06-18")
	if resp := post(t, url, call, headers(first), false); resp.StatusCode != http.StatusOK {
		t.Fatalf("call in the first session: %d", resp.StatusCode)
	}
	// The second session is now the one idle the longest: a third client
	// gets in at once, in its place.
	third := openRawSession(t, url, "2025-06-18")
	if third == "" {
		t.Fatal("no room made for a third session")
	}
	if !eventually(func() bool {
		return post(t, url, call, headers(second), false).StatusCode == http.StatusNotFound
	}) {
		t.Error("the session idle the longest was not closed")
	}
	for _, id := range []string{first, third} {
		if resp := post(t, url, call, headers(id), false); resp.StatusCode != http.StatusOK {
			t.Errorf("call in a kept session: %d", resp.StatusCode)
		}
	}
	if !eventually(func() bool { return srv.Sessions() == 2 }) {
		t.Errorf("Sessions() = %d, want 2", srv.Sessions())
	}
}

// TestSessionLimitBusy: when every session the table holds is serving a
// request, no slot is made (the HTTP server then answers 503 naming the
// limit), and the busy sessions are left alone.
func TestSessionLimitBusy(t *testing.T) {
	var tbl sessionTable
	e := &sessionEntry{}
	e.active.Store(1)
	tbl.byID = map[string]*sessionEntry{"busy": e}
	if tbl.reserve(1) {
		t.Fatal("a slot was taken from a session serving a request")
	}
	if tbl.get("busy") != e {
		t.Error("the busy session was dropped")
	}
	if !tbl.reserve(2) {
		t.Error("no slot under the limit")
	}
}

// TestSessionLimitAllBusy: a server whose only session is serving a call
// refuses a new session with 503 and a JSON-RPC error saying why, and the
// call finishes.
func TestSessionLimitAllBusy(t *testing.T) {
	srv := newTestServer(t, nil)
	url := serveHTTP(t, srv, &HTTPOptions{MaxSessions: 1})
	a := goClient(t, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, "2025-06-18", nil, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	slowStarted.reset()
	done := make(chan error, 1)
	go func() {
		_, err := a.CallTool(ctx, &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"held": true}})
		done <- err
	}()
	slowStarted.wait(t, 10*time.Second)
	resp := post(t, url, initBody, nil, false)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second session: status %d, want 503", resp.StatusCode)
	}
	if code, msg := rpcErrorOf(t, resp); code != CodeUnavailable || !strings.Contains(msg, "1 sessions, its limit, each serving a request") {
		t.Errorf("second session refused with %d %q", code, msg)
	}
	slowGate.open()
	if err := <-done; err != nil {
		t.Errorf("the slow call: %v", err)
	}
}

// TestCallLimits: a call over a limit gets 429 with a JSON-RPC error, and
// nothing changes for other sessions.
func TestCallLimits(t *testing.T) {
	srv := newTestServer(t, &ServerOptions{MaxCallsPerSession: 1, MaxCalls: 2})
	url := serveHTTP(t, srv, nil)
	a := goClient(t, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, "2025-06-18", nil, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	slowStarted.reset()
	done := make(chan error, 1)
	go func() {
		_, err := a.CallTool(ctx, &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"held": true}})
		done <- err
	}()
	slowStarted.wait(t, 10*time.Second)
	// The same session again: over its own limit.
	// (The Go SDK's client reports the status of a 429, not its body.)
	_, err := a.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Errorf("second call of the session: %v", err)
	}
	// Another session: served.
	b := goClient(t, &sdk.StreamableClientTransport{Endpoint: url}, "2025-06-18", nil, nil, nil)
	res, err := b.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "y"}})
	if err != nil || textOf(t, res) != "y" {
		t.Errorf("other session: %v %v", res, err)
	}
	// Raw HTTP shows the status: the server's total limit is 2, so a
	// second slow call fills it and a third session's call gets 429.
	go func() {
		_, _ = b.CallTool(ctx, &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"held": true}})
	}()
	if !eventually(func() bool { return srv.CallsInFlight() == 2 }) {
		t.Fatalf("calls in flight: %d", srv.CallsInFlight())
	}
	sid := openRawSession(t, url, "2025-06-18")
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"z"}}}`
	resp := post(t, url, call, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}, false)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if code, msg := rpcErrorOf(t, resp); code != CodeServerBusy || !strings.Contains(msg, "server already runs 2 calls") {
		t.Errorf("refused with %d %q", code, msg)
	}
	slowGate.open()
	if err := <-done; err != nil {
		t.Errorf("the slow call: %v", err)
	}
}

func TestCapResult(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	cases := []struct {
		name  string
		in    *sdk.CallToolResult
		limit int
		want  []string
	}{
		{"fits", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "short"}}}, 100, []string{"short"}},
		{"no limit", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: long}}}, -1, []string{long}},
		{"cut on a rune", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: long}}}, 51,
			[]string{strings.Repeat("é", 25) + "\n… (150 more bytes not shown: the result exceeds the server's limit of 51 bytes)"}},
		{"image left out", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "chart"}, &sdk.ImageContent{Data: make([]byte, 500), MIMEType: "image/png"}}}, 100,
			[]string{"chart", "(Not shown, over the server's limit of 100 bytes: a 500-byte content block.)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := capResult(tc.in, tc.limit)
			var got []string
			for _, c := range out.Content {
				got = append(got, c.(*sdk.TextContent).Text)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestDrain: once Serve's context ends, /readyz says 503, new sessions
// and calls get 503, the call in flight completes, and Serve returns.
func TestDrain(t *testing.T) {
	var lg *slog.Logger
	if os.Getenv("NOCANCEL") != "" {
		lg = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv := newTestServer(t, &ServerOptions{Logger: lg})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln, &HTTPOptions{DrainTimeout: 20 * time.Second}) }()
	get := func(path string) int {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if get("/healthz") != 200 || get("/readyz") != 200 {
		t.Fatal("health endpoints not ready")
	}
	cs := goClient(t, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, "2025-06-18", nil, nil, nil)
	sid := openRawSession(t, base+"/mcp", "2025-06-18")
	slowStarted.reset()
	result := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 1500}})
		if err != nil {
			result <- err.Error()
			return
		}
		result <- textOf(t, res)
	}()
	slowStarted.wait(t, 10*time.Second)
	cancel()
	if !eventually(func() bool { return get("/readyz") == http.StatusServiceUnavailable }) {
		t.Fatal("/readyz still ready while draining")
	}
	if get("/healthz") != 200 {
		t.Error("/healthz not alive while draining")
	}
	if resp := post(t, base+"/mcp", initBody, nil, false); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("new session while draining: %d", resp.StatusCode)
	}
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"z"}}}`
	resp := post(t, base+"/mcp", call, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}, false)
	if code, msg := rpcErrorOf(t, resp); resp.StatusCode != http.StatusServiceUnavailable || code != CodeUnavailable || !strings.Contains(msg, "shutting down") {
		t.Errorf("new call while draining: %d %d %q", resp.StatusCode, code, msg)
	}
	if got := <-result; got != "finished" {
		t.Errorf("call in flight: %q", got)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the drain")
	}
}

// TestDrainPastTimeout: a call still running when the drain's timeout
// ends is cancelled and answered with an error that says why, and Serve
// returns. The call is held until cancelled, so the timeout always passes
// first, however fast the machine. Its answer is written after the call
// has left the limiter: Serve must not close the session before (it did
// once the drain's timeout had passed, and the stream ended empty).
func TestDrainPastTimeout(t *testing.T) {
	srv := newTestServer(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln, &HTTPOptions{DrainTimeout: 100 * time.Millisecond}) }()
	url := "http://" + ln.Addr().String() + "/mcp"
	sid := openRawSession(t, url, "2025-06-18")
	slowStarted.reset()
	done := make(chan string, 1)
	go func() {
		call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"held":true}}}`
		resp := post(t, url, call, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}, false)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(b)
	}()
	slowStarted.wait(t, time.Minute)
	cancel()
	var body string
	select {
	case body = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the call in flight got no answer after the drain")
	}
	if !strings.Contains(body, `"id":7`) || !strings.Contains(body, "ran past its drain timeout") {
		t.Errorf("the call in flight was answered with %q", body)
	}
	select {
	case <-served:
	case <-time.After(2 * time.Minute):
		t.Fatal("Serve did not return after the drain")
	}
}

// FuzzGuardPOST: whatever body a client sends, the guard answers (no
// panic, no hang) and the server keeps serving.
func FuzzGuardPOST(f *testing.F) {
	srv := NewServer(testInventory(f), nil)
	defer srv.Close()
	h := srv.Handler(&HTTPOptions{MaxBatch: 4, MaxBatchBytes: 512, MaxBodyBytes: 4096})
	for _, seed := range []string{initBody, batchOf(2), batchOf(9), "[", "{", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, " [1,2]", "null", ""} {
		f.Add(seed, "", "")
		f.Add(seed, "2025-03-26", "nope")
	}
	f.Fuzz(func(t *testing.T, body, version, session string) {
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
		defer cancel()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(ctx))
		if rec.Code == 0 {
			t.Fatal("no answer")
		}
	})
}
