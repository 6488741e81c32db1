package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The protocol revisions the server is tested with: the last one where
// servers send elicitation requests, and the newest one where questions
// travel as input requests of the call's result.
var protocols = []struct{ name, version string }{
	{"2025-11-25", "2025-11-25"},
	{"2026-07-28", ""},
}

// transports connects a Go SDK client to a fresh server of the test
// inventory, in memory (as over stdio) or over streamable HTTP.
var transports = []struct {
	name    string
	connect func(t *testing.T, srv *Server) sdk.Transport
}{
	{"memory", func(t *testing.T, srv *Server) sdk.Transport {
		st, ct := sdk.NewInMemoryTransports()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = srv.Run(ctx, st) }()
		t.Cleanup(func() { cancel(); <-done })
		return ct
	}},
	{"http", func(t *testing.T, srv *Server) sdk.Transport {
		return &sdk.StreamableClientTransport{Endpoint: serveHTTP(t, srv, nil)}
	}},
}

func newTestServer(t *testing.T, opts *ServerOptions) *Server {
	t.Helper()
	srv := NewServer(testInventory(t), opts)
	t.Cleanup(func() { srv.Close() })
	return srv
}

var formAndURL = &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}}

func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

func TestServerBasics(t *testing.T) {
	for _, tr := range transports {
		for _, pv := range protocols {
			t.Run(tr.name+"/"+pv.name, func(t *testing.T) {
				srv := newTestServer(t, nil)
				cs := goClient(t, tr.connect(t, srv), pv.version, nil, nil, nil)

				ctx := context.Background()
				list, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				byName := map[string]*sdk.Tool{}
				for _, tl := range list.Tools {
					byName[tl.Name] = tl
				}
				for _, want := range []string{"greet", "echo", "fail", "danger", "pick", "login", "slow"} {
					if byName[want] == nil {
						t.Errorf("tools/list lacks %s", want)
					}
				}
				if byName["greet"].OutputSchema == nil {
					t.Error("greet has no output schema")
				}
				if d := byName["echo"].Description; d != "Echoes text." {
					t.Errorf("echo description = %q", d)
				}

				res := call(t, cs, "greet", map[string]any{"name": "Ada"})
				if res.IsError || textOf(t, res) != `{"greeting":"Hello, Ada!"}` {
					t.Errorf("greet = %v %q", res.IsError, textOf(t, res))
				}
				sc, _ := json.Marshal(res.StructuredContent)
				if string(sc) != `{"greeting":"Hello, Ada!"}` {
					t.Errorf("greet structured = %s", sc)
				}

				res = call(t, cs, "echo", map[string]any{"text": "hi"})
				if res.IsError || textOf(t, res) != "hi" || res.StructuredContent != nil {
					t.Errorf("echo = %v %q %v", res.IsError, textOf(t, res), res.StructuredContent)
				}

				res = call(t, cs, "fail", nil)
				if !res.IsError || textOf(t, res) != "it broke" {
					t.Errorf("fail = %v %q", res.IsError, textOf(t, res))
				}

				res = call(t, cs, "echo", map[string]any{"text": 5})
				if !res.IsError || !strings.Contains(textOf(t, res), "invalid arguments") {
					t.Errorf("echo with a number = %v %q", res.IsError, textOf(t, res))
				}

				res = call(t, cs, "inject", nil)
				if len(res.Content) != 2 || res.Content[1].(*sdk.TextContent).Text != "Show the chart to the user." {
					t.Errorf("inject content = %+v", res.Content)
				}

				if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
					t.Errorf("unknown tool: err = %v", err)
				}
			})
		}
	}
}

// answer is an elicitation handler that records what it was asked.
type answerer struct {
	mu    sync.Mutex
	asked []*sdk.ElicitParams
	fn    func(p *sdk.ElicitParams) *sdk.ElicitResult
}

func (a *answerer) handle(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	a.mu.Lock()
	a.asked = append(a.asked, req.Params)
	a.mu.Unlock()
	return a.fn(req.Params), nil
}

func accept(content map[string]any) func(*sdk.ElicitParams) *sdk.ElicitResult {
	return func(*sdk.ElicitParams) *sdk.ElicitResult {
		return &sdk.ElicitResult{Action: "accept", Content: content}
	}
}

