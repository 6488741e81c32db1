package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

// env is one built-in toolset over a temporary workspace, with a record of
// the confirmations it asked for.
type env struct {
	t        *testing.T
	ws       string
	ts       tool.Toolset
	asked    []*tool.Request
	decision tool.Decision
	reason   string

	mu     sync.Mutex
	events []tool.Event // of every call
}

func newEnv(t *testing.T, autonomy string) *env {
	t.Helper()
	ws := t.TempDir()
	cfg := map[string]map[string]any{}
	if autonomy != "" {
		for _, lib := range []string{builtin.WorkspaceTools, builtin.SystemShell, builtin.ExecutePython} {
			cfg[lib] = map[string]any{"autonomy_level": autonomy}
		}
	}
	ts, err := builtin.New(&builtin.Options{Workspace: ws, Configs: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	return &env{t: t, ws: ws, ts: ts, decision: tool.Reject, reason: "not now"}
}

// call runs a tool and returns its result as the LCP object.
func (e *env) call(name string, args any) map[string]any {
	e.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := tool.Call(context.Background(), e.ts, name, raw, &tool.CallOptions{
		Confirm: func(ctx context.Context, r *tool.Request) (tool.Decision, string) {
			e.asked = append(e.asked, r)
			return e.decision, e.reason
		},
		OnEvent: func(ev tool.Event) {
			e.mu.Lock()
			e.events = append(e.events, ev)
			e.mu.Unlock()
		},
	})
	if err != nil {
		e.t.Fatalf("%s(%s): %v", name, raw, err)
	}
	b, _ := json.Marshal(res)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

func (e *env) write(name, content string) {
	e.t.Helper()
	p := filepath.Join(e.ws, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func wantSuccess(t *testing.T, res map[string]any, want bool) {
	t.Helper()
	if res["success"] != want {
		t.Fatalf("success = %v, want %v: %v", res["success"], want, res)
	}
}

func TestToolList(t *testing.T) {
	e := newEnv(t, "")
	infos, err := e.ts.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range infos {
		names = append(names, i.Library.ID+"."+i.Name)
		var schema map[string]any
		if err := json.Unmarshal(i.InputSchema, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: bad input schema %s", i.Name, i.InputSchema)
		}
	}
	want := "workspace_tools.tool_write_file workspace_tools.tool_append_file workspace_tools.tool_read_file " +
		"workspace_tools.tool_list_files workspace_tools.tool_find_files workspace_tools.tool_grep_files " +
		"workspace_tools.tool_file_info system_shell.tool_execute_shell_command " +
		"execute_python.tool_execute_python_code execute_python.tool_execute_python_file"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("tools = %s\nwant    %s", got, want)
	}
	if got := len(builtin.Libraries()); got != 3 {
		t.Errorf("Libraries() has %d entries", got)
	}
}

func TestShellDescriptionTellsLevelAndOS(t *testing.T) {
	for _, level := range []string{"strict", "safe", "full_access"} {
		e := newEnv(t, level)
		infos, _ := e.ts.Tools(context.Background())
		for _, i := range infos {
			if i.Name != "tool_execute_shell_command" {
				continue
			}
			if !strings.Contains(i.Description, "Autonomy level "+level) || !strings.Contains(i.Description, runtime.GOOS) {
				t.Errorf("%s: description %q lacks the level or the OS", level, i.Description)
			}
		}
	}
}

func TestWorkspaceTools(t *testing.T) {
	e := newEnv(t, "")
	res := e.call("tool_write_file", map[string]any{"file_name": "docs/a.md", "content": "alpha\nbeta\ngamma\n"})
	wantSuccess(t, res, true)
	if res["file_name"] != "docs/a.md" || res["bytes_written"] != float64(17) {
		t.Errorf("write payload = %v", res)
	}
	wantSuccess(t, e.call("tool_append_file", map[string]any{"file_name": "docs/a.md", "content": "delta\n"}), true)

	res = e.call("tool_read_file", map[string]any{"file_name": "docs/a.md"})
	if res["output"] != "alpha\nbeta\ngamma\ndelta\n" {
		t.Errorf("read = %q", res["output"])
	}
	res = e.call("tool_read_file", map[string]any{"file_name": "docs/a.md", "start_line": "2", "end_line": 3}) // "2" is coerced
	if res["output"] != "beta\ngamma\n" || res["start_line"] != float64(2) || res["end_line"] != float64(3) {
		t.Errorf("read range = %v", res)
	}

	e.write("bin.dat", "\x00\x01\x02")
	res = e.call("tool_read_file", map[string]any{"file_name": "bin.dat"})
	wantSuccess(t, res, false)
	if !strings.Contains(res["error"].(string), "binary") {
		t.Errorf("binary read error = %q", res["error"])
	}

	res = e.call("tool_read_file", map[string]any{"file_name": "../outside.txt"})
	wantSuccess(t, res, false)
	if !strings.Contains(res["error"].(string), "outside the workspace") {
		t.Errorf("escape error = %q", res["error"])
	}

	e.write("src/main.go", "package main\n\nfunc main() {\n\tprintln(\"hello world\")\n}\n")
	e.write("src/util/util.go", "package util\n// Hello helps.\n")
	e.write("node_modules/x/index.js", "hello\n")
	res = e.call("tool_list_files", map[string]any{"directory": "src", "recursive": true})
	if out := res["output"].(string); !strings.Contains(out, "main.go (") || !strings.Contains(out, "util/\n") || !strings.Contains(out, "util/util.go") {
		t.Errorf("list = %q", out)
	}
	res = e.call("tool_list_files", map[string]any{"recursive": true})
	if strings.Contains(res["output"].(string), "index.js") {
		t.Errorf("list shows node_modules content: %q", res["output"])
	}

	res = e.call("tool_find_files", map[string]any{"pattern": "**/*.go"})
	if got := res["matches"]; !equalJSON(got, []any{"src/main.go", "src/util/util.go"}) {
		t.Errorf("find = %v", got)
	}
	res = e.call("tool_find_files", map[string]any{"pattern": "*.go", "path": "src/util", "max_results": "1"})
	if got := res["matches"]; !equalJSON(got, []any{"src/util/util.go"}) {
		t.Errorf("find in path = %v", got)
	}

	res = e.call("tool_grep_files", map[string]any{"pattern": "hello", "file_extension": "go"})
	if res["count"] != float64(2) || !strings.Contains(res["output"].(string), "src/main.go:4:") {
		t.Errorf("grep = %v", res)
	}
	res = e.call("tool_grep_files", map[string]any{"pattern": "Hello", "search_mode": "exact"})
	if res["count"] != float64(1) {
		t.Errorf("grep exact = %v", res["output"])
	}
	res = e.call("tool_grep_files", map[string]any{"pattern": "helo wrld", "search_mode": "fuzzy"})
	if res["count"] != float64(1) {
		t.Errorf("grep fuzzy = %v", res["output"])
	}
	res = e.call("tool_grep_files", map[string]any{"pattern": "world hello", "search_mode": "words"})
	if res["count"] != float64(1) {
		t.Errorf("grep words = %v", res["output"])
	}
	res = e.call("tool_grep_files", map[string]any{"pattern": "println(", "search_mode": "case_sensitive"})
	if res["count"] != float64(1) || !strings.Contains(res["output"].(string), "not a valid regular expression") {
		t.Errorf("grep invalid regex = %v", res["output"])
	}

	res = e.call("tool_file_info", map[string]any{"file_name": "src/main.go"})
	if res["type"] != "file" || res["lines"] != float64(5) {
		t.Errorf("file info = %v", res)
	}
	res = e.call("tool_file_info", map[string]any{"file_name": "src"})
	if res["type"] != "directory" || res["entries"] != float64(2) {
		t.Errorf("dir info = %v", res)
	}
	if len(e.asked) != 0 {
		t.Errorf("safe mode asked %d times for workspace work", len(e.asked))
	}
}

func TestWorkspaceWritesAndAutonomy(t *testing.T) {
	tests := []struct {
		level, file string
		asks        bool
	}{
		{"safe", "a.txt", false},
		{"safe", ".git/hooks/pre-commit", true},
		{"strict", "a.txt", true},
		{"full_access", ".git/config", false},
	}
	for _, tt := range tests {
		e := newEnv(t, tt.level)
		res := e.call("tool_write_file", map[string]any{"file_name": tt.file, "content": "x"})
		if asked := len(e.asked) > 0; asked != tt.asks {
			t.Errorf("%s %s: asked = %v, want %v", tt.level, tt.file, asked, tt.asks)
		}
		if tt.asks {
			wantSuccess(t, res, false)
			if !strings.Contains(res["error"].(string), "not now") {
				t.Errorf("%s: rejection error %q lacks the operator's reason", tt.level, res["error"])
			}
			if _, err := os.Stat(filepath.Join(e.ws, tt.file)); err == nil {
				t.Errorf("%s %s: written despite the rejection", tt.level, tt.file)
			}
		} else {
			wantSuccess(t, res, true)
		}
	}
}

func needShell(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("needs a POSIX shell")
	}
}

// noSandbox switches the kernel sandbox off for a test: the path of
// machines without one, where safe mode relies on the classifiers.
func noSandbox(t *testing.T) {
	t.Helper()
	t.Cleanup(sandbox.ForceOff("testing the path without a sandbox"))
}

func TestShellWithoutSandbox(t *testing.T) {
	needShell(t)
	noSandbox(t)
	e := newEnv(t, "safe")
	e.write("a.txt", "one\ntwo\n")
	res := e.call("tool_execute_shell_command", map[string]any{"command": "wc -l < a.txt; echo err >&2"})
	wantSuccess(t, res, true)
	if strings.TrimSpace(res["stdout"].(string)) != "2" || res["stderr"] != "err\n" || res["return_code"] != float64(0) {
		t.Errorf("result = %v", res)
	}
	if len(e.asked) != 0 {
		t.Fatalf("safe mode asked for a read-only command")
	}

	res = e.call("tool_execute_shell_command", map[string]any{"command": "ls; rm -f a.txt"})
	wantSuccess(t, res, false)
	if len(e.asked) != 1 || !strings.Contains(e.asked[0].Source, "rm deletes files") {
		t.Fatalf("asked = %v", e.asked)
	}
	if !strings.Contains(res["error"].(string), "not now") {
		t.Errorf("error %q lacks the operator's reason", res["error"])
	}
	if _, err := os.Stat(filepath.Join(e.ws, "a.txt")); err != nil {
		t.Errorf("a.txt removed despite the rejection")
	}

	e.decision = tool.Allow
	res = e.call("tool_execute_shell_command", map[string]any{"command": "rm a.txt && echo gone"})
	wantSuccess(t, res, true)
	if _, err := os.Stat(filepath.Join(e.ws, "a.txt")); err == nil {
		t.Errorf("a.txt still there after an approved rm")
	}

	res = e.call("tool_execute_shell_command", map[string]any{"command": "echo partial; exit 3"})
	wantSuccess(t, res, false)
	if res["return_code"] != float64(3) || res["stdout"] != "partial\n" || !strings.Contains(res["error"].(string), "code 3") {
		t.Errorf("failing command = %v", res)
	}
}

func TestShellAutonomyLevelsWithoutSandbox(t *testing.T) {
	needShell(t)
	noSandbox(t)
	for _, tt := range []struct {
		level, command string
		asks           bool
	}{
		{"strict", "ls", true},
		{"safe", "ls", false},
		{"safe", "curl http://localhost:1", true},
		{"full_access", "rm -f nothing", false},
		{"", "rm -f nothing", true}, // no configuration: safe
	} {
		e := newEnv(t, tt.level)
		e.call("tool_execute_shell_command", map[string]any{"command": tt.command})
		if asked := len(e.asked) > 0; asked != tt.asks {
			t.Errorf("%q at %q: asked = %v, want %v", tt.command, tt.level, asked, tt.asks)
		}
	}
}

func TestShellTimeoutAndCaps(t *testing.T) {
	needShell(t)
	e := newEnv(t, "full_access")
	start := time.Now()
	res := e.call("tool_execute_shell_command", map[string]any{"command": "echo started; sleep 30", "timeout": 0.5})
	if time.Since(start) > 10*time.Second {
		t.Fatalf("timeout not enforced")
	}
	wantSuccess(t, res, false)
	if res["timed_out"] != true || res["stdout"] != "started\n" || !strings.Contains(res["error"].(string), "timed out") {
		t.Errorf("timed out result = %v", res)
	}

	res = e.call("tool_execute_shell_command", map[string]any{"command": "yes 0123456789 | head -c 200000"})
	out := res["stdout"].(string)
	if res["truncated"] != true || len(out) > builtin.DefaultMaxOutput+100 || !strings.Contains(out, "bytes cut") {
		t.Errorf("capped output: %d bytes, truncated=%v", len(out), res["truncated"])
	}
}

func havePython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
}

func TestPythonWithoutSandbox(t *testing.T) {
	havePython(t)
	noSandbox(t)
	e := newEnv(t, "safe")
	res := e.call("tool_execute_python_code", map[string]any{"code": "import os, math\nprint(math.factorial(5), os.getcwd())"})
	wantSuccess(t, res, true)
	if got := strings.TrimSpace(res["stdout"].(string)); got != "120 "+e.ws {
		t.Errorf("stdout = %q, want the result and the workspace", got)
	}

	res = e.call("tool_execute_python_code", map[string]any{"code": "raise ValueError('boom')"})
	wantSuccess(t, res, false)
	if !strings.Contains(res["error"].(string), "ValueError: boom") || res["return_code"] != float64(1) {
		t.Errorf("exception = %v", res)
	}
	if len(e.asked) != 0 {
		t.Fatalf("benign code asked")
	}

	res = e.call("tool_execute_python_code", map[string]any{"code": "import subprocess\nsubprocess.run(['touch', 'x'])"})
	wantSuccess(t, res, false)
	if len(e.asked) != 1 || !strings.Contains(e.asked[0].Source, "imports subprocess") {
		t.Errorf("asked = %v", e.asked)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "x")); err == nil {
		t.Errorf("rejected code ran")
	}

	// A local module hiding a spawn is judged too.
	e.write("helper.py", "import os\ndef go():\n    os.system('true')\n")
	e.write("main.py", "import sys, helper\nprint(sys.argv[1:])\n")
	e.asked = nil
	e.call("tool_execute_python_file", map[string]any{"file_name": "main.py", "args": []string{"a", "b c"}})
	if len(e.asked) != 1 || !strings.Contains(e.asked[0].Source, "module helper") {
		t.Fatalf("asked = %v", e.asked)
	}
	e.decision = tool.Allow
	res = e.call("tool_execute_python_file", map[string]any{"file_name": "main.py", "args": []string{"a", "b c"}})
	wantSuccess(t, res, true)
	if res["stdout"] != "['a', 'b c']\n" {
		t.Errorf("argv = %q", res["stdout"])
	}

	res = e.call("tool_execute_python_file", map[string]any{"file_name": "../x.py"})
	wantSuccess(t, res, false)
}

func TestPythonMissing(t *testing.T) {
	ws := t.TempDir()
	ts, err := builtin.New(&builtin.Options{Workspace: ws, Python: "lcp-no-such-python"})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	res, err := tool.Call(context.Background(), ts, "tool_execute_python_code", json.RawMessage(`{"code":"print(1)"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || !strings.Contains(res.Error, "No Python interpreter") || !strings.Contains(res.Error, "lcp-no-such-python") {
		t.Errorf("result = %+v", res)
	}
}

func TestInvalidArguments(t *testing.T) {
	e := newEnv(t, "")
	_, err := tool.Call(context.Background(), e.ts, "tool_read_file", json.RawMessage(`{"start_line": 2}`), nil)
	var ia *tool.InvalidArgumentsError
	if !errorsAs(err, &ia) {
		t.Errorf("missing file_name: err = %v, want *tool.InvalidArgumentsError", err)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// The built-ins coerce arguments with the one rule of the contract
// (tool.Coerce): a string converts only when it is exactly a literal.
func TestBuiltinCoercionFollowsTheContract(t *testing.T) {
	e := newEnv(t, "")
	e.write("a.md", "alpha\nbeta\n")
	res := e.call("tool_read_file", map[string]any{"file_name": "a.md", "start_line": "+2"})
	if res["output"] != "beta\n" {
		t.Errorf(`start_line "+2": %v`, res)
	}
	raw, _ := json.Marshal(map[string]any{"file_name": "a.md", "start_line": " 2"})
	_, err := tool.Call(context.Background(), e.ts, "tool_read_file", raw, nil)
	var bad *tool.InvalidArgumentsError
	if !errors.As(err, &bad) {
		t.Errorf(`start_line " 2" is not exactly an integer: got %v, want invalid arguments`, err)
	}
}
