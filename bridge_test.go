package lcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

// The tests of the MCP bridge run real processes: python3 workers, a
// small MCP server in Python (testdata/bridge/fake_mcp.py), the reference
// server @modelcontextprotocol/server-everything over stdio and
// streamable HTTP (installed in mcp/testdata/node), and servers that
// fail in each way a server can.

// everythingScript returns the reference server's program, or skips.
func everythingScript(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the reference MCP server cannot run")
	}
	p, err := filepath.Abs("mcp/testdata/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skip("the npm MCP peers are not installed: run `npm ci` in mcp/testdata/node")
	}
	return p
}

// everythingHTTP starts the reference server over streamable HTTP and
// returns its URL.
func everythingHTTP(t *testing.T, script string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("node", script, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr + "/mcp"
}

// fakeServer is the entry of the Python MCP server of testdata/bridge,
// whose starts are counted in the file pids.
func fakeServer(t *testing.T, alias, pids string) map[string]any {
	t.Helper()
	script, err := filepath.Abs("testdata/bridge/fake_mcp.py")
	if err != nil {
		t.Fatal(err)
	}
	// The fixture records its host pids for the tests of the bridge's
	// sessions: it runs unconfined, as its entry says (the box is
	// package mcp's to test).
	return map[string]any{"alias": alias, "type": "stdio", "command": "python3", "args": []any{script},
		"env": map[string]any{"FAKE_MCP_PIDS": pids}, "timeout": 10, "sandbox": false}
}

// startedPIDs returns the processes the fake server's pid file lists.
func startedPIDs(t *testing.T, pids string) []int {
	t.Helper()
	data, _ := os.ReadFile(pids)
	var out []int
	for _, f := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

func callArgs(alias, name, args string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"server_alias": alias, "mcp_tool_name": name, "arguments": args})
	return b
}

