package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// roundRobin sends each request to the next of several replicas.
type roundRobin struct {
	targets []*url.URL
	n       atomic.Int64
	mu      sync.Mutex
	served  map[string]int
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(rr.n.Add(1)) % len(rr.targets)
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = rr.targets[i].Scheme, rr.targets[i].Host, rr.targets[i].Host
	rr.mu.Lock()
	rr.served[rr.targets[i].Host]++
	rr.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// twoQuestions asks for a confirmation, then a name; runs counts how often
// the tool started (each round of a stateless call runs it again).
func twoQuestions(t *testing.T, runs *atomic.Int64) *native.Toolset {
	t.Helper()
	tl, err := native.Func(tool.Info{Name: "deploy", Description: "Deploys after approval.", InputSchema: json.RawMessage(`{"type":"object","properties":{"target":{"type":"string"}}}`)},
		func(ctx context.Context, args map[string]any) (any, error) {
			runs.Add(1)
			d, _, err := tool.Confirm(ctx, "deploy "+args["target"].(string), "deploy", nil)
			if err != nil {
				return nil, err
			}
			if d == tool.Reject {
				return "not deployed", nil
			}
			who, err := tool.AskText(ctx, "Name", "Who deploys?", false)
			if err != nil {
				return nil, err
			}
			return "deployed " + args["target"].(string) + " by " + who + " (" + string(d) + ")", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := native.New(nil, tl.Interactive(tool.Capabilities{Confirm: true, Text: true}))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestStatelessReplicas: a call with two questions, served by two
// stateless replicas in turn, gets its answers through input-required
// results and completes; "always" is taken as "allow".
func TestStatelessReplicas(t *testing.T) {
	var runs atomic.Int64
	key := []byte("a key every replica shares")
	var targets []*url.URL
	for range 2 {
		srv := NewServer(twoQuestions(t, &runs), &ServerOptions{StateKey: key})
		t.Cleanup(func() { srv.Close() })
		ts := httptest.NewServer(srv.Handler(&HTTPOptions{Stateless: true}))
		t.Cleanup(ts.Close)
		u, _ := url.Parse(ts.URL)
		targets = append(targets, u)
	}
	rr := &roundRobin{targets: targets, served: map[string]int{}}
	var asked []string
	elicit := func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		if strings.Contains(req.Params.Message, "Who deploys") {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"value": "Ada"}}, nil
		}
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "always"}}, nil
	}
	cs := goClient(t, &sdk.StreamableClientTransport{Endpoint: targets[0].String(), HTTPClient: &http.Client{Transport: rr}}, "2026-07-28", elicit, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "deploy", Arguments: map[string]any{"target": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "deployed prod by Ada (allow)" {
		t.Errorf("result %q", got)
	}
	if len(asked) != 2 || runs.Load() != 3 {
		t.Errorf("asked %d questions, ran the tool %d times; want 2 and 3", len(asked), runs.Load())
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if len(rr.served) != 2 {
		t.Errorf("replicas used: %v", rr.served)
	}
}

// TestStatelessStateChecks: a request state is refused when another
// server signed it or when it belongs to another call; an old client in
// stateless mode gets the unattended answer.
func TestStatelessStateChecks(t *testing.T) {
	var runs atomic.Int64
	a := NewServer(twoQuestions(t, &runs), &ServerOptions{StateKey: []byte("key a")})
	b := NewServer(twoQuestions(t, &runs), &ServerOptions{StateKey: []byte("key b")})
	t.Cleanup(func() { a.Close(); b.Close() })
	st := a.encodeState(&replayState{V: 1, Tool: "deploy", Args: argsHash(json.RawMessage(`{"target":"prod"}`)), Issued: time.Now().Unix()})
	if _, err := b.decodeState(st); err == nil || !strings.Contains(err.Error(), "share the same token") {
		t.Errorf("state of another key: %v", err)
	}
	got, err := a.decodeState(st)
	if err != nil || got.Args != argsHash(json.RawMessage(`{ "target" : "prod" }`)) {
		t.Errorf("state: %+v, %v", got, err)
	}
	old := a.encodeState(&replayState{V: 1, Tool: "deploy", Issued: time.Now().Add(-time.Hour).Unix()})
	if _, err := a.decodeState(old); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("old state: %v", err)
	}
	if _, err := a.decodeState("garbage"); err == nil {
		t.Error("garbage state accepted")
	}

	url := serveHTTP(t, a, &HTTPOptions{Stateless: true})
	cs := goClient(t, &sdk.StreamableClientTransport{Endpoint: url}, "2025-11-25", nil, nil, nil)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "deploy", Arguments: map[string]any{"target": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "not deployed" {
		t.Errorf("old client, stateless: %q", got)
	}
}

func FuzzDecodeState(f *testing.F) {
	s := NewServer(nil, &ServerOptions{StateKey: []byte("k")})
	f.Add(s.encodeState(&replayState{V: 1, Tool: "x", Issued: time.Now().Unix()}))
	f.Add("a.b")
	f.Fuzz(func(t *testing.T, tok string) {
		_, _ = s.decodeState(tok)
	})
}
