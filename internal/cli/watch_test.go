package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/llm/llmtest"
)

// TestMCPWatchOverStdio runs `lcp mcp --watch` with the official Go SDK
// client: an edited tool file reaches the client as
// notifications/tools/list_changed, the new tools are listed and called
// (the first call says the library was reloaded), a file that no longer
// parses keeps its tools, and a deleted folder takes its tools away
// without taking the server down.
func TestMCPWatchOverStdio(t *testing.T) {
	needPython(t)
	dir := pythonTools(t)
	extra := filepath.Join(t.TempDir(), "extra")
	if err := os.MkdirAll(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTool(t, filepath.Join(extra, "more.py"), "def tool_more():\n    \"\"\"More.\"\"\"\n    return 'more'\n")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	env := &Env{Stdin: inR, Stdout: outW, Stderr: &stderr, Getenv: func(string) string { return "" },
		Args: []string{"mcp", "--watch", "--tools", dir, "--tools", extra}}
	done := make(chan int, 1)
	go func() {
		code := Main(env)
		outW.Close()
		done <- code
	}()
	changed := make(chan struct{}, 16)
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr: %s)", err, stderr.String())
	}
	if cs.InitializeResult().Capabilities.Tools == nil || !cs.InitializeResult().Capabilities.Tools.ListChanged {
		t.Error("the server does not declare tools.listChanged")
	}
	list := func() string {
		t.Helper()
		l, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, tl := range l.Tools {
			n = append(n, tl.Name)
		}
		sort.Strings(n)
		return strings.Join(n, ",")
	}
	// waitList waits until the served tools are want, re-listing after
	// each list_changed: a notification may be a late one from an
	// earlier reload (the SDK debounces them by 10 ms, so one reload can
	// be announced twice on a loaded machine), but one always follows
	// the change awaited.
	waitList := func(what, want string) {
		t.Helper()
		deadline := time.After(2 * time.Minute)
		for list() != want {
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("no list_changed to %s after %s (stderr: %s)", want, what, stderr.String())
			}
		}
	}
	if got := list(); got != "tool_add,tool_more,tool_pick_colour" {
		t.Fatalf("tools = %s", got)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tool_add", Arguments: map[string]any{"a": 1}})
	if err != nil || res.IsError {
		t.Fatalf("tool_add: %+v %v", res, err)
	}

	// An edit: a new tool and a changed one.
	writeTool(t, filepath.Join(dir, "demo.py"), `def tool_add(a: int, b: int = 2):
    """Adds two numbers, reloaded."""
    return {"success": True, "output": a + b + 100}


def tool_sub(a: int, b: int):
    """Subtracts."""
    return a - b
`)
	waitList("an edit", "tool_add,tool_more,tool_sub")
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "tool_add", Arguments: map[string]any{"a": 1}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "103" {
		t.Fatalf("tool_add after the edit: %+v %v", res, err)
	}
	if !reloadedNote(res) {
		t.Errorf("the first call after the reload does not say so: %+v", res.StructuredContent)
	}

	// A file that no longer parses keeps its tools; the server serves on.
	reloads := strings.Count(stderr.String(), "lcp mcp: reloaded: ")
	writeTool(t, filepath.Join(dir, "demo.py"), "def tool_add(:\n")
	// The reload happens (stderr says so) and changes no tool, so the
	// server has nothing to announce. The notifications channel is not
	// the witness here: the SDK debounces list_changed by 10 ms, and on a
	// loaded machine the previous reload's removals and additions can be
	// announced in two notifications, the second arriving at any time.
	for deadline := time.Now().Add(2 * time.Minute); strings.Count(stderr.String(), "lcp mcp: reloaded: ") == reloads; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no reload after a syntax error (stderr: %s)", stderr.String())
		}
	}
	lines := strings.Split(stderr.String(), "lcp mcp: reloaded: ")
	if last := strings.SplitN(lines[len(lines)-1], "\n", 2)[0]; last == "" || strings.ContainsAny(last[:1], "+-~") {
		t.Errorf("a file that no longer parses changed the tools: %q", last)
	}
	if got := list(); got != "tool_add,tool_more,tool_sub" {
		t.Fatalf("after a syntax error: %s", got)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "tool_sub", Arguments: map[string]any{"a": 5, "b": 3}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "2" {
		t.Fatalf("tool_sub with a broken file: %+v %v", res, err)
	}

	// A deleted folder: its tools go, the rest serves on.
	if err := os.RemoveAll(extra); err != nil {
		t.Fatal(err)
	}
	waitList("a deleted folder", "tool_add,tool_sub")
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "tool_sub", Arguments: map[string]any{"a": 5, "b": 3}})
	if err != nil || res.IsError {
		t.Fatalf("tool_sub after the folder went: %+v %v", res, err)
	}
	if !strings.Contains(stderr.String(), "lcp mcp: reloaded: +tool_sub") {
		t.Errorf("stderr: %s", stderr.String())
	}
	cs.Close()
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d, stderr: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("lcp mcp --watch did not exit when stdin closed")
	}
}

