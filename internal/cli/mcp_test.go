//lint:file-ignore SA1019 the client answers sampling as clients still do (deprecated from 2026-07-28 on, SEP-2577)

package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
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
	urls := make(chan string, 1)
	o.ready = func(u string) { urls <- u }
	var stderr syncBuffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	o.env, o.ctx = env, ctx
	done := make(chan error, 1)
	go func() { done <- runMCP(o) }()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("lcp mcp --http: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no endpoint")
	}
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
	// A client without elicitation: the question is declined, with a reason.
	res, err = cs.CallTool(cctx, &sdk.CallToolParams{Name: "tool_pick_colour"})
	if err != nil || !res.IsError {
		t.Errorf("tool_pick_colour = %+v, %v", res, err)
	}
	cs.Close()
	if _, err := sdk.NewClient(&sdk.Implementation{Name: "anon", Version: "1"}, nil).Connect(cctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil); err == nil {
		t.Error("connected without the token")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runMCP = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("lcp mcp --http did not stop")
	}
	if !strings.Contains(stderr.String(), "serving MCP at "+url) {
		t.Errorf("stderr = %s", stderr.String())
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
		{[]string{"mcp", "--json-response"}, "go with --http"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--json-response", "--stateless"}, "keeps none"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--replica-id", "a b"}, "only ASCII letters"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--replica-id", "r1", "--stateless"}, "keeps none"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--max-batch", "-1"}, "batches are always capped"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--session-idle", "-1m"}, "must be positive"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--drain-timeout", "-1s"}, "must not be negative"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--log-format", "xml"}, "text or json"},
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
		urls := make(chan string, 1)
		o.ready = func(u string) { urls <- u }
		var stderr syncBuffer
		o.env = &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}
		ctx, cancel := context.WithCancel(context.Background())
		o.ctx = ctx
		done := make(chan error, 1)
		go func() { done <- runMCP(o) }()
		var url string
		select {
		case url = <-urls:
		case err := <-done:
			t.Fatalf("lcp mcp --http: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("no endpoint")
		}
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
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("runMCP = %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("lcp mcp --http did not stop")
		}
		if !strings.Contains(stderr.String(), "call ended") || !strings.Contains(stderr.String(), "call_id=") {
			t.Errorf("the log does not show the call with its id: %s", stderr.String())
		}
	}
}