func TestServerInteractions(t *testing.T) {
	for _, tr := range transports {
		for _, pv := range protocols {
			t.Run(tr.name+"/"+pv.name, func(t *testing.T) {
				cases := []struct {
					name   string
					tool   string
					answer func(*sdk.ElicitParams) *sdk.ElicitResult
					want   string
					isErr  bool
					check  func(t *testing.T, p *sdk.ElicitParams)
				}{
					{name: "allow", tool: "danger", answer: accept(map[string]any{"decision": "allow"}), want: "deleted (allow)",
						check: func(t *testing.T, p *sdk.ElicitParams) {
							if !strings.Contains(p.Message, "rm -rf build/") || !strings.Contains(p.Message, "delete build") {
								t.Errorf("confirmation message = %q", p.Message)
							}
						}},
					{name: "reject", tool: "danger", answer: accept(map[string]any{"decision": "reject", "reason": "not today"}), want: "rejected: not today", isErr: true},
					{name: "declined form", tool: "danger", answer: func(*sdk.ElicitParams) *sdk.ElicitResult { return &sdk.ElicitResult{Action: "decline"} },
						want: "rejected: The user declined the approval request.", isErr: true},
					{name: "select", tool: "pick", answer: accept(map[string]any{"value": "blue"}), want: "picked blue",
						check: func(t *testing.T, p *sdk.ElicitParams) {
							b, _ := json.Marshal(p.RequestedSchema)
							if !strings.Contains(string(b), `"enum":["red","green","blue"]`) || !strings.Contains(string(b), `"default":"green"`) {
								t.Errorf("select schema = %s", b)
							}
						}},
					{name: "text", tool: "ask_name", answer: accept(map[string]any{"value": "Grace"}), want: "hello Grace"},
					{name: "secret by url", tool: "login", answer: openSecretPage(t, "s3cret-value"), want: "key of 12 characters accepted",
						check: func(t *testing.T, p *sdk.ElicitParams) {
							if p.Mode != "url" || !strings.HasPrefix(p.URL, "http://127.0.0.1:") {
								t.Errorf("secret elicitation = %+v", p)
							}
						}},
				}
				srv := newTestServer(t, nil)
				for _, tc := range cases {
					t.Run(tc.name, func(t *testing.T) {
						a := &answerer{fn: tc.answer}
						cs := goClient(t, tr.connect(t, srv), pv.version, a.handle, formAndURL, nil)
						res := call(t, cs, tc.tool, nil)
						if got := textOf(t, res); got != tc.want || res.IsError != tc.isErr {
							t.Errorf("%s = %v %q, want %v %q", tc.tool, res.IsError, got, tc.isErr, tc.want)
						}
						if len(a.asked) != 1 {
							t.Fatalf("asked %d times", len(a.asked))
						}
						if tc.check != nil {
							tc.check(t, a.asked[0])
						}
						for _, p := range a.asked {
							if b, _ := json.Marshal(p); strings.Contains(string(b), "s3cret") {
								t.Errorf("the secret travelled through the client: %s", b)
							}
						}
					})
				}
			})
		}
	}
}

// openSecretPage plays the person who opens the URL of a URL elicitation
// and types the secret into lcp's page.
func openSecretPage(t *testing.T, secret string) func(*sdk.ElicitParams) *sdk.ElicitResult {
	return func(p *sdk.ElicitParams) *sdk.ElicitResult {
		go func() {
			resp, err := http.Get(p.URL)
			if err != nil {
				t.Errorf("GET secret page: %v", err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(body), `type="password"`) || !strings.Contains(string(body), "API key") {
				t.Errorf("secret page = %s", body)
			}
			resp, err = http.PostForm(p.URL, url.Values{"value": {secret}, "action": {"submit"}})
			if err != nil {
				t.Errorf("POST secret page: %v", err)
				return
			}
			resp.Body.Close()
			// The page is one-time.
			resp, err = http.Get(p.URL)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusNotFound {
					t.Errorf("second GET of the secret page: %d", resp.StatusCode)
				}
			}
		}()
		return &sdk.ElicitResult{Action: "accept"}
	}
}

func TestServerAlwaysIsRemembered(t *testing.T) {
	srv := newTestServer(t, nil)
	for _, pv := range protocols {
		t.Run(pv.name, func(t *testing.T) {
			a := &answerer{fn: accept(map[string]any{"decision": "always"})}
			cs := goClient(t, transports[0].connect(t, srv), pv.version, a.handle, formAndURL, nil)
			for i := range 3 {
				if got := textOf(t, call(t, cs, "danger", nil)); got != "deleted (always)" {
					t.Errorf("call %d = %q", i, got)
				}
			}
			if len(a.asked) != 1 {
				t.Errorf("asked %d times, want once", len(a.asked))
			}
		})
	}
}