func writeTool(t *testing.T, path, src string) {
	t.Helper()
	// Write then rename, as editors do, so that a reader never sees half
	// a file here (the half-written case has its own test in binding).
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// reloadedNote reports whether an MCP result carries the reload note.
func reloadedNote(res *sdk.CallToolResult) bool {
	raw, _ := json.Marshal(res)
	return strings.Contains(string(raw), "reloaded from disk")
}

// TestMCPWatchTypeScriptClient: the official TypeScript SDK client,
// connected over streamable HTTP to `lcp mcp --watch`, gets
// notifications/tools/list_changed when a tool file is added, lists the
// new tool and calls it.
func TestMCPWatchTypeScriptClient(t *testing.T) {
	needPython(t)
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	nodeDir, _ := filepath.Abs("../../mcp/testdata/node")
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("the npm peers are not installed: run `npm ci` in mcp/testdata/node")
	}
	dir := pythonTools(t)
	// The peer script sends no token: the loopback opt-out of --no-token.
	o := &MCPOptions{http: "127.0.0.1:0", useHTTP: true, noToken: true, approval: approvalFlags{approve: "ask"}, watch: watchFlags{watch: true}}
	o.inv.tools = []string{dir}
	srv := startMCP(t, o)
	url, stderr := srv.URL, srv.Stderr
	arg, _ := json.Marshal(map[string]any{"url": url, "call": "tool_new", "args": map[string]any{"x": "7"}})
	cctx, ccancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer ccancel()
	cmd := exec.CommandContext(cctx, "node", "ts_watch.mjs", string(arg))
	cmd.Dir = nodeDir
	var nodeErr syncBuffer
	cmd.Stderr = &nodeErr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"listed"`) {
		_ = cmd.Wait()
		t.Fatalf("node: %q, stderr: %s", lines.Text(), nodeErr.String())
	}
	writeTool(t, filepath.Join(dir, "new.py"), "def tool_new(x: int):\n    \"\"\"New.\"\"\"\n    return x * 6\n")
	if !lines.Scan() {
		_ = cmd.Wait()
		t.Fatalf("node ended early; stderr: %s; lcp: %s", nodeErr.String(), stderr.String())
	}
	var out struct {
		Before, After []string
		Changes       int
		Call          struct {
			IsError bool
			Text    string
			Meta    map[string]any
		}
	}
	if err := json.Unmarshal(lines.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, lines.Bytes())
	}
	_ = cmd.Wait()
	if strings.Join(out.Before, ",") != "tool_add,tool_pick_colour" || strings.Join(out.After, ",") != "tool_add,tool_new,tool_pick_colour" || out.Changes < 1 {
		t.Errorf("the TypeScript client saw %+v", out)
	}
	if out.Call.IsError || out.Call.Text != "42" {
		t.Errorf("tool_new: %+v", out.Call)
	}
	_ = srv.Stop(t)
}

// TestChatWatch: lcp chat --watch offers the model the tools of a file
// added between two turns, and says so on stderr.
func TestChatWatch(t *testing.T) {
	chatNeedPython(t)
	dir := toolFolder(t, map[string]string{"calc.py": calcPy})
	srv := llmtest.New(t, llmtest.Text("one"), llmtest.Text("two"))
	inR, inW := io.Pipe()
	var stdout, stderr syncBuffer
	env := &Env{Stdin: inR, Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" },
		Args: []string{"chat", "--watch", "--tools", dir, "--model", srv.BaseURL()}}
	done := make(chan int, 1)
	go func() { done <- Main(env) }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s; stderr: %s", what, stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	_, _ = io.WriteString(inW, "first\n")
	waitFor("the first answer", func() bool { return strings.Contains(stdout.String(), "one") })
	writeTool(t, filepath.Join(dir, "wave.py"), "def tool_wave(to: str):\n    \"\"\"Waves.\"\"\"\n    return 'waves at ' + to\n")
	waitFor("the reload", func() bool { return strings.Contains(stderr.String(), "lcp chat: reloaded: +tool_wave") })
	_, _ = io.WriteString(inW, "second\n")
	waitFor("the second answer", func() bool { return strings.Contains(stdout.String(), "two") })
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("lcp chat did not end")
	}
	reqs := srv.Requests()
	has := func(r llmtest.Request, name string) bool {
		for _, tl := range r.Tools {
			if strings.Contains(string(tl), `"`+name+`"`) {
				return true
			}
		}
		return false
	}
	if len(reqs) != 2 || has(reqs[0], "tool_wave") || !has(reqs[1], "tool_wave") || !has(reqs[1], "tool_add") {
		t.Errorf("the model was offered %d requests' tools: %v", len(reqs), reqs)
	}
}
