//lint:file-ignore SA1019 the client answers sampling as clients still do (deprecated from 2026-07-28 on, SEP-2577)

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// pythonTools writes a tools folder with a plain and an interactive LCP
// Python tool.
func pythonTools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := `"""Demo tools served over MCP."""

TOOL_ANNOTATIONS = {"tool_add": {"title": "Add numbers", "readOnlyHint": True, "openWorldHint": False}}


def tool_add(a: int, b: int = 2):
    """Adds two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return {"success": True, "output": a + b}


def tool_pick_colour(user_interaction_handler=None):
    """Asks the user for a colour."""
    c = user_interaction_handler({"type": "select", "title": "Colour", "prompt": "Pick one",
                                  "options": ["red", "blue"], "default": "red"})
    if c is None:
        return {"success": False, "error": "no colour"}
    return {"success": True, "output": "picked " + c}
`
	if err := os.WriteFile(filepath.Join(dir, "demo.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMCPCommandOverHTTP serves over HTTP with a token.
func TestMCPCommandOverHTTP(t *testing.T) {
	needPython(t)
	o := defaultMCPOptions()
	o.http, o.useHTTP, o.token = "127.0.0.1:0", true, "0123456789abcdef-token"
	o.inv.tools = []string{pythonTools(t)}
	srv := startMCP(t, o)
	url := srv.URL
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: bearerClient(o.token)}
	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()
	cs, err := c.Connect(cctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "tool_add", Arguments: map[string]any{"a": 1, "b": 1}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "2" {
		t.Errorf("tool_add = %+v, %v", res, err)
	}
	// A client without elicitation: nobody can answer, so the question
	// gets its own default, as on a command line without a terminal.
	res, err = cs.CallTool(cctx, &sdk.CallToolParams{Name: "tool_pick_colour"})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "picked red" {
		t.Errorf("tool_pick_colour = %+v, %v", res, err)
	}
	cs.Close()
	if _, err := sdk.NewClient(&sdk.Implementation{Name: "anon", Version: "1"}, nil).Connect(cctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil); err == nil {
		t.Error("connected without the token")
	}
	if err := srv.Stop(t); err != nil {
		t.Errorf("runMCP = %v", err)
	}
	if !strings.Contains(srv.Stderr.String(), "serving MCP at "+url) {
		t.Errorf("stderr = %s", srv.Stderr)
	}
}

func TestMCPCommandFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--http", "0.0.0.0:0", "--no-token"}, "loopback only"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--no-token", "--token", "x"}, "contradicts --token"},
		{[]string{"mcp", "--token", "x"}, "go with --http"},
		{[]string{"mcp", "--stateless"}, "go with --http"},
		{[]string{"mcp", "--tasks"}, "go with --http"},
		{[]string{"mcp", "--json-response"}, "go with --http"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--json-response", "--stateless"}, "keeps none"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--replica-id", "a b"}, "only ASCII letters"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--replica-id", "r1", "--stateless"}, "keeps none"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--replica", "r2=http://h:1/mcp"}, "--stateless and --replica-id"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--stateless", "--replica-id", "r1", "--replica", "r2"}, "want ID=URL"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--stateless", "--replica-id", "r1", "--replica", "r2=ftp://h/"}, "http(s)"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--max-batch", "-1"}, "batches are always capped"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--session-idle", "-1m"}, "must be positive"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--drain-timeout", "-1s"}, "must not be negative"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--log-format", "xml"}, "text or json"},
		{[]string{"mcp", "--body-timeout", "5s"}, "go with --http"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--body-timeout", "-1s"}, `invalid argument "-1s" for "--body-timeout" flag: want 0 (off) or a duration of at least 1s`},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--body-timeout", "10ms"}, `for "--body-timeout" flag: want 0 (off)`},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--body-timeout", "30"}, `invalid argument "30" for "--body-timeout" flag`},
		{[]string{"mcp", "--stopped-limit", "-5s"}, `invalid argument "-5s" for "--stopped-limit" flag: want 0 (off)`},
		{[]string{"mcp", "--stopped-limit", "1ns"}, `for "--stopped-limit" flag`},
		{[]string{"serve", "--stopped-limit", "soon"}, `invalid argument "soon" for "--stopped-limit" flag`},
	} {
		_, stderr, code := run(t, "", tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: code %d, stderr %q, want a usage error with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// bearerClient sends the token with every request.
func bearerClient(token string) *http.Client {
	return &http.Client{Transport: bearer{token}}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// defaultMCPOptions are the options of lcp mcp without flags.
func defaultMCPOptions() *MCPOptions {
	var o *MCPOptions
	cmd := NewCmdMCP(testEnv(), func(m *MCPOptions) error { o = m; return nil })
	cmd.SetArgs([]string{})
	_ = cmd.Execute()
	return o
}

// mcpHang is how long a test waits for lcp mcp to be ready or to stop
// before it calls it hung: a hang detector, far from the expected time.
const mcpHang = 2 * time.Minute

// mcpRun is an lcp mcp --http started by startMCP.
type mcpRun struct {
	URL    string      // the MCP endpoint
	Stderr *syncBuffer // what it wrote to stderr

	cancel context.CancelFunc
	exited chan struct{} // closed when runMCP has returned runErr
	runErr error
	once   sync.Once
	err    error // Stop's answer
}

// startMCP runs runMCP(o) (o.http set by the test) and returns once its
// endpoint is ready; the server is stopped when the test ends, if the
// test did not Stop it. Its Env has no input, no environment and its
// stderr in Stderr. A server that fails to start fails the test, as does
// one not ready within mcpHang.
func startMCP(t *testing.T, o *MCPOptions) *mcpRun {
	t.Helper()
	r := &mcpRun{Stderr: &syncBuffer{}, exited: make(chan struct{})}
	o.env = &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: r.Stderr, Getenv: func(string) string { return "" }}
	urls := make(chan string, 1)
	o.ready = func(u string) { urls <- u }
	o.ctx, r.cancel = context.WithCancel(context.Background())
	go func() {
		r.runErr = runMCP(o)
		close(r.exited)
	}()
	t.Cleanup(func() { _ = r.Stop(t) })
	select {
	case r.URL = <-urls:
		return r
	case <-r.exited:
		t.Fatalf("lcp mcp: %v\nstderr: %s", r.runErr, r.Stderr)
	case <-time.After(mcpHang):
		t.Fatalf("lcp mcp: no endpoint within %s (hung?)\nstderr: %s", mcpHang, r.Stderr)
	}
	return nil
}

// Stop cancels the server's context and returns what runMCP returned; a
// server still running after mcpHang fails the test. Stop may be called
// more than once.
func (r *mcpRun) Stop(t *testing.T) error {
	t.Helper()
	r.once.Do(func() {
		r.cancel()
		select {
		case <-r.exited:
			r.err = r.runErr
		case <-time.After(mcpHang):
			r.err = fmt.Errorf("lcp mcp did not stop within %s", mcpHang)
			t.Error(r.err)
		}
	})
	return r.err
}

// TestMCPCommandTokenHealthMetrics: without --token, lcp mcp --http makes
// one up and prints it; requests without it get 401, the health endpoints
// answer without it, /metrics needs it (or its own listener) and counts
// the calls.
func TestMCPCommandTokenHealthMetrics(t *testing.T) {
	for _, ownListener := range []bool{false, true} {
		o := defaultMCPOptions()
		o.http, o.useHTTP = "127.0.0.1:0", true
		o.inv.workspace = t.TempDir()
		if ownListener {
			o.metricsAddr = "127.0.0.1:0"
		}
		srv := startMCP(t, o)
		url, stderr := srv.URL, srv.Stderr
		m := regexp.MustCompile(`bearer token .*: (\S+)\n`).FindStringSubmatch(stderr.String())
		if m == nil || len(m[1]) < 20 {
			t.Fatalf("no token printed: %s", stderr.String())
		}
		token := m[1]
		base := strings.TrimSuffix(url, "/mcp")
		status := func(u, tok string) (int, string) {
			req, _ := http.NewRequest("GET", u, nil)
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		if code, body := status(base+"/healthz", ""); code != 200 || body != "ok\n" {
			t.Errorf("/healthz: %d %q", code, body)
		}
		if code, body := status(base+"/readyz", ""); code != 200 || body != "ready\n" {
			t.Errorf("/readyz: %d %q", code, body)
		}
		cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
		if _, err := sdk.NewClient(&sdk.Implementation{Name: "anon", Version: "1"}, nil).Connect(cctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil); err == nil {
			t.Error("connected without the token")
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(cctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: bearerClient(token)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "tool_list_files", Arguments: map[string]any{}}); err != nil || res.IsError {
			t.Errorf("tool_list_files: %+v, %v", res, err)
		}
		cs.Close()
		ccancel()
		metricsURL := base + "/metrics"
		tok := token
		if ownListener {
			mm := regexp.MustCompile(`metrics at (\S+)`).FindStringSubmatch(stderr.String())
			if mm == nil {
				t.Fatalf("no metrics address printed: %s", stderr.String())
			}
			metricsURL, tok = mm[1], ""
		} else if code, _ := status(metricsURL, ""); code != http.StatusUnauthorized {
			t.Errorf("/metrics without the token: %d", code)
		}
		code, body := status(metricsURL, tok)
		if code != 200 || !strings.Contains(body, `lcp_calls_total{status="200",tool="tool_list_files"} 1`) || !strings.Contains(body, "lcp_mcp_sessions ") {
			t.Errorf("/metrics: %d\n%s", code, body)
		}
		if err := srv.Stop(t); err != nil {
			t.Errorf("runMCP = %v", err)
		}
		if !strings.Contains(stderr.String(), "call ended") || !strings.Contains(stderr.String(), "call_id=") {
			t.Errorf("the log does not show the call with its id: %s", stderr.String())
		}
	}
}

// TestMCPCommandTasks serves --http --tasks and runs one long call as a
// task of MCP's tasks extension: tools/call answers a task at once, and
// tasks/get follows it until it completes with the tool's result.
func TestMCPCommandTasks(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	flag := filepath.Join(dir, "go")
	src := `"""A call that lasts until the test lets it end."""
import os, time


def tool_slow(flag: str):
    """Waits for the file flag, then answers done.

    Args:
        flag: the file to wait for
    """
    while not os.path.exists(flag):
        time.sleep(0.01)
    return {"success": True, "output": "done"}
`
	if err := os.WriteFile(filepath.Join(dir, "slow.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	o := defaultMCPOptions()
	o.http, o.useHTTP, o.token, o.tasks = "127.0.0.1:0", true, "0123456789abcdef-token", true
	o.inv.tools = []string{dir}
	srv := startMCP(t, o)
	url := srv.URL
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	post := func(body, token string) (int, map[string]json.RawMessage) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		// The 2026-07-28 wire: the header repeats _meta's version.
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			_, data, _ := strings.Cut(string(raw), "data: ")
			raw = []byte(strings.TrimSpace(data))
		}
		var m map[string]json.RawMessage
		if resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("answer %q: %v", raw, err)
			}
		}
		return resp.StatusCode, m
	}
	args, _ := json.Marshal(map[string]string{"flag": flag})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tool_slow","arguments":` + string(args) + `,` + meta + `}}`
	if code, _ := post(call, ""); code != http.StatusUnauthorized {
		t.Errorf("a call without the token: %d, want 401", code)
	}
	_, m := post(call, o.token)
	var created struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := json.Unmarshal(m["result"], &created); err != nil || created.ResultType != "task" || created.TaskID == "" {
		t.Fatalf("tools/call answered %s %s", m["result"], m["error"])
	}
	get := `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"` + created.TaskID + `",` + meta + `}}`
	if _, m := post(get, o.token); !strings.Contains(string(m["result"]), `"status":"working"`) {
		t.Errorf("tasks/get before the end answered %s %s", m["result"], m["error"])
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute) // a hang detector, not a timing
	for {
		_, m := post(get, o.token)
		res := string(m["result"])
		if strings.Contains(res, `"status":"completed"`) {
			if !strings.Contains(res, `"done"`) {
				t.Errorf("the completed task holds %s", res)
			}
			break
		}
		if !strings.Contains(res, `"status":"working"`) || time.Now().After(deadline) {
			t.Fatalf("tasks/get answered %s %s", res, m["error"])
		}
		runtime.Gosched()
	}
	if err := srv.Stop(t); err != nil {
		t.Errorf("runMCP = %v", err)
	}
}

// TestMCPCommandBodyTimeout: --body-timeout reaches the endpoint: a body
// trickled slower than it gets 408, a prompt one is served.
func TestMCPCommandBodyTimeout(t *testing.T) {
	var o *MCPOptions
	if err := parse(t, NewCmdMCP(testEnv(), func(m *MCPOptions) error { o = m; return nil }),
		"--http", "127.0.0.1:0", "--no-token", "--body-timeout", "1s", "--workspace", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	url := startMCP(t, o).URL
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(body io.Reader, size int64) (int, string) {
		req, _ := http.NewRequest("POST", url, body)
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := post(strings.NewReader(initialize), int64(len(initialize))); code != http.StatusOK {
		t.Errorf("a prompt body: %d, want 200", code)
	}
	// Half the body, then nothing until the server has answered.
	pr, pw := io.Pipe()
	go func() { _, _ = io.WriteString(pw, initialize[:20]) }()
	code, body := post(pr, int64(len(initialize)))
	pw.Close()
	// The answer names the flag's value, not the default's.
	if code != http.StatusRequestTimeout || !strings.Contains(body, "did not arrive within 1s") {
		t.Errorf("a body that stops half way: %d %q, want 408 within 1s", code, body)
	}
}