// TestSeedBridgeRunsVerbatim runs the LCP reference's mcp_bridge.py, as
// the seed writes it, against the reference MCP server over stdio and
// streamable HTTP: its tools are called under the seed's "alias::tool_x"
// form, and the server's questions reach the outer call's caller.
func TestSeedBridgeRunsVerbatim(t *testing.T) {
	needPython(t)
	script := everythingScript(t)
	servers := []any{
		map[string]any{"alias": "everything", "type": "stdio", "command": "node", "args": []any{script, "stdio"},
			"sandbox": map[string]any{"read": []any{strings.SplitAfter(script, "node_modules")[0]}}},
		map[string]any{"alias": "web", "type": "http", "url": everythingHTTP(t, script)},
	}
	var mu sync.Mutex
	var asked []*tool.Request
	eng, err := lcp.New(context.Background(), &lcp.Config{
		ToolsFolders:    []string{"testdata/bridge/seed"},
		Workspace:       t.TempDir(),
		HostToolConfigs: map[string]map[string]any{"mcp_bridge": {"servers": servers}},
		Respond: func(_ context.Context, r *tool.Request) tool.Response {
			mu.Lock()
			asked = append(asked, r)
			mu.Unlock()
			return r.Submitted(map[string]any{"name": "Ada Lovelace", "check": true})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	for _, alias := range []string{"everything", "web"} {
		t.Run(alias, func(t *testing.T) {
			res := eng.ExecuteTool(ctx, "tool_call_mcp_tool", callArgs(alias, "echo", `{"message": "hi"}`))
			if !res.Success || res.Text() != "Echo: hi" {
				t.Errorf("echo = %+v", res)
			}
			// The server's elicitation is asked of the person the outer
			// call asks.
			mu.Lock()
			asked = nil
			mu.Unlock()
			res = eng.ExecuteTool(ctx, "tool_call_mcp_tool", callArgs(alias, "trigger-elicitation-request", `{}`))
			if !res.Success || !strings.Contains(res.Text(), "Ada Lovelace") {
				t.Errorf("elicitation = %+v", res)
			}
			mu.Lock()
			// The person sees the question as the outer tool's, with the
			// server's form.
			if len(asked) != 1 || asked[0].Kind != tool.KindForm || asked[0].Tool != "tool_call_mcp_tool" ||
				!strings.Contains(string(asked[0].Schema), `"untitledSingleSelectEnum"`) {
				for _, r := range asked {
					t.Errorf("asked %s %s %s", r.Kind, r.Tool, r.Prompt)
				}
			}
			mu.Unlock()
			res = eng.ExecuteTool(ctx, "tool_call_mcp_tool", callArgs(alias, "no-such-tool", `{}`))
			if res.Success || !strings.Contains(res.Error, "not found on MCP server") {
				t.Errorf("unknown tool = %+v", res)
			}
			res = eng.ExecuteTool(ctx, "tool_call_mcp_tool", callArgs("nowhere", "echo", `{}`))
			if res.Success || !strings.Contains(res.Error, "Server alias 'nowhere' is not configured") {
				t.Errorf("unknown server = %+v", res)
			}
		})
	}
}

// TestBuiltinBridge runs the built-in mcp_bridge library: mounted by name,
// part of the default library only when it is configured, with the seed's
// error when it is not.
func TestBuiltinBridge(t *testing.T) {
	needPython(t)
	ctx := context.Background()
	has := func(eng *lcp.Engine, name string) bool {
		infos, err := eng.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range infos {
			if in.Name == name {
				return true
			}
		}
		return false
	}

	plain, err := lcp.New(ctx, &lcp.Config{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if has(plain, "tool_call_mcp_tool") {
		t.Error("the unconfigured bridge is in the default library")
	}
	if lib := plain.FindLibraryForTool("tool_call_mcp_tool"); lib != "mcp_bridge" {
		t.Errorf("FindLibraryForTool = %q", lib)
	}
	if ok, err := plain.MountToolLibrary("mcp_bridge"); !ok || err != nil {
		t.Fatalf("mount: %v, %v", ok, err)
	}
	res := plain.ExecuteTool(ctx, "tool_call_mcp_tool", callArgs("fs", "read_file", `{}`))
	want := "MCP bridge is not configured. Provide host_tool_configs['mcp_bridge'] with a 'servers' list."
	if res.Success || !strings.Contains(res.Error, want) {
		t.Errorf("unconfigured bridge = %+v", res)
	}

	pids := filepath.Join(t.TempDir(), "pids")
	cfg := map[string]map[string]any{"mcp_bridge": {"servers": []any{fakeServer(t, "fake", pids)}}}
	configured, err := lcp.New(ctx, &lcp.Config{Workspace: t.TempDir(), HostToolConfigs: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer configured.Close()
	if !has(configured, "tool_call_mcp_tool") || !has(configured, "tool_list_mcp_tools") || !has(configured, "tool_write_file") {
		t.Error("the configured bridge is not in the default library")
	}
	res = configured.ExecuteTool(ctx, "tool_call_mcp_tool", callArgs("fake", "add", `{"a": 2, "b": "3"}`))
	if !res.Success || res.Text() != "5" {
		t.Errorf("add = %+v", res)
	}
	res = configured.ExecuteTool(ctx, "tool_list_mcp_tools", nil)
	if !res.Success || !strings.Contains(res.Text(), "fake::add: Adds two numbers.") {
		t.Errorf("list = %+v", res)
	}

	// Beside --tools, only by name.
	withTools, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{"testdata/omni"}, Workspace: t.TempDir(), HostToolConfigs: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer withTools.Close()
	if has(withTools, "tool_call_mcp_tool") {
		t.Error("the bridge joined --tools without being mounted")
	}
	mounted, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{"testdata/omni"}, Workspace: t.TempDir(), HostToolConfigs: cfg, Mount: []string{"mcp_bridge"}})
	if err != nil {
		t.Fatal(err)
	}
	defer mounted.Close()
	if !has(mounted, "tool_call_mcp_tool") {
		t.Error("--mount mcp_bridge did not mount it")
	}
}

// TestBridgeSessionsBelongToTheEngine checks that a server configuration
// is one session shared by calls and libraries, that a worker restart
// keeps it, and that closing the engine ends it.
func TestBridgeSessionsBelongToTheEngine(t *testing.T) {
	needPython(t)
	pids := filepath.Join(t.TempDir(), "pids")
	entry := fakeServer(t, "fake", pids)
	servers := []any{entry}
	eng, err := lcp.New(context.Background(), &lcp.Config{
		ToolsFolders: []string{"testdata/bridge/seed", "testdata/bridge/direct"},
		Workspace:    t.TempDir(),
		HostToolConfigs: map[string]map[string]any{
			"mcp_bridge": {"servers": servers},
			"mcp_direct": {"servers": servers},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var seen []string
	for i := 0; i < 3; i++ {
		res := eng.ExecuteTool(ctx, "tool_call_mcp_tool", callArgs("fake", "pid", `{}`))
		if !res.Success {
			t.Fatalf("pid: %+v", res)
		}
		seen = append(seen, res.Text())
	}
	res := eng.ExecuteTool(ctx, "tool_exec", json.RawMessage(`{"name": "fake::pid"}`))
	var direct struct {
		Success bool   `json:"success"`
		Output  string `json:"output"`
	}
	if err := json.Unmarshal(res.Output, &direct); err != nil || !direct.Success {
		t.Fatalf("direct pid: %s, %v", res.Output, err)
	}
	seen = append(seen, direct.Output)
	for _, s := range seen[1:] {
		if s != seen[0] {
			t.Errorf("calls were served by several processes: %v", seen)
		}
	}
	started := startedPIDs(t, pids)
	if len(started) != 1 || strconv.Itoa(started[0]) != seen[0] {
		t.Fatalf("started %v, served by %v", started, seen)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(started[0]) {
		if time.Now().After(deadline) {
			t.Fatalf("the MCP server %d outlived the engine", started[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBridgeBadServers runs servers that fail in each way: a command that
// exits at once, one that prints junk on stdout, one that never answers,
// and a tool that never answers. Each is a clear 500 (a 504 for the call
// over its time limit) that names the server, within its time limit, and
// the rest of the library works.
func TestBridgeBadServers(t *testing.T) {
	needPython(t)
	pids := filepath.Join(t.TempDir(), "pids")
	servers := []any{
		map[string]any{"alias": "quits", "command": "sh", "args": []any{"-c", "echo 'no config' >&2; exit 3"}},
		map[string]any{"alias": "junk", "command": "sh", "args": []any{"-c", "echo 'this is not JSON-RPC'; cat >/dev/null"}},
		map[string]any{"alias": "mute", "command": "sleep", "args": []any{"600"}, "timeout": 1},
		map[string]any{"alias": "missing", "command": "/nonexistent/mcp-server"},
		fakeServer(t, "fake", pids),
	}
	eng, err := lcp.New(context.Background(), &lcp.Config{
		Mount:           []string{"mcp_bridge"},
		ToolsFolders:    []string{"testdata/bridge/direct"},
		Workspace:       t.TempDir(),
		HostToolConfigs: map[string]map[string]any{"mcp_bridge": {"servers": servers}, "mcp_direct": {"servers": servers}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	for _, tt := range []struct {
		alias, tool string
		want        string
		within      time.Duration
	}{
		{"quits", "x", `MCP server "quits" exited with status 3; its last output: no config`, time.Minute},
		{"junk", "x", `MCP server "junk" wrote something that is not an MCP message on its standard output`, time.Minute},
		{"mute", "x", `MCP server "mute" did not answer within 1s`, time.Minute},
		{"missing", "x", `its command "/nonexistent/mcp-server" was not found`, time.Minute},
		{"fake", "boom", "boom: it failed", time.Minute},
	} {
		start := time.Now()
		res := eng.ExecuteTool(ctx, "tool_call_mcp_tool", callArgs(tt.alias, tt.tool, `{}`))
		took := time.Since(start)
		if res.Success || res.StatusCode != 500 || !strings.Contains(res.Error, tt.want) {
			t.Errorf("%s: %+v, want a 500 with %q", tt.alias, res, tt.want)
		}
		if took > tt.within {
			t.Errorf("%s took %v", tt.alias, took)
		}
		// The library still works.
		res = eng.ExecuteTool(ctx, "tool_call_mcp_tool", callArgs("fake", "add", `{"a": 1, "b": 2}`))
		if !res.Success || res.Text() != "3" {
			t.Errorf("after %s: add = %+v", tt.alias, res)
		}
	}

	// A call over its time limit: a 504 naming the server's tool; the
	// session stays usable.
	res := eng.ExecuteTool(ctx, "tool_exec", json.RawMessage(`{"name": "fake::hang", "timeout": 0.5}`))
	var hung struct {
		Success    bool   `json:"success"`
		StatusCode int    `json:"status_code"`
		Error      string `json:"error"`
	}
	if err := json.Unmarshal(res.Output, &hung); err != nil || hung.Success || hung.StatusCode != 504 || !strings.Contains(hung.Error, "fake::hang") {
		t.Errorf("hanging tool: %s", res.Output)
	}
	res = eng.ExecuteTool(ctx, "tool_call_mcp_tool", callArgs("fake", "add", `{"a": 1, "b": 2}`))
	if !res.Success || res.Text() != "3" {
		t.Errorf("after the hanging call: add = %+v", res)
	}

	// Listing skips the servers that are down, and says why.
	res = eng.ExecuteTool(ctx, "tool_discover", nil)
	var listed struct {
		Tools       []string          `json:"tools"`
		Unavailable map[string]string `json:"unavailable"`
		Module      []string          `json:"module"`
	}
	if err := json.Unmarshal(res.Output, &listed); err != nil {
		t.Fatalf("discover: %+v", res)
	}
	if strings.Join(listed.Tools, ",") != "fake::add,fake::pid,fake::hang,fake::boom,fake::tool_prefixed" {
		t.Errorf("tools = %v", listed.Tools)
	}
	for _, alias := range []string{"quits", "junk", "mute", "missing"} {
		if !strings.Contains(listed.Unavailable[alias], fmt.Sprintf("%q", alias)) && !strings.Contains(listed.Unavailable[alias], "mcp-server") {
			t.Errorf("unavailable[%s] = %q", alias, listed.Unavailable[alias])
		}
	}
	if strings.Join(listed.Module, " ") != "MCPBinding ::" {
		t.Errorf("module constants = %v", listed.Module)
	}
}

// TestBridgeNames checks the seed's name forms: "alias::tool_x" falls back
// to the server's "x", a server's own tool_ name is kept, and the entry
// forms of the LCP reference (command as a list) are read.
func TestBridgeNames(t *testing.T) {
	needPython(t)
	script, _ := filepath.Abs("testdata/bridge/fake_mcp.py")
	servers := []any{map[string]any{"alias": "listed", "command": []any{"python3", script}, "sandbox": false}}
	eng, err := lcp.New(context.Background(), &lcp.Config{
		ToolsFolders:    []string{"testdata/bridge/direct"},
		Workspace:       t.TempDir(),
		HostToolConfigs: map[string]map[string]any{"mcp_direct": {"servers": servers}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for _, tt := range []struct{ name, want string }{
		{"listed::tool_add", "3"},
		{"listed::add", "3"},
		{"listed::tool_prefixed", "prefixed"},
	} {
		res := eng.ExecuteTool(context.Background(), "tool_exec", json.RawMessage(fmt.Sprintf(`{"name": %q, "params": "{\"a\": 1, \"b\": 2}"}`, tt.name)))
		var r struct {
			Success bool            `json:"success"`
			Output  json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(res.Output, &r); err != nil || !r.Success || strings.Trim(string(r.Output), `"`) != tt.want {
			t.Errorf("%s: %s", tt.name, res.Output)
		}
	}
	for _, tt := range []struct{ name, want string }{
		{"nocolons", "Invalid tool name format"},
		{"listed::", "Invalid tool name format"},
		{"other::add", "Server alias 'other' is not configured (configured: listed)"},
		{"listed::tool_nothing", `Tool 'tool_nothing' not found on MCP server "listed"`},
	} {
		res := eng.ExecuteTool(context.Background(), "tool_exec", json.RawMessage(fmt.Sprintf(`{"name": %q}`, tt.name)))
		var r struct {
			Success bool   `json:"success"`
			Error   string `json:"error"`
		}
		if err := json.Unmarshal(res.Output, &r); err != nil || r.Success || !strings.Contains(r.Error, tt.want) {
			t.Errorf("%s: %s, want %q", tt.name, res.Output, tt.want)
		}
	}
}

// TestBridgeInSandbox checks that a library in the kernel sandbox reaches
// only the MCP servers its host configuration lists: the engine starts
// them outside the sandbox, so a server the library names itself would
// be a way out.
func TestBridgeInSandbox(t *testing.T) {
	needPython(t)
	if st := sandbox.Probe(); !st.Available {
		t.Skipf("the kernel sandbox is unavailable here: %s", st.Reason)
	}
	pids := filepath.Join(t.TempDir(), "pids")
	listed := fakeServer(t, "fake", pids)
	eng, err := lcp.New(context.Background(), &lcp.Config{
		ToolsFolders: []string{"testdata/bridge/direct"},
		Workspace:    t.TempDir(),
		HostToolConfigs: map[string]map[string]any{
			"mcp_direct": {"servers": []any{listed}, "sandbox": "workspace-write"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	exec := func(name string) (ok bool, text string) {
		t.Helper()
		res := eng.ExecuteTool(ctx, "tool_exec", json.RawMessage(fmt.Sprintf(`{"name": %q, "params": "{\"a\": 1, \"b\": 2}"}`, name)))
		var r struct {
			Success bool            `json:"success"`
			Output  json.RawMessage `json:"output"`
			Error   string          `json:"error"`
		}
		if err := json.Unmarshal(res.Output, &r); err != nil {
			t.Fatalf("%s: %+v", name, res)
		}
		return r.Success, string(r.Output) + r.Error
	}
	if ok, text := exec("fake::add"); !ok || !strings.Contains(text, "3") {
		t.Errorf("configured server: %v %s", ok, text)
	}
	// The same program with other arguments is another server.
	other := fakeServer(t, "other", pids)
	other["args"] = append(other["args"].([]any), "--other")
	delete(other, "alias")
	other["server_type"] = other["type"]
	delete(other, "type")
	entry, _ := json.Marshal(other)
	res := eng.ExecuteTool(ctx, "tool_add_server", json.RawMessage(fmt.Sprintf(`{"alias": "other", "entry": %q}`, entry)))
	if !res.Success {
		t.Fatalf("add_server: %+v", res)
	}
	if ok, text := exec("other::add"); ok || !strings.Contains(text, "runs in the sandbox") || !strings.Contains(text, `"other" is not one of them`) {
		t.Errorf("server the library named: %v %s", ok, text)
	}
	if n := len(startedPIDs(t, pids)); n != 1 {
		t.Errorf("%d servers started, want only the configured one", n)
	}
}

// TestSeedBridgeWithoutServers: the LCP reference's mcp_bridge.py, run
// verbatim with no servers configured, fails with the seed's own words,
// the same as the built-in bridge's.
func TestSeedBridgeWithoutServers(t *testing.T) {
	needPython(t)
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{"testdata/bridge/seed"}, Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	want := "MCP call failed: MCP bridge is not configured. Provide host_tool_configs['mcp_bridge'] with a 'servers' list."
	res := eng.ExecuteTool(context.Background(), "tool_call_mcp_tool", callArgs("fs", "read_file", `{}`))
	if res.Success || res.Error != want {
		t.Errorf("error %q, want %q", res.Error, want)
	}
}
