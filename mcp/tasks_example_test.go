package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// A call run as a task: Start answers at once, the call runs on, and the
// task's record says when it is done and what it returned.
func ExampleNewTasks() {
	greet, _ := native.Func(tool.Info{Name: "greet", Description: "Greets someone.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, args map[string]any) (any, error) {
			return fmt.Sprintf("Hello, %v!", args["name"]), nil
		})
	ts, _ := native.New(nil, greet)
	done := make(chan string, 1)
	tasks := mcp.NewTasks(ts, &mcp.TaskOptions{OnStatus: func(t mcp.Task) {
		if t.Status.Terminal() {
			done <- t.ID
		}
	}})
	defer tasks.Close()

	task, err := tasks.Start(context.Background(), "ada", "greet", json.RawMessage(`{"name":"World"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("started:", task.Status)
	id := <-done
	task, _ = tasks.Get(context.Background(), "ada", id)
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(task.Result, &res)
	fmt.Println("now:", task.Status, res.Content[0].Text)
	// Output:
	// started: working
	// now: completed Hello, World!
}
