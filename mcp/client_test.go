package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lcptools/lcp/tool"
)

func newClient(t *testing.T, servers []ServerConfig, opts *ClientOptions) *ClientToolset {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if opts == nil {
		opts = &ClientOptions{}
	}
	if opts.StateDir == "" {
		cp := *opts
		cp.StateDir = t.TempDir() // the boxed servers' state, not the home's
		opts = &cp
	}
	c, err := NewClientToolset(ctx, servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// clientTargets are lcp's own server as a stdio subprocess and over HTTP.
func clientTargets(t *testing.T) map[string]ServerConfig {
	srv := newTestServer(t, nil)
	return map[string]ServerConfig{
		"stdio": selfServer(t, "lcp"),
		"http":  {Alias: "lcp", Type: TypeHTTP, URL: serveHTTP(t, srv, nil)},
	}
}

func TestClientAgainstLCPServer(t *testing.T) {
	for name, cfg := range clientTargets(t) {
		t.Run(name, func(t *testing.T) {
			var progress atomic.Int32
			c := newClient(t, []ServerConfig{cfg}, &ClientOptions{OnEvent: func(p tool.Event) {
				if p.Tool == "lcp::slow" {
					progress.Add(1)
				}
			}})
			if d := c.Diagnostics(); len(d) > 0 {
				t.Fatalf("diagnostics: %v", d)
			}
			infos, err := c.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]tool.Info{}
			for _, i := range infos {
				byName[i.Name] = i
			}
			echo, ok := byName["lcp::echo"]
			if !ok {
				t.Fatalf("no lcp::echo in %d tools", len(infos))
			}
			// The server's schema arrives with its keys in their order.
			if got, want := string(echo.InputSchema), `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"]}`; got != want {
				t.Errorf("echo schema = %s, want %s", got, want)
			}
			if echo.Library.ID != "lcp" || echo.Description != "Echoes text." {
				t.Errorf("echo info = %+v", echo)
			}

			ctx := context.Background()
			res, err := tool.Call(ctx, c, "lcp::greet", json.RawMessage(`{"name":"Ada"}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Success || string(res.Structured) != `{"greeting":"Hello, Ada!"}` || res.Text() != `{"greeting":"Hello, Ada!"}` {
				t.Errorf("greet = %+v", res)
			}

			res, err = tool.Call(ctx, c, "lcp::fail", nil, nil)
			if err != nil || res.Success || res.Error != "it broke" {
				t.Errorf("fail = %+v, %v", res, err)
			}

			// Elicitation of the server reaches the caller as requests.
			var seen []tool.Kind
			opts := &tool.CallOptions{
				Confirm: func(ctx context.Context, r *tool.Request) (tool.Decision, string) {
					seen = append(seen, r.Kind)
					if !strings.Contains(r.Prompt, "rm -rf build/") || r.Tool != "lcp::danger" {
						t.Errorf("confirmation = %+v", r)
					}
					return tool.Reject, "ignored"
				},
				Interact: func(ctx context.Context, r *tool.Request) (any, bool) {
					seen = append(seen, r.Kind)
					switch r.Kind {
					case tool.KindForm:
						// lcp's confirmation form, as any MCP server's form.
						return map[string]any{"decision": "allow"}, true
					case tool.KindSelect:
						if !cmp.Equal(r.Options, []string{"red", "green", "blue"}) || r.Default == nil || *r.Default != "green" {
							t.Errorf("select = %+v", r)
						}
						return "blue", true
					}
					return "Grace", true
				},
			}
			for tl, want := range map[string]string{"lcp::danger": "deleted (allow)", "lcp::pick": "picked blue", "lcp::ask_name": "hello Grace"} {
				res, err := tool.Call(ctx, c, tl, nil, opts)
				if err != nil || res.Text() != want {
					t.Errorf("%s = %+v, %v; want %q", tl, res, err, want)
				}
			}
			if !cmp.Equal(seen, []tool.Kind{tool.KindForm, tool.KindSelect, tool.KindText}) && !sameKinds(seen) {
				t.Errorf("requests = %v", seen)
			}

			p := json.RawMessage(`{"ms":200}`)
			var callProgress atomic.Int32
			if res, err := tool.Call(ctx, c, "lcp::slow", p, &tool.CallOptions{OnEvent: func(e tool.Event) {
				if e.Kind == tool.EventProgress && e.Tool == "lcp::slow" && e.Text == "step" {
					callProgress.Add(1)
				}
			}}); err != nil || res.Text() != "finished" {
				t.Fatalf("slow = %+v, %v", res, err)
			}
			if !eventually(func() bool { return progress.Load() >= 3 && callProgress.Load() >= 3 }) {
				t.Errorf("%d progress reports, %d to the call", progress.Load(), callProgress.Load())
			}

			if _, err := c.Handler(ctx, "lcp::nope"); err == nil {
				t.Error("a handler for an unknown tool")
			}
			if _, err := c.Handler(ctx, "other::greet"); err == nil {
				t.Error("a handler for an unknown alias")
			}
		})
	}
}

func sameKinds(got []tool.Kind) bool {
	want := map[tool.Kind]bool{tool.KindForm: true, tool.KindSelect: true, tool.KindText: true}
	if len(got) != 3 {
		return false
	}
	for _, k := range got {
		if !want[k] {
			return false
		}
	}
	return true
}

func TestClientCancellation(t *testing.T) {
	srv := newTestServer(t, nil)
	c := newClient(t, []ServerConfig{{Alias: "lcp", URL: serveHTTP(t, srv, nil)}}, nil)
	slowStarted.reset()
	slowCancelled.reset()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := tool.Call(ctx, c, "lcp::slow", json.RawMessage(`{"ms":20000}`), nil)
		errc <- err
	}()
	slowStarted.wait(t, 5*time.Second)
	cancel()
	var ce *tool.CancelledError
	if err := <-errc; !errors.As(err, &ce) {
		t.Errorf("err = %v, want a cancellation", err)
	}
	slowCancelled.wait(t, 5*time.Second) // the server stopped the tool
}

func TestClientServerCrashAndRestart(t *testing.T) {
	c := newClient(t, []ServerConfig{selfServer(t, "lcp")}, &ClientOptions{TerminateTimeout: time.Second})
	ctx := context.Background()
	_, err := tool.Call(ctx, c, "lcp::crash", nil, nil)
	var te *tool.TransportError
	var exit *ServerExitError
	if !errors.As(err, &te) || !errors.As(err, &exit) {
		t.Fatalf("err = %v, want a transport error with the exit", err)
	}
	if exit.Alias != "lcp" || exit.ExitCode != 3 || !strings.Contains(exit.Stderr, "about to crash on purpose") {
		t.Errorf("exit = %+v", exit)
	}
	if !strings.Contains(err.Error(), `"lcp" exited with status 3`) {
		t.Errorf("message = %q", err)
	}
	// The next call starts the server again.
	res, err := tool.Call(ctx, c, "lcp::echo", json.RawMessage(`{"text":"back"}`), nil)
	if err != nil || res.Text() != "back" {
		t.Fatalf("after the crash: %+v, %v", res, err)
	}
}

func TestClientBrokenServersLeaveTheRestUsable(t *testing.T) {
	srv := newTestServer(t, nil)
	c := newClient(t, []ServerConfig{
		{Alias: "missing", Command: "/nonexistent/mcp-server"},
		{Alias: "quits", Command: "sh", Args: []string{"-c", "echo no good >&2; exit 7"}},
		{Alias: "junk", Command: "sh", Args: []string{"-c", "echo 'Server listening on port 8080'; cat >/dev/null"}},
		{Alias: "lcp", URL: serveHTTP(t, srv, nil)},
	}, &ClientOptions{ConnectTimeout: 10 * time.Second})
	diags := c.Diagnostics()
	if len(diags) != 3 {
		t.Fatalf("diagnostics = %v", diags)
	}
	if !strings.Contains(diags[0].Message, `"missing"`) || !strings.Contains(diags[1].Message, "status 7") || !strings.Contains(diags[1].Message, "no good") {
		t.Errorf("diagnostics = %v", diags)
	}
	// Junk on stdout is said as such, not as the exit it led to.
	var bad *BadOutputError
	if err := c.Err("junk"); !errors.As(err, &bad) || bad.Alias != "junk" || !strings.Contains(diags[2].Message, "not an MCP message") {
		t.Errorf("junk: %v, %v", err, diags[2])
	}
	if c.Err("lcp") != nil || c.Err("nobody") != nil {
		t.Errorf("Err of a working or unknown server: %v, %v", c.Err("lcp"), c.Err("nobody"))
	}
	infos, err := c.Tools(context.Background())
	if err != nil || len(infos) == 0 {
		t.Fatalf("tools = %d, %v", len(infos), err)
	}
	for _, i := range infos {
		if !strings.HasPrefix(i.Name, "lcp::") {
			t.Errorf("tool %s", i.Name)
		}
	}
	_, err = tool.Call(context.Background(), c, "quits::anything", nil, nil)
	var te *tool.TransportError
	if !errors.As(err, &te) {
		t.Errorf("calling a broken server: %v", err)
	}
}

func TestClientMuteServerTimesOut(t *testing.T) {
	start := time.Now()
	c := newClient(t, []ServerConfig{{Alias: "mute", Command: "sleep", Args: []string{"60"}}},
		&ClientOptions{ConnectTimeout: 500 * time.Millisecond, TerminateTimeout: 100 * time.Millisecond})
	var te *ConnectTimeoutError
	err := c.Err("mute")
	if !errors.As(err, &te) || te.Alias != "mute" || !errors.Is(err, context.DeadlineExceeded) ||
		err.Error() != `MCP server "mute" did not answer within 500ms` {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("took %v", d)
	}
}

func TestClientReconnectsADroppedHTTPSession(t *testing.T) {
	// The endpoint is swapped for a fresh server, as when the remote
	// process restarts: the old session id is unknown there.
	var mu sync.Mutex
	current := NewServer(testInventory(t), nil).Handler(nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := current
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	c := newClient(t, []ServerConfig{{Alias: "lcp", URL: hs.URL}}, nil)
	ctx := context.Background()
	if res, err := tool.Call(ctx, c, "lcp::echo", json.RawMessage(`{"text":"one"}`), nil); err != nil || res.Text() != "one" {
		t.Fatalf("first call: %+v, %v", res, err)
	}
	mu.Lock()
	current = NewServer(testInventory(t), nil).Handler(nil)
	mu.Unlock()
	res, err := tool.Call(ctx, c, "lcp::echo", json.RawMessage(`{"text":"two"}`), nil)
	if err != nil {
		// The standalone stream may notice first; then the next call
		// reconnects.
		res, err = tool.Call(ctx, c, "lcp::echo", json.RawMessage(`{"text":"two"}`), nil)
	}
	if err != nil || res.Text() != "two" {
		t.Fatalf("after the restart: %+v, %v", res, err)
	}
}
