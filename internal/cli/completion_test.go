package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// complete runs cobra's hidden completion command and returns the
// candidates (without descriptions) and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	out, errOut, code := run(t, "", append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d, %s", args, code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var words []string
	for _, l := range lines[:len(lines)-1] {
		w, _, _ := strings.Cut(l, "\t")
		words = append(words, w)
	}
	return words, lines[len(lines)-1]
}

func TestCompletion(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the marker scripts are shell scripts")
	}
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "def tool_greet(name: str, excitement_level: int = 1):\n    \"\"\"Greets someone.\n\n    Args:\n        name: who\n        excitement_level: how much\n    \"\"\"\n    return name\n"
	if err := os.WriteFile(filepath.Join(tools, "greetings.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// Anything that starts Python or an MCP server leaves a mark.
	mark := filepath.Join(dir, "started")
	fake := filepath.Join(dir, "fake")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\ntouch "+mark+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	mcpConfig := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(mcpConfig, []byte(`{"mcpServers": {"up": {"command": "`+fake+`"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inv := []string{"--tools", tools, "--python", fake, "--mcp-config", mcpConfig}

	words, directive := complete(t, append([]string{"call"}, append(inv, "tool_")...)...)
	if strings.Join(words, " ") != "tool_greet" || directive != ":4" {
		t.Errorf("tool names: %q %s", words, directive)
	}
	words, directive = complete(t, append([]string{"call"}, append(inv, "tool_greet", "name=Ada", "")...)...)
	if strings.Join(words, " ") != "excitement_level=" || directive != ":6" {
		t.Errorf("parameters: %q %s", words, directive)
	}
	words, _ = complete(t, append([]string{"call"}, append(inv, "--mount", "")...)...)
	if !strings.Contains(strings.Join(words, " "), "system_shell") || !strings.Contains(strings.Join(words, " "), "greetings") {
		t.Errorf("libraries: %q", words)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("completion started Python or an MCP server")
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--format", ""}, "lcp openai anthropic mcp"},
		{[]string{"check", "--format", ""}, "text json sarif"},
		{[]string{"check", "--fail-on", ""}, "error warning info none"},
		{[]string{"serve", "--autonomy", ""}, "strict safe full_access"},
		{[]string{"mcp", "--approve", ""}, "ask allow reject"},
		{[]string{"mcp", "install", ""}, "claude-desktop claude-code cursor vscode windsurf gemini"},
		{[]string{"mcp", "install", "cursor", "--scope", ""}, "user project"},
		{[]string{"li"}, "list"},
	} {
		if words, _ := complete(t, tt.args...); strings.Join(words, " ") != tt.want {
			t.Errorf("%q: %q, want %q", tt.args, words, tt.want)
		}
	}
	// The scripts for each shell.
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		out, _, code := run(t, "", "completion", sh)
		if code != 0 || !strings.Contains(out, "lcp") || len(out) < 500 {
			t.Errorf("completion %s: exit %d, %d bytes", sh, code, len(out))
		}
	}
}
