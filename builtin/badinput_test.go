//go:build linux

package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

// TestBadInputInTheSandbox throws what a careless or hostile model may run
// at the sandbox: each call ends with a clear result that names the limit
// hit, nothing survives it, and the next call works.
func TestBadInputInTheSandbox(t *testing.T) {
	needSandbox(t)
	havePython(t)
	ws := t.TempDir()
	cfg := map[string]any{"autonomy_level": "safe", "timeout": 5, "sandbox_processes": 128,
		"sandbox_memory_mb": 512, "sandbox_file_size_mb": 64, "max_output_bytes": 4096}
	ts, err := builtin.New(&builtin.Options{Workspace: ws, Configs: map[string]map[string]any{
		builtin.SystemShell: cfg, builtin.ExecutePython: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		raw, _ := json.Marshal(args)
		res, err := tool.Call(context.Background(), ts, name, raw, &tool.CallOptions{
			Confirm: func(context.Context, *tool.Request) (tool.Decision, string) { return tool.Reject, "no" },
		})
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		b, _ := json.Marshal(res)
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	// The resource-limit cases get a time limit far above the second or
	// two they take, so that on a busy machine the time limit can never
	// fire before the limit the case is about; "busy loop" is about the
	// time limit and keeps the library's 5 s.
	const resourceTimeout = 30
	// With the kernel's accounting, a run's processes are a budget of the
	// whole run, which ends it; without, a limit per user namespace.
	processes := "process limit"
	if strings.HasPrefix(sandbox.Accounting(), "cgroup") {
		processes = "process budget"
	}
	for _, tc := range []struct {
		name, tool, code string
		want             string // in limit_hit, error or output
	}{
		{"fork bomb", "tool_execute_shell_command", ":(){ :|:& };:", ""},
		{"fork bomb held open", "tool_execute_shell_command", "b(){ b|b& }; b; sleep 3", processes},
		{"processes in a loop", "tool_execute_shell_command", "while true; do sleep 301.7 & done", processes},
		{"brace bomb", "tool_execute_shell_command", "echo {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b} | wc -c", "memory limit"},
		{"8 GB bytearray", "tool_execute_python_code", "b = bytearray(8 << 30)\nprint(len(b))", "memory limit"},
		{"output flood", "tool_execute_shell_command", "yes 0123456789 | head -c 50000000", "bytes cut"},
		{"disk flood", "tool_execute_shell_command", "head -c 200000000 /dev/zero > big.bin", "file size limit"},
		{"held pipes", "tool_execute_shell_command", "(sleep 301.7 &) ; setsid sleep 301.7 > /dev/null & echo started", "started"},
		{"busy loop", "tool_execute_shell_command", "while :; do :; done", "timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			args := map[string]any{"command": tc.code}
			if tc.tool == "tool_execute_python_code" {
				args = map[string]any{"code": tc.code}
			}
			if strings.HasSuffix(tc.want, " limit") || strings.HasSuffix(tc.want, " budget") {
				args["timeout"] = resourceTimeout
			}
			res := call(tc.tool, args)
			took := time.Since(start)
			text := str(res["limit_hit"]) + " " + str(res["error"]) + " " + str(res["output"])
			if tc.want != "" && !strings.Contains(text, tc.want) {
				t.Errorf("result does not say %q: %v", tc.want, res)
			}
			// Not a speed check: a held pipe or a stray process must not
			// keep the call going long past its time limit.
			if took > 5*resourceTimeout*time.Second {
				t.Errorf("the call took %v", took)
			}
			if pids := marked("301.7"); len(pids) > 0 {
				t.Errorf("processes %v survived the call", pids)
			}
			next := call("tool_execute_shell_command", map[string]any{"command": "echo next"})
			if strings.TrimSpace(str(next["stdout"])) != "next" {
				t.Errorf("the next call did not work: %v", next)
			}
		})
	}
}

// TestBudgetInTheSandbox floods a safe-mode run's budget of the whole
// run: the result names the budget, and nothing of the run is applied
// (new files included).
func TestBudgetInTheSandbox(t *testing.T) {
	needSandbox(t)
	havePython(t)
	if !strings.HasPrefix(sandbox.Accounting(), "cgroup") {
		t.Skip("no control groups for the budget here (" + sandbox.Accounting() + ")")
	}
	ws := t.TempDir()
	cfg := map[string]any{"autonomy_level": "safe", "sandbox_run_memory_mb": 256, "sandbox_disk_mb": 48,
		"sandbox_memory_mb": 1024, "max_output_bytes": 4096}
	ts, err := builtin.New(&builtin.Options{Workspace: ws, Configs: map[string]map[string]any{builtin.SystemShell: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	for _, tc := range []struct{ name, command, want string }{
		{"memory", `echo keep > kept.txt
			python3 -c 'b = bytearray(120 << 20); b[::4096] = b"x" * len(b[::4096]); import time; time.sleep(300)' &
			head -c 100000000 /dev/zero > /dev/shm/fill
			python3 -c 'import os
fd = os.memfd_create("x")
while True: os.write(fd, b"x" * (1 << 20))'
			wait; echo done`, "memory budget (256 MiB"},
		{"disk", "echo keep > kept.txt; head -c 100000000 /dev/zero > big.bin; echo done", "disk budget (48 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(map[string]any{"command": tc.command, "timeout": 300})
			res, err := tool.Call(context.Background(), ts, "tool_execute_shell_command", raw, &tool.CallOptions{
				Confirm: func(context.Context, *tool.Request) (tool.Decision, string) { return tool.Allow, "" },
			})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res)
			var m map[string]any
			json.Unmarshal(b, &m)
			if !strings.Contains(str(m["limit_hit"]), tc.want) || !strings.Contains(str(m["error"]), tc.want) {
				t.Errorf("result does not name %q: %v", tc.want, m)
			}
			if m["success"] != false {
				t.Errorf("the run succeeded: %v", m)
			}
			for _, f := range []string{"kept.txt", "big.bin"} {
				if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
					t.Errorf("%s was applied", f)
				}
			}
		})
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
