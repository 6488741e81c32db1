package cli

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// inspectorPackage is the npm package of the official MCP Inspector; its
// command is mcp-inspector.
const inspectorPackage = "@modelcontextprotocol/inspector"

// runInspector opens the official MCP Inspector on this lcp server: it
// runs mcp-inspector with this lcp binary and the flags of lcp mcp (all
// but --inspect) as the stdio server it starts, until the Inspector
// exits. Without the Inspector installed it says how to install it.
func runInspector(o *MCPOptions) error {
	if o.useHTTP {
		return usagef("--inspect starts lcp mcp over stdio for the Inspector; leave out --http")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--inspect: finding this lcp binary: %w", err)
	}
	args := slices.DeleteFunc(slices.Clone(o.env.Args), func(a string) bool { return a == "--inspect" || a == "--inspect=true" })
	inspector, err := exec.LookPath("mcp-inspector")
	if err != nil {
		return &exitError{code: ExitEngine, msg: fmt.Sprintf("--inspect: the MCP Inspector is not installed (no mcp-inspector on PATH). Install it with: npm install -g %s (Node.js 22 or newer), or run it once with: npx %s %s %s",
			inspectorPackage, inspectorPackage, exe, strings.Join(args, " "))}
	}
	fmt.Fprintf(o.env.Stderr, "lcp: opening the MCP Inspector on %s %s\n", exe, strings.Join(args, " "))
	cmd := exec.CommandContext(o.ctx, inspector, append([]string{exe}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.env.Stdin, o.env.Stdout, o.env.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("--inspect: mcp-inspector: %w", err)
	}
	return nil
}
