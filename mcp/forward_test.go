package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStatelessReplicasKeepTheCallLive: behind round robin, a call that
// appends to a file and then asks twice is kept live on the replica that
// started it; the retries that reach the other replica are forwarded
// there; the file gets one line.
func TestStatelessReplicasKeepTheCallLive(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	key := []byte("a key every replica shares")
	ids := []string{"a", "b"}
	handlers := make([]http.Handler, 2)
	var servers []*httptest.Server
	var forwarded atomic.Int64
	for i := range ids {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(forwardedHeader) != "" {
				forwarded.Add(1)
			}
			handlers[i].ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		servers = append(servers, ts)
	}
	var targets []*url.URL
	for i, id := range ids {
		other := servers[1-i].URL + "/mcp"
		srv := NewServer(mrtrTools(t, file), &ServerOptions{StateKey: key, ReplicaID: id, Replicas: map[string]string{ids[1-i]: other}})
		t.Cleanup(func() { srv.Close() })
		handlers[i] = srv.Handler(&HTTPOptions{Stateless: true})
		u, _ := url.Parse(servers[i].URL + "/mcp")
		targets = append(targets, u)
	}
	rr := &roundRobin{targets: targets, served: map[string]int{}}
	elicit := func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		if strings.Contains(req.Params.Message, "Who?") {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"value": "Ada"}}, nil
		}
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
	}
	cs := goClient(t, &sdk.StreamableClientTransport{Endpoint: targets[0].String(), HTTPClient: &http.Client{Transport: rr}}, "2026-07-28", elicit, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 2 {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "append", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, res); got != "allow by Ada" {
			t.Errorf("result %q", got)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "appended\nappended\n" {
		t.Errorf("two calls appended %d lines", strings.Count(string(b), "appended"))
	}
	if forwarded.Load() == 0 {
		t.Error("no retry was forwarded")
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if len(rr.served) != 2 {
		t.Errorf("replicas used: %v", rr.served)
	}
}

// FuzzTripState: a requestState from the wire never panics the decoders,
// and only what this server sealed opens.
func FuzzTripState(f *testing.F) {
	s := NewServer(nil, &ServerOptions{StateKey: []byte("k"), ReplicaID: "a", Replicas: map[string]string{"b": "http://127.0.0.1:1/mcp"}})
	good := s.seal(&tripState{V: 2, Trip: "t", Tool: "x", Round: 1, Replica: "b", Expires: 4102444800}) // 2100: the same in every fuzz worker
	f.Add(good)
	f.Add("a.b")
	f.Add("eyJ2IjoyfQ.")
	f.Fuzz(func(t *testing.T, tok string) {
		_ = isTripState(tok)
		st, err := s.openTripState(tok)
		if err == nil && tok != good && st.Trip == "" {
			t.Fatalf("opened %q as %+v", tok, st)
		}
		body, _ := json.Marshal(map[string]any{"method": "tools/call", "params": map[string]any{"requestState": tok}})
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if u := s.forwardTarget(r, body); u != nil && tok != good {
			t.Fatalf("forwarding %q to %v", tok, u)
		}
	})
}