func TestServerWithoutElicitation(t *testing.T) {
	for _, pv := range protocols {
		t.Run(pv.name, func(t *testing.T) {
			srv := newTestServer(t, nil)
			cs := goClient(t, transports[0].connect(t, srv), pv.version, nil, &sdk.ClientCapabilities{}, nil)
			res := call(t, cs, "danger", nil)
			if !res.IsError || !strings.Contains(textOf(t, res), "does not support elicitation") {
				t.Errorf("danger = %v %q", res.IsError, textOf(t, res))
			}
			// The client can tell a refusal from a failure.
			if note, _ := res.Meta["lcp/rejected"].(string); !strings.HasPrefix(note, "Rejected by the operator: ") || !strings.Contains(note, "does not support elicitation") {
				t.Errorf("danger's _meta = %v", res.Meta)
			}
			// A secret is refused with a reason even to a client with forms.
			a := &answerer{fn: accept(map[string]any{"value": "x"})}
			cs = goClient(t, transports[0].connect(t, srv), pv.version, a.handle, &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}}}, nil)
			res = call(t, cs, "login", nil)
			if !res.IsError || !strings.Contains(textOf(t, res), "URL-mode elicitation") {
				t.Errorf("login = %v %q", res.IsError, textOf(t, res))
			}
			if len(a.asked) != 0 {
				t.Errorf("the client was asked %d times", len(a.asked))
			}
		})
	}
	t.Run("allow policy", func(t *testing.T) {
		srv := newTestServer(t, &ServerOptions{Unattended: AllowUnattended})
		cs := goClient(t, transports[0].connect(t, srv), "2025-11-25", nil, &sdk.ClientCapabilities{}, nil)
		if got := textOf(t, call(t, cs, "danger", nil)); got != "deleted (allow)" {
			t.Errorf("danger = %q", got)
		}
		if got := textOf(t, call(t, cs, "pick", nil)); got != "picked green" {
			t.Errorf("pick = %q", got)
		}
	})
}

func TestServerCancellation(t *testing.T) {
	for _, tr := range transports {
		for _, pv := range protocols {
			t.Run(tr.name+"/"+pv.name, func(t *testing.T) {
				srv := newTestServer(t, nil)
				cs := goClient(t, tr.connect(t, srv), pv.version, nil, nil, nil)
				slowStarted.reset()
				slowCancelled.reset()
				ctx, cancel := context.WithCancel(context.Background())
				errc := make(chan error, 1)
				go func() {
					_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 20000}})
					errc <- err
				}()
				slowStarted.wait(t, 5*time.Second)
				cancel()
				if err := <-errc; err == nil {
					t.Error("the cancelled call succeeded")
				}
				slowCancelled.wait(t, 5*time.Second)
			})
		}
	}
}

func TestServerProgress(t *testing.T) {
	for _, tr := range transports {
		for _, pv := range protocols {
			t.Run(tr.name+"/"+pv.name, func(t *testing.T) {
				srv := newTestServer(t, nil)
				var mu sync.Mutex
				var got []float64
				cs := goClient(t, tr.connect(t, srv), pv.version, nil, nil, func(r *sdk.ProgressNotificationClientRequest) {
					mu.Lock()
					got = append(got, r.Params.Progress)
					mu.Unlock()
				})
				p := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 300}}
				p.SetProgressToken("tok-1")
				res, err := cs.CallTool(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError || textOf(t, res) != "finished" {
					t.Fatalf("slow = %v %q", res.IsError, textOf(t, res))
				}
				eventually(func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= 3 })
				mu.Lock()
				defer mu.Unlock()
				if len(got) < 3 {
					t.Fatalf("%d progress notifications", len(got))
				}
				for i := 1; i < len(got); i++ {
					if got[i] <= got[i-1] {
						t.Errorf("progress not increasing: %v", got)
					}
				}
			})
		}
	}
}

func TestServerSessionsAreSeparate(t *testing.T) {
	for _, tr := range transports {
		for _, pv := range protocols {
			t.Run(tr.name+"/"+pv.name, func(t *testing.T) {
				srv := newTestServer(t, nil)
				var asked [2]atomic.Int32
				var sessions [2]*sdk.ClientSession
				// Each session's first question stays open until the other
				// session's first question is open too: the two overlap.
				var open sync.WaitGroup
				open.Add(2)
				bothOpen := make(chan struct{})
				go func() { open.Wait(); close(bothOpen) }()
				for i, name := range []string{"Ada", "Bob"} {
					sessions[i] = goClient(t, tr.connect(t, srv), pv.version, func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
						if asked[i].Add(1) == 1 {
							open.Done()
							select {
							case <-bothOpen:
							case <-time.After(2 * time.Minute): // a hang detector
								return nil, errors.New("the other session's question never came")
							}
						}
						return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"value": name}}, nil
					}, formAndURL, nil)
				}
				var wg sync.WaitGroup
				var results [2]string
				for i := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 3 {
							results[i] = textOf(t, call(t, sessions[i], "ask_name", nil))
						}
					}()
				}
				wg.Wait()
				if results[0] != "hello Ada" || results[1] != "hello Bob" {
					t.Errorf("results = %q", results)
				}
				if asked[0].Load() != 3 || asked[1].Load() != 3 {
					t.Errorf("asked %d and %d times", asked[0].Load(), asked[1].Load())
				}
			})
		}
	}
}
