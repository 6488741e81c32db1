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

// reporter is a Host that also takes a call's progress and log records.
type reporter struct {
	worker.Host // nil: the tool asks nothing else
	last        worker.Progress
	logs        []string
}

func (r *reporter) Progress(ctx context.Context, p worker.Progress) { r.last = p }

func (r *reporter) Log(ctx context.Context, rec worker.LogRecord) {
	r.logs = append(r.logs, rec.Level+": "+rec.Message)
}

func ExampleProgressHost() {
	dir, _ := os.MkdirTemp("", "lcp-example")
	defer os.RemoveAll(dir)
	lib := filepath.Join(dir, "convert.py")
	os.WriteFile(lib, []byte(`
def tool_convert(pages: int, progress_handler, log_handler):
    """Converts a document, page by page."""
    for page in range(1, pages + 1):
        progress_handler(page, total=pages, message=f"page {page}")
    log_handler(f"{pages} pages converted", level="notice")
    return "done"
`), 0o644)

	pool := worker.NewPool(&worker.Options{Env: []string{"PYTHONDONTWRITEBYTECODE=1"}})
	defer pool.Close()
	host := &reporter{}
	reply, err := pool.Call(context.Background(), &worker.Request{
		Workspace: dir,
		Library:   worker.Library{Path: lib},
		Function:  "tool_convert",
		Args:      json.RawMessage(`{"pages": 500}`),
	}, host)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	// Progress reports are coalesced: the host sees the latest value at
	// least every 50 ms, and always the last one.
	fmt.Println(string(reply.Value), host.last.Progress, *host.last.Total, host.last.Message)
	fmt.Println(host.logs)
	// Output:
	// "done" 500 500 page 500
	// [notice: 500 pages converted]
}
