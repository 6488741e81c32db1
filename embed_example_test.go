package lcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// cleanCache is a native Go tool that asks the operator before it acts
// and reports its progress.
func cleanCache() *native.Tool {
	clean := func(ctx context.Context, args map[string]any) (any, error) {
		dir := args["dir"].(string)
		decision, reason, err := tool.Confirm(ctx, "rm -rf "+dir, "clean the cache", nil)
		if err != nil {
			return nil, err // the call was cancelled
		}
		if decision == tool.Reject {
			return map[string]any{"success": false, "error": "Not cleaned: " + reason}, nil
		}
		tool.ReportProgress(ctx, 1, 1, "removed "+dir)
		return "Cleaned " + dir + ".", nil
	}
	t, err := native.Func(tool.Info{
		Name:        "tool_clean_cache",
		Description: "Deletes a build cache folder after the operator approves.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {
  "dir": {"type": "string", "description": "The cache folder."}}, "required": ["dir"]}`),
	}, clean)
	if err != nil {
		panic(err)
	}
	yes := true
	return t.Interactive(tool.Capabilities{Confirm: true}).
		Annotate(&tool.Annotations{Title: "Clean the cache", DestructiveHint: &yes})
}

// An engine with a native tool, a person in the loop and the calls'
// events: the tool asks for approval, the broker puts the question to
// the front end (here a callback that approves; a terminal would be
// term.New(os.Stdin, os.Stderr)), and progress arrives as an event.
func Example() {
	ctx := context.Background()
	natives, err := native.New(nil, cleanCache())
	if err != nil {
		panic(err)
	}
	broker := hitl.New(hitl.Callbacks{
		Confirm: func(source, label string, argv []string) (decision, reason string) {
			fmt.Printf("asked to %s: %s\n", label, source)
			return "allow", ""
		},
	}, nil)
	defer broker.Close()
	eng, err := lcp.New(ctx, &lcp.Config{
		Toolsets: []tool.Toolset{natives},
		Respond:  broker.Respond,
		OnEvent: func(e tool.Event) {
			if e.Kind == tool.EventProgress {
				fmt.Printf("progress of %s: %s\n", e.Tool, e.Text)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	defer eng.Close()

	res, err := eng.Call(ctx, "tool_clean_cache", json.RawMessage(`{"dir": "build/.cache"}`), nil)
	if err != nil {
		panic(err) // an engine error: unknown tool, bad arguments, cancelled...
	}
	fmt.Println(res.Success, res.Text())
	// Output:
	// asked to clean the cache: rm -rf build/.cache
	// progress of tool_clean_cache: removed build/.cache
	// true Cleaned build/.cache.
}

// An approval policy decides without a person: here every confirmation
// is rejected, the tool fails with its own text (what the model reads),
// and the result says it was a refusal (what a person reads).
func Example_approvalPolicy() {
	ctx := context.Background()
	natives, _ := native.New(nil, cleanCache())
	broker := hitl.New(hitl.Unattended{}, &hitl.Options{Policy: hitl.Policy{Approve: hitl.ApproveReject}})
	defer broker.Close()
	eng, err := lcp.New(ctx, &lcp.Config{Toolsets: []tool.Toolset{natives}, Respond: broker.Respond})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	res := eng.ExecuteTool(ctx, "tool_clean_cache", json.RawMessage(`{"dir": "build/.cache"}`))
	fmt.Println(res.StatusCode, res.Error)
	fmt.Println(tool.RejectionOf(res))
	// Output:
	// 500 Not cleaned: Rejected by the host's approval policy: no action is approved.
	// Rejected by the operator: Rejected by the host's approval policy: no action is approved.
}

// Serving the inventory over MCP: here to a client in the same process;
// srv.ServeStdio(ctx) serves a client that started this program, and
// srv.Serve(ctx, ln, opts) streamable HTTP.
func Example_serveMCP() {
	ctx := context.Background()
	natives, _ := native.New(nil, cleanCache())
	eng, err := lcp.New(ctx, &lcp.Config{Toolsets: []tool.Toolset{natives}})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	srv := mcp.NewServer(eng, &mcp.ServerOptions{Unattended: mcp.AllowUnattended})
	defer srv.Close()

	serverEnd, clientEnd := sdk.NewInMemoryTransports()
	go func() { _ = srv.Run(ctx, serverEnd) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "example", Version: "1"}, nil)
	session, err := client.Connect(ctx, clientEnd, nil)
	if err != nil {
		panic(err)
	}
	defer session.Close()
	list, _ := session.ListTools(ctx, nil)
	for _, t := range list.Tools {
		if t.Name == "tool_clean_cache" {
			fmt.Println(t.Name, "-", t.Title, "- destructive:", *t.Annotations.DestructiveHint)
		}
	}
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "tool_clean_cache", Arguments: map[string]any{"dir": "tmp"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*sdk.TextContent).Text)
	// Output:
	// tool_clean_cache - Clean the cache - destructive: true
	// Cleaned tmp.
}

// TestEmbeddingDoc: every line of code in docs/embedding.md is a line of
// the runnable examples of this package, so that the page shows code that
// runs.
func TestEmbeddingDoc(t *testing.T) {
	doc, err := os.ReadFile("docs/embedding.md")
	if err != nil {
		t.Fatal(err)
	}
	var examples []byte
	for _, f := range []string{"embed_example_test.go", "example_test.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, b...)
	}
	known := map[string]bool{}
	for _, l := range strings.Split(string(examples), "\n") {
		known[strings.TrimSpace(l)] = true
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 8 {
		t.Fatalf("only %d Go blocks in docs/embedding.md", len(blocks))
	}
	for _, b := range blocks {
		for _, l := range strings.Split(b[1], "\n") {
			if l = strings.TrimSpace(l); l != "" && !known[l] {
				t.Errorf("docs/embedding.md shows a line the examples do not have: %s", l)
			}
		}
	}
}

// The seeds' binding config, read by its key names: tools_folder_path is
// the alias of tools_folders.
func Example_bindingConfig() {
	cfg, err := lcp.ParseBindingConfig([]byte(`{"tools_folder_path": "./my_tools"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.ToolsFolders)
	// Output: [./my_tools]
}

// A typed tool with a scalar input takes one required argument, value.
func Example_scalarInput() {
	ctx := context.Background()
	double, err := native.Typed("double", "Doubles a number.",
		func(_ context.Context, v int64) (int64, error) { return v * 2, nil })
	if err != nil {
		panic(err)
	}
	natives, err := native.New(nil, double)
	if err != nil {
		panic(err)
	}
	res, err := tool.Call(ctx, natives, "double", json.RawMessage(`{"value": 21}`), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Success, res.Text())
	// Output: true 42
}

// The engine's confirmation handler can be swapped at any time; it
// reaches tools already loaded and calls in flight.
func Example_swapConfirmHandler() {
	ctx := context.Background()
	natives, _ := native.New(nil, cleanCache())
	eng, err := lcp.New(ctx, &lcp.Config{Toolsets: []tool.Toolset{natives}})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	eng.SetConfirmHandler(func(ctx context.Context, r *tool.Request) (tool.Decision, string) {
		if strings.HasPrefix(r.Label, "delete") {
			return tool.Reject, "deleting is not allowed in this session"
		}
		return tool.Allow, ""
	})
	res := eng.ExecuteTool(ctx, "tool_clean_cache", json.RawMessage(`{"dir": "build/.cache"}`))
	fmt.Println(res.Success, res.Text())
	// Output: true Cleaned build/.cache.
}
