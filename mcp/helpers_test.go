package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}
type greetOut struct {
	Greeting string `json:"greeting"`
}

// testInventory is the toolset the server tests serve: plain, failing,
// interactive and slow native tools.
func testInventory(t testing.TB) *native.Toolset {
	t.Helper()
	must := func(tl *native.Tool, err error) *native.Tool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	lib := tool.Library{ID: "demo", Name: "Demo"}
	obj := func(s string) json.RawMessage { return json.RawMessage(s) }
	tools := []*native.Tool{
		must(native.Typed("greet", "Greets someone.", func(ctx context.Context, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})),
		must(native.Func(tool.Info{Name: "echo", Description: "Echoes text.", InputSchema: obj(`{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"]}`)},
			func(ctx context.Context, args map[string]any) (any, error) {
				return args["text"], nil
			})),
		must(native.Func(tool.Info{Name: "fail", Description: "Always fails.", InputSchema: obj(`{"type":"object"}`)},
			func(ctx context.Context, args map[string]any) (any, error) {
				return map[string]any{"success": false, "error": "it broke"}, nil
			})),
		must(native.Func(tool.Info{Name: "inject", Description: "Returns guidance for the model.", InputSchema: obj(`{"type":"object"}`)},
			func(ctx context.Context, args map[string]any) (any, error) {
				return map[string]any{"success": true, "output": "chart.png written", "prompt_injection": "Show the chart to the user."}, nil
			})),
		must(native.Func(tool.Info{Name: "danger", Description: "Deletes files after approval.", InputSchema: obj(`{"type":"object"}`)},
			func(ctx context.Context, args map[string]any) (any, error) {
				d, reason, err := tool.Confirm(ctx, "rm -rf build/", "delete build", []string{"build/"})
				if err != nil {
					return nil, err
				}
				if d == tool.Reject {
					return map[string]any{"success": false, "error": "rejected: " + reason}, nil
				}
				return "deleted (" + string(d) + ")", nil
			})).Interactive(tool.Capabilities{Confirm: true}).InLibrary(lib),
		must(native.Func(tool.Info{Name: "pick", Description: "Asks for a colour.", InputSchema: obj(`{"type":"object"}`)},
			func(ctx context.Context, args map[string]any) (any, error) {
				c, err := tool.AskSelect(ctx, "Colour", "Pick a colour", []string{"red", "green", "blue"}, "green")
				if err != nil {
					return nil, err
				}
				return "picked " + c, nil
			})).Interactive(tool.Capabilities{Select: true}),
		must(native.Func(tool.Info{Name: "ask_name", Description: "Asks for a name.", InputSchema: obj(`{"type":"object"}`)},
			func(ctx context.Context, args map[string]any) (any, error) {
				n, err := tool.AskText(ctx, "Name", "What is your name?", false)
				if err != nil {
					return nil, err
				}
				return "hello " + n, nil
			})).Interactive(tool.Capabilities{Text: true}),
		must(native.Func(tool.Info{Name: "login", Description: "Asks for an API key.", InputSchema: obj(`{"type":"object"}`)},
			func(ctx context.Context, args map[string]any) (any, error) {
				k, err := tool.AskSecret(ctx, "API key", "Your key for the demo service")
				if err != nil {
					var d *tool.InteractionDeclinedError
					if errors.As(err, &d) {
						return map[string]any{"success": false, "error": "no key: " + d.Reason}, nil
					}
					return nil, err
				}
				return fmt.Sprintf("key of %d characters accepted", len(k)), nil
			})).Interactive(tool.Capabilities{Secret: true}),
		must(native.Func(tool.Info{Name: "ask_model", Description: "Asks the language model of the call (the client's, through sampling).", InputSchema: obj(`{"type":"object","properties":{"question":{"type":"string"}},"required":["question"]}`)},
			func(ctx context.Context, args map[string]any) (any, error) {
				q, _ := args["question"].(string)
				return tool.Generate(ctx, q, json.RawMessage(`{"n_predict":40,"system_prompt":"Answer in one word."}`))
			})),
		must(native.Func(tool.Info{Name: "slow", Description: "Works until cancelled or done.", InputSchema: obj(`{"type":"object","properties":{"ms":{"type":"integer"}}}`)},
			func(ctx context.Context, args map[string]any) (any, error) {
				n, _ := args["ms"].(json.Number)
				ms, _ := n.Int64()
				var deadline <-chan time.Time
				var released <-chan struct{}
				if held, _ := args["held"].(bool); held {
					released = slowGate.channel()
				} else {
					deadline = time.After(time.Duration(ms) * time.Millisecond)
				}
				slowStarted.signal()
				for i := 1; ; i++ {
					select {
					case <-ctx.Done():
						slowCancelled.signal()
						return nil, tool.ContextError(ctx, "slow")
					case <-deadline:
						return "finished", nil
					case <-released:
						return "finished", nil
					case <-time.After(20 * time.Millisecond):
						if i == 1 {
							tool.Log(ctx, "notice", "slow started")
						}
						tool.ReportProgress(ctx, float64(i), 0, "step")
					}
				}
			})),
	}
	ts, err := native.New(nil, tools...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// signal is a channel-backed event the slow tool raises.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) signal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{}, 16)
	}
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

// reset forgets the events of earlier tests.
func (s *signal) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ch = make(chan struct{}, 16)
}

func (s *signal) wait(t *testing.T, d time.Duration) {
	t.Helper()
	s.mu.Lock()
	if s.ch == nil {
		s.ch = make(chan struct{}, 16)
	}
	ch := s.ch
	s.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatal("timed out waiting for the tool")
	}
}

var slowStarted, slowCancelled signal

// slowGate ends the slow tool's calls made with "held": true. A test that
// needs calls in flight while it looks holds them so, and releases them
// when it is done, whatever the machine's speed.
var slowGate gate

// gate is a release that calls wait for.
type gate struct {
	mu sync.Mutex
	ch chan struct{}
}

// channel is closed when the gate opens.
func (g *gate) channel() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
	return g.ch
}

// open releases the calls waiting now; later ones wait for the next open.
func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
}

// serveHTTP serves srv on a loopback test server and returns its URL.
func serveHTTP(t *testing.T, srv *Server, opts *HTTPOptions) string {
	t.Helper()
	ts := httptest.NewServer(srv.Handler(opts))
	t.Cleanup(ts.Close)
	return ts.URL
}

// goClient connects an official Go SDK client to url with an elicitation
// handler; version "" means the newest protocol.
func goClient(t *testing.T, transport sdk.Transport, version string, elicit func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error), caps *sdk.ClientCapabilities, onProgress func(*sdk.ProgressNotificationClientRequest)) *sdk.ClientSession {
	t.Helper()
	opts := &sdk.ClientOptions{ElicitationHandler: elicit, Capabilities: caps}
	if onProgress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { onProgress(r) }
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func textOf(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatalf("no content in %+v", res)
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("first content is %T", res.Content[0])
	}
	return tc.Text
}

// eventually polls cond until it holds, or for two minutes (a hang):
// notifications may be delivered just after the result they preceded.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
