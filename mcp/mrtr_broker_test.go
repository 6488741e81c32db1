package mcp

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

// TestMRTRBrokerHoldsTheRound: while a 2026-07-28 client holds a round,
// the person's request it carries is pending in the call's broker like
// any other: a person who answers it elsewhere first (the web page of
// lcp serve, through Broker.Answer) decides it, the client's always is
// remembered for the next call, and a round whose time runs out is
// withdrawn from the broker with the call ended.
func TestMRTRBrokerHoldsTheRound(t *testing.T) {
	serve := func(t *testing.T, opts *ServerOptions) (*hitl.Broker, func(string, string, sdk.InputResponseMap) (*sdk.CallToolResult, error)) {
		b := hitl.New(nil, nil)
		t.Cleanup(func() { b.Close() })
		opts.Broker = b
		srv := NewServer(mrtrTools(t, filepath.Join(t.TempDir(), "log")), opts)
		t.Cleanup(func() { srv.Close() })
		cs := mrtrClient(t, serveHTTP(t, srv, nil), "token")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		t.Cleanup(cancel)
		return b, func(name, state string, answers sdk.InputResponseMap) (*sdk.CallToolResult, error) {
			return cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{}, RequestState: state, InputResponses: answers})
		}
	}
	decision := func(d string) *sdk.ElicitResult {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": d}}
	}

	t.Run("a person answers elsewhere first", func(t *testing.T) {
		b, call := serve(t, &ServerOptions{})
		res, err := call("gate", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		key := onlyKey(t, res)
		p := b.Pending()
		if len(p) != 1 || p[0].Request.ID != key || p[0].Request.Kind != tool.KindConfirm {
			t.Fatalf("pending in the broker: %+v, want the round's confirmation %q", p, key)
		}
		if err := b.Answer(key, tool.Response{Action: tool.Submit, Value: tool.Allow}); err != nil {
			t.Fatal(err)
		}
		res, err = call("gate", res.RequestState, sdk.InputResponseMap{key: decision("reject")})
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, res); got != "allow" {
			t.Errorf("result %q, want the person's allow", got)
		}
	})

	t.Run("the client's always is remembered", func(t *testing.T) {
		b, call := serve(t, &ServerOptions{})
		res, err := call("gate", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		key := onlyKey(t, res)
		res, err = call("gate", res.RequestState, sdk.InputResponseMap{key: decision("always")})
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, res); got != "always" {
			t.Fatalf("result %q", got)
		}
		if g := b.Grants(); len(g) != 1 || g[0].Label != "remove" {
			t.Errorf("grants %+v, want the approval of remove", g)
		}
		res, err = call("gate", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.NeedsInput() || textOf(t, res) != "always" {
			t.Errorf("second call: %+v, want it approved by the always memory", res)
		}
	})

	t.Run("a round out of time", func(t *testing.T) {
		b, call := serve(t, &ServerOptions{QuestionTimeout: 50 * time.Millisecond})
		res, err := call("gate", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !res.NeedsInput() {
			t.Fatalf("want a round, got %+v", res)
		}
		if !eventually(func() bool { return len(b.Pending()) == 0 }) {
			t.Fatalf("still pending: %+v", b.Pending())
		}
		res, err = call("gate", res.RequestState, sdk.InputResponseMap{onlyKey(t, res): decision("allow")})
		if err == nil || !strings.Contains(err.Error(), "requestState") {
			t.Errorf("retry after the limit: %+v, %v", res, err)
		}
	})
}
