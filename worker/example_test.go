package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lcptools/lcp/worker"
)

func ExamplePool_Call() {
	dir, _ := os.MkdirTemp("", "lcp-example")
	defer os.RemoveAll(dir)
	lib := filepath.Join(dir, "greet.py")
	os.WriteFile(lib, []byte(`
COUNT = 0

def tool_greet(name: str, tool_context=None):
    """Greets someone."""
    global COUNT
    COUNT += 1
    print("greeting", name)  # captured, never part of the result
    return {"output": f"Hello, {name}!", "count": COUNT, "lang": tool_context["lang"]}
`), 0o644)

	pool := worker.NewPool(&worker.Options{Env: []string{"PYTHONDONTWRITEBYTECODE=1"}})
	defer pool.Close()
	for range 2 {
		reply, err := pool.Call(context.Background(), &worker.Request{
			Workspace: dir,
			Library:   worker.Library{Path: lib},
			Function:  "tool_greet",
			Args:      json.RawMessage(`{"name": "Ada", "unknown": "dropped"}`),
			Context:   json.RawMessage(`{"lang": "en"}`),
		}, nil)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(string(reply.Value))
	}
	// Output:
	// {"output":"Hello, Ada!","count":1,"lang":"en"}
	// {"output":"Hello, Ada!","count":2,"lang":"en"}
}
