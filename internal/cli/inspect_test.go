package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPInspect: lcp mcp --inspect runs mcp-inspector with this binary
// and the other flags as its stdio server; without it, it says how to
// install it.
func TestMCPInspect(t *testing.T) {
	tools := t.TempDir()
	bin := t.TempDir()
	got := filepath.Join(t.TempDir(), "args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + got + "\n"
	if err := os.WriteFile(filepath.Join(bin, "mcp-inspector"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, errOut, code := run(t, "", "mcp", "--inspect", "--tools", tools, "--watch")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	raw, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	if want := exe + "\nmcp\n--tools\n" + tools + "\n--watch\n"; string(raw) != want {
		t.Errorf("mcp-inspector got %q, want %q", raw, want)
	}

	t.Setenv("PATH", t.TempDir())
	_, errOut, code = run(t, "", "mcp", "--inspect", "--tools", tools)
	if code != ExitEngine || !strings.Contains(errOut, "the MCP Inspector is not installed") || !strings.Contains(errOut, "npm install -g @modelcontextprotocol/inspector") {
		t.Errorf("without the Inspector: exit %d, %q", code, errOut)
	}
	_, errOut, code = run(t, "", "mcp", "--inspect", "--http", "127.0.0.1:0")
	if code != ExitUsage || !strings.Contains(errOut, "leave out --http") {
		t.Errorf("with --http: exit %d, %q", code, errOut)
	}
}
