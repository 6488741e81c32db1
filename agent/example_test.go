package agent_test

import (
	"context"
	"fmt"

	"github.com/lcptools/lcp/agent"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/llm/llmtest"
	"github.com/lcptools/lcp/native"
)

func ExampleRun() {
	type In struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add, _ := native.Typed("tool_add", "Adds two integers.", func(ctx context.Context, in In) (int, error) {
		return in.A + in.B, nil
	})
	ts, _ := native.New(nil, add)
	defer ts.Close()

	// A scripted model: first a tool call, then the answer.
	srv := llmtest.NewServer(
		llmtest.Calls(llmtest.Call("call_1", "tool_add", `{"a":2,"b":3}`)),
		llmtest.Text("2 + 3 = 5"),
	)
	defer srv.Close()
	client := &llm.Client{BaseURL: srv.BaseURL(), Model: "test-model"}

	conv := agent.NewConversation(llm.User("What is 2+3?"))
	res, err := agent.Run(context.Background(), ts, client, conv, &agent.Options{
		OnEvent: func(e agent.Event) {
			if e.Kind == agent.EventToolResult {
				fmt.Printf("%s(%s) -> %s\n", e.Call.Function.Name, e.Call.Function.Arguments, e.Result.Text())
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	fmt.Println(conv.Len(), "messages")
	// Output:
	// tool_add({"a":2,"b":3}) -> 5
	// 2 + 3 = 5
	// 4 messages
}
