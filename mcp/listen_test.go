package mcp

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// switchable serves one toolset or another, as a folder being watched
// does when its files change.
type switchable struct {
	sets [2]tool.Toolset
	cur  atomic.Int32
}

func (s *switchable) Tools(ctx context.Context) ([]tool.Info, error) {
	return s.sets[s.cur.Load()].Tools(ctx)
}

func (s *switchable) Handler(ctx context.Context, name string) (tool.Handler, error) {
	return s.sets[s.cur.Load()].Handler(ctx, name)
}

func (s *switchable) Close() error { return nil }

// TestListenToolsChanged: a 2026-07-28 client that listens for tool list
// changes (subscriptions/listen, which its SDK opens) is told when the
// tools change (Server.ToolsChanged, what lcp mcp --watch calls).
func TestListenToolsChanged(t *testing.T) {
	mk := func(name string) tool.Toolset {
		tl, err := native.Func(tool.Info{Name: name, Description: "A tool.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, map[string]any) (any, error) { return name, nil })
		if err != nil {
			t.Fatal(err)
		}
		ts, err := native.New(nil, tl)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	ts := &switchable{sets: [2]tool.Toolset{mk("before"), mk("after")}}
	srv := NewServer(ts, nil)
	t.Cleanup(func() { srv.Close() })
	url := serveHTTP(t, srv, nil)
	changed := make(chan struct{}, 4)
	c := sdk.NewClient(&sdk.Implementation{Name: "listener", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	ts.cur.Store(1)
	if err := srv.ToolsChanged(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed on the listen stream")
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "after" {
		t.Fatalf("tools after the change: %+v, %v", res, err)
	}
}
