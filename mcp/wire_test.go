package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// TestServerWireNames: tools whose names MCP clients refuse ("alias::tool")
// are served under their wire name and called by it.
func TestServerWireNames(t *testing.T) {
	echo, err := native.Func(tool.Info{Name: "remote::echo", Description: "Echoes.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(ctx context.Context, args map[string]any) (any, error) { return args["text"], nil })
	if err != nil {
		t.Fatal(err)
	}
	ts, err := native.New(nil, echo)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(ts, nil)
	t.Cleanup(func() { srv.Close() })
	cs := goClient(t, transports[0].connect(t, srv), protocols[0].version, nil, nil, nil)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "remote__echo" {
		t.Fatalf("tools/list: %+v", list.Tools)
	}
	if res := call(t, cs, "remote__echo", map[string]any{"text": "hi"}); res.IsError || textOf(t, res) != "hi" {
		t.Fatalf("call: %+v", res)
	}
}
