package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

func ExampleNormalize() {
	// What a Python tool returned, as JSON.
	res, _ := tool.Normalize(json.RawMessage(`{"return_code": 2, "stdout": "", "stderr": "no such file"}`))
	fmt.Println(res.Success, res.StatusCode, res.Error)
	// Output: false 500 Tool failed with return_code 2
}

// A host with an event loop drives a call step by step: each Request is
// shown to someone and answered, until the Result arrives.
func ExampleHandler() {
	type in struct {
		Folder string `json:"folder"`
	}
	clean, _ := native.Typed("clean", "Deletes a build folder.", func(ctx context.Context, v in) (string, error) {
		d, reason, err := tool.Confirm(ctx, "rm -rf "+v.Folder, "Delete "+v.Folder, nil)
		if err != nil {
			return "", err
		}
		if d == tool.Reject {
			return "kept " + v.Folder + ": " + reason, nil
		}
		return "deleted " + v.Folder, nil
	})
	ts, _ := native.New(nil, clean.Interactive(tool.Capabilities{Confirm: true}))

	ctx := context.Background()
	h, _ := ts.Handler(ctx, "clean")
	step, _ := h.Invoke(ctx, tool.Invocation{Arguments: json.RawMessage(`{"folder":"dist"}`)})
	for step.Request != nil {
		fmt.Println("asked:", step.Request.Kind, step.Request.Source)
		step, _ = h.Respond(ctx, step.Request.Declined("not before the release"))
	}
	fmt.Println(step.Result.Text())
	// Output:
	// asked: confirm rm -rf dist
	// kept dist: not before the release
}

// Simple hosts use the blocking Call with callbacks.
func ExampleCall() {
	greet, _ := native.Typed("greet", "Greets someone.", func(ctx context.Context, _ struct{}) (string, error) {
		name, err := tool.AskText(ctx, "Name", "Who are you?", false)
		if err != nil {
			return "", err
		}
		return "Hello, " + name + "!", nil
	})
	ts, _ := native.New(nil, greet.Interactive(tool.Capabilities{Text: true}))
	res, err := tool.Call(context.Background(), ts, "greet", nil, &tool.CallOptions{
		Interact: func(ctx context.Context, r *tool.Request) (any, bool) { return "Ada", true },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())
	// Output: Hello, Ada!
}

// A native tool returns content blocks: MCP clients get them as they are,
// and what an LLM reads is their text.
func ExampleContentResult() {
	png := []byte("\x89PNG\r\n\x1a\n")
	res := tool.ContentResult(tool.TextContent("Sales: up 4%"), tool.ImageContent(png, "image/png"))
	fmt.Println(res.Text())
	for _, c := range res.Content {
		fmt.Println(c.Placeholder())
	}
	// Output:
	// Sales: up 4%
	// Sales: up 4%
	// [image image/png, 8 bytes]
}

// A Python tool returns its blocks under the _lcp_content key; Normalize
// reads them.
func ExampleNormalize_content() {
	res, _ := tool.Normalize(json.RawMessage(`{"output": "a chart", "_lcp_content": [
		{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}`))
	fmt.Println(res.Text(), len(res.Content), res.Content[0].Placeholder())
	// Output: a chart 1 [image image/png, 8 bytes]
}

func ExampleInfo_AppendSpec() {
	infos := []tool.Info{
		{Name: "tool_a", Description: "A.", InputSchema: json.RawMessage(`{"type":"object","properties":{},"required":[]}`)},
		{Name: "tool_b", Description: "B."},
	}
	var buf []byte // one buffer for every spec
	for i := range infos {
		buf = infos[i].AppendSpec(buf[:0], tool.FormatMCP)
		fmt.Println(string(buf))
	}
	// Output:
	// {"name":"tool_a","description":"A.","inputSchema":{"type":"object","properties":{},"required":[]}}
	// {"name":"tool_b","description":"B.","inputSchema":{"type":"object","properties":{},"required":[]}}
}
