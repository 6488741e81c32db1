package lcp_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/mcp"
)

// BenchmarkMCPBridge measures a Python tool calling the add tool of an MCP
// server (testdata/bridge/fake_mcp.py): through MCPBinding (the embedded
// bridge, "bridge"), against the same call through the host's inventory
// where the server is an --mcp-config server ("reference": the seed's
// second pattern, which existed before), in one run. bench/bridge.sh
// prints the ratio.
func BenchmarkMCPBridge(b *testing.B) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("python3 is not installed")
	}
	script, _ := filepath.Abs("testdata/bridge/fake_mcp.py")
	// Both servers in their boxes, showing the fixture's folder.
	dir := filepath.Dir(script)
	entry := map[string]any{"alias": "fake", "command": "python3", "args": []any{script}, "sandbox": map[string]any{"read": []any{dir}}}
	for _, c := range []struct{ name, tool, args string }{
		{"reference", "tool_via_host", `{"name": "fake::add", "params": "{\"a\": 1, \"b\": 2}"}`},
		{"bridge", "tool_exec", `{"name": "fake::add", "params": "{\"a\": 1, \"b\": 2}"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			// An engine of its own: what a run leaves (workers, sessions,
			// adaptive polling) must not favour the next.
			eng, err := lcp.New(context.Background(), &lcp.Config{
				ToolsFolders:    []string{"testdata/bridge/direct"},
				Workspace:       b.TempDir(),
				HostToolConfigs: map[string]map[string]any{"mcp_direct": {"servers": []any{entry}}},
				MCPServers:      []mcp.ServerConfig{{Alias: "fake", Command: "python3", Args: []string{script}, Sandbox: &mcp.SandboxConfig{Read: []string{dir}}}},
			})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			ctx := context.Background()
			check := func() {
				res := eng.ExecuteTool(ctx, c.tool, json.RawMessage(c.args))
				var out struct {
					Success bool `json:"success"`
				}
				if !res.Success || json.Unmarshal(res.Output, &out) != nil || !out.Success {
					b.Fatalf("%s: %+v", c.tool, res)
				}
			}
			check() // starts the worker and the session
			b.ResetTimer()
			for b.Loop() {
				check()
			}
		})
	}
}
