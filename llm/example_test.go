package llm_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/llm/llmtest"
)

func ExampleClient_Chat() {
	// A scripted server stands in for llama.cpp, vLLM or OpenAI.
	srv := llmtest.NewServer(llmtest.Calls(llmtest.Call("call_1", "tool_add", `{"a":2,"b":3}`)))
	defer srv.Close()

	c := &llm.Client{BaseURL: srv.BaseURL(), Model: "test-model"}
	spec := json.RawMessage(`{"type":"function","function":{"name":"tool_add","description":"Adds two integers.",
		"parameters":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}}}`)
	resp, err := c.Chat(context.Background(), &llm.ChatRequest{
		Messages: []llm.Message{llm.User("What is 2+3?")},
		Tools:    []json.RawMessage{spec},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, call := range resp.Message().ToolCalls {
		fmt.Println(call.Function.Name, call.Function.Arguments)
	}
	// Output: tool_add {"a":2,"b":3}
}

func ExampleClient_Generate() {
	srv := llmtest.NewServer(llmtest.Text("A lighthouse stands in the storm."))
	defer srv.Close()

	c := &llm.Client{BaseURL: srv.BaseURL()}
	opts, _ := llm.ParseGenerateOptions(json.RawMessage(`{"n_predict": 128, "temperature": 0.7}`))
	text, err := c.Generate(context.Background(), "Write a one-line caption.", opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(text)
	fmt.Println(string(srv.Requests()[0].Fields["max_tokens"]))
	// Output:
	// A lighthouse stands in the storm.
	// 128
}

func ExampleParseEndpoint() {
	base, model, _ := llm.ParseEndpoint("http://localhost:11434/v1#qwen2.5:7b")
	fmt.Println(base)
	fmt.Println(model)
	// Output:
	// http://localhost:11434/v1
	// qwen2.5:7b
}

func ExampleClient_GenerateImage() {
	// The scripted server answers every image request with a 1x1 PNG.
	srv := llmtest.NewServer()
	defer srv.Close()

	c := &llm.Client{BaseURL: srv.BaseURL(), Model: "sdxl"}
	img, err := c.GenerateImage(context.Background(), &llm.ImageRequest{Prompt: "a lighthouse", Width: 512, Height: 512})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(img.MIMEType, len(img.Data), "bytes")
	fmt.Println(srv.MediaRequests()[0].Field("size"))
	// Output:
	// image/png 69 bytes
	// 512x512
}

func ExampleRoute() {
	fast := llmtest.NewServer(llmtest.Text("from the fast model"))
	defer fast.Close()
	smart := llmtest.NewServer(llmtest.Text("from the smart model"))
	defer smart.Close()

	// Two profiles of one modality; a request names the alias a tool
	// switched to (switch_model), the first profile is the default.
	ep := llm.Route([]llm.Profile{
		{Alias: "fast", Client: &llm.Client{BaseURL: fast.BaseURL()}},
		{Alias: "smart", Client: &llm.Client{BaseURL: smart.BaseURL()}},
	})
	text, _ := ep.GenerateJSON(context.Background(), "hi", json.RawMessage(`{"model": "smart"}`))
	fmt.Println(text)
	// Output: from the smart model
}
