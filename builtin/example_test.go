package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/tool"
)

func ExampleNew() {
	dir, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(dir)
	ts, err := builtin.New(&builtin.Options{Workspace: dir})
	if err != nil {
		panic(err)
	}
	defer ts.Close()
	ctx := context.Background()

	res, _ := tool.Call(ctx, ts, "tool_write_file", json.RawMessage(`{"file_name":"notes/todo.md","content":"- ship it\n"}`), nil)
	fmt.Println(res.Text())
	res, _ = tool.Call(ctx, ts, "tool_read_file", json.RawMessage(`{"file_name":"notes/todo.md"}`), nil)
	fmt.Printf("%q\n", res.Text())
	res, _ = tool.Call(ctx, ts, "tool_read_file", json.RawMessage(`{"file_name":"/etc/passwd"}`), nil)
	fmt.Println(res.Success, res.Text())
	// Output:
	// Wrote 10 bytes to 'notes/todo.md'.
	// "- ship it\n"
	// false '/etc/passwd' is outside the workspace: use a path relative to the workspace, without .. leading out or links pointing out.
}
