//go:build unix

package lcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lcptools/lcp"
)

// BenchmarkExecuteTool measures a warm call of a trivial Python tool
// through the engine's API (lcp.New + ExecuteTool), the path the warm-call
// harness of docs/benchmarks.md times; go run ./bench/worker compares it
// with in-process Python in the same run.
func BenchmarkExecuteTool(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a Python worker")
	}
	needPython(b)
	dir := b.TempDir()
	src := "def tool_echo(x: int = 0) -> dict:\n    \"\"\"Returns its argument.\n\n    Args:\n        x (int): Any integer.\n    \"\"\"\n    return {\"success\": True, \"output\": str(x)}\n"
	if err := os.WriteFile(filepath.Join(dir, "echo.py"), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	eng, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{dir}, Workspace: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	args := json.RawMessage(`{"x": 1}`)
	if res := eng.ExecuteTool(ctx, "tool_echo", args); res.Text() != "1" {
		b.Fatalf("unexpected result %q", res.Text())
	}
	b.ReportAllocs()
	before := cpuTime()
	i := 0
	for b.Loop() {
		i++
		eng.ExecuteTool(ctx, "tool_echo", json.RawMessage(`{"x": `+strconv.Itoa(i)+`}`))
	}
	// The engine's own CPU time (not the worker's), polling included:
	// steadier than the wall time on a shared machine.
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "engine-cpu-ns/op")
}

// cpuTime returns the CPU time (user and system) of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
