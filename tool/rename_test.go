package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

func echoTool(t testing.TB, name string) *native.Tool {
	t.Helper()
	nt, err := native.Func(tool.Info{Name: name, Description: "Says its name."}, func(ctx context.Context, _ map[string]any) (any, error) {
		return tool.CallFromContext(ctx).Tool, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return nt
}

func TestRename(t *testing.T) {
	ctx := context.Background()
	ts, err := native.New(nil, echoTool(t, "tool_fetch"), echoTool(t, "fetch"), echoTool(t, "other"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := tool.Rename(ts, map[string]string{"tool_fetch": "fetch"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	infos, err := r.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range infos {
		names = append(names, i.Name)
	}
	if want := []string{"fetch", "other"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v (the renamed tool hides the one it replaces)", names, want)
	}
	res, err := tool.Call(ctx, r, "fetch", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Text(); got != "tool_fetch" {
		t.Errorf("fetch ran %s, want tool_fetch (the call runs as the tool itself)", got)
	}
	if _, err := tool.Call(ctx, r, "other", nil, nil); err != nil {
		t.Errorf("other: %v", err)
	}
	var unknown *tool.UnknownToolError
	if _, err := r.Handler(ctx, "tool_fetch"); !errors.As(err, &unknown) {
		t.Errorf("the old name: %v, want an unknown tool", err)
	}
	if _, err := r.Handler(ctx, "nope"); !errors.As(err, &unknown) {
		t.Errorf("nope: %v, want an unknown tool", err)
	}
}

func TestRenameRefusesBadNames(t *testing.T) {
	ts, _ := native.New(nil)
	for _, names := range []map[string]string{
		{"a": "bad name!"},
		{"a": "x", "b": "x"},
		{"a": ""},
	} {
		if _, err := tool.Rename(ts, names); err == nil {
			t.Errorf("Rename(%v): no error", names)
		}
	}
}

// A host serves a Python tool under the name its MCP clients expect.
func ExampleRename() {
	ctx := context.Background()
	fetch, _ := native.Func(tool.Info{Name: "tool_fetch_page", Description: "Fetches a page."}, func(ctx context.Context, args map[string]any) (any, error) {
		return "<html>…</html>", nil
	})
	ts, _ := native.New(nil, fetch)
	served, _ := tool.Rename(ts, map[string]string{"tool_fetch_page": "fetch_page"})
	infos, _ := served.Tools(ctx)
	fmt.Println(infos[0].Name)
	res, _ := tool.Call(ctx, served, "fetch_page", json.RawMessage(`{}`), nil)
	fmt.Println(res.Text())
	// Output:
	// fetch_page
	// <html>…</html>
}
