package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMCPInstallFlags(t *testing.T) {
	var got *MCPInstallOptions
	err := parse(t, NewCmdMCPInstall(testEnv(), func(o *MCPInstallOptions) error { got = o; return nil }),
		"claude-code", "--name", "notes", "--print", "--scope", "project", "--config", "c.json", "--tools", "t", "--autonomy", "strict",
		"--watch", "--yes", "--mcp-config", "m.json", "--host-config", "h.json")
	if err != nil {
		t.Fatal(err)
	}
	if got.client != "claude-code" || got.name != "notes" || !got.print || got.scope != "project" || got.config != "c.json" ||
		!cmp.Equal(got.inv.tools, []string{"t"}) || got.inv.autonomy != "strict" || !got.watch.watch || !got.approval.yes ||
		got.inv.mcpConfig != "m.json" || got.inv.hostConfig != "h.json" {
		t.Errorf("install options %+v", got)
	}
	got = nil
	if err := parse(t, NewCmdMCPInstall(testEnv(), func(o *MCPInstallOptions) error { got = o; return nil }),
		"cursor", "--http", "http://h:1/mcp", "--token", "tok"); err != nil || got.http != "http://h:1/mcp" || got.token != "tok" || got.name != "lcp" {
		t.Errorf("http options %+v, %v", got, err)
	}
	for _, args := range [][]string{{}, {"a", "b"}} {
		if err := parse(t, NewCmdMCPInstall(testEnv(), func(*MCPInstallOptions) error { t.Error("ran"); return nil }), args...); ExitCode(err) != ExitUsage {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// installEnv runs lcp in a fake home, with this lcp at /opt/lcp/bin/lcp
// and dir as the current directory.
func installEnv(home, dir string, stdout, stderr *bytes.Buffer, getenv map[string]string, args ...string) *Env {
	return &Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Args: args,
		Getenv: func(k string) string {
			if k == "HOME" || k == "USERPROFILE" {
				return home
			}
			return getenv[k]
		},
		Executable: func() (string, error) { return "/opt/lcp/bin/lcp", nil },
		Getwd:      func() (string, error) { return dir, nil },
	}
}

func runInstall(t *testing.T, home, dir string, getenv map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(installEnv(home, dir, &out, &errb, getenv, append([]string{"mcp", "install"}, args...)...))
	return out.String(), errb.String(), code
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return m
}

func TestMCPInstall(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	tools := filepath.Join(project, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	hc := filepath.Join(project, "host.json")
	if err := os.WriteFile(hc, []byte(`{"system_shell": {"timeout": 10}}`), 0o644); err != nil {
		t.Fatal(err)
	}

	// Claude Code, user scope: ~/.claude.json keeps its other settings.
	claude := filepath.Join(home, ".claude.json")
	before := "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\", \"args\": [\"fs\"]}\n  },\n  \"theme\": \"dark\"\n}\n"
	if err := os.WriteFile(claude, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runInstall(t, home, project, nil, "claude-code", "--tools", "tools", "--host-config", "host.json", "--autonomy", "strict", "--watch", "--mount", "system_shell")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	m := readJSON(t, claude)
	want := map[string]any{"type": "stdio", "command": "/opt/lcp/bin/lcp",
		"args": []any{"mcp", "--tools=" + tools, "--mount=system_shell", "--host-config=" + hc, "--autonomy=strict", "--watch"}}
	servers := m["mcpServers"].(map[string]any)
	if diff := cmp.Diff(want, servers["lcp"]); diff != "" {
		t.Errorf("entry mismatch (-want +got):\n%s", diff)
	}
	if servers["fs"] == nil || m["numStartups"] != 3.0 || m["theme"] != "dark" {
		t.Errorf("other settings lost: %v", m)
	}
	b, _ := os.ReadFile(claude)
	if !strings.HasPrefix(string(b), "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\", \"args\": [\"fs\"]},\n    \"lcp\": {") ||
		!strings.HasSuffix(string(b), "  },\n  \"theme\": \"dark\"\n}\n") {
		t.Errorf("formatting not kept:\n%s", b)
	}
	backups, _ := filepath.Glob(claude + ".*.bak")
	if len(backups) != 1 || !strings.Contains(out, "Added the MCP server \"lcp\" to Claude Code's configuration: "+claude) || !strings.Contains(out, backups[0]) {
		t.Errorf("backups %v, stdout %q", backups, out)
	}
	if bb, _ := os.ReadFile(backups[0]); string(bb) != before {
		t.Errorf("backup = %s", bb)
	}

	// The client's command line serves: run it (in this process) and list
	// the tools as a client would.
	var args []string
	for _, a := range want["args"].([]any) {
		args = append(args, a.(string))
	}
	if names := listOverStdio(t, args); !strings.Contains(strings.Join(names, " "), "tool_execute_shell_command") {
		t.Errorf("the installed command serves %v", names)
	}

	// Again with other flags: the entry is replaced, the rest kept.
	out, _, code = runInstall(t, home, project, nil, "claude-code", "--builtins")
	if code != 0 || !strings.Contains(out, "Replaced the MCP server \"lcp\"") {
		t.Fatalf("replace: exit %d, %q", code, out)
	}
	if got := readJSON(t, claude)["mcpServers"].(map[string]any)["lcp"].(map[string]any)["args"]; !cmp.Equal(got, []any{"mcp", "--builtins"}) {
		t.Errorf("args after replace: %v", got)
	}
	// The same again changes nothing.
	if out, _, code = runInstall(t, home, project, nil, "claude-code", "--builtins"); code != 0 || !strings.Contains(out, "nothing changed") {
		t.Errorf("unchanged: exit %d, %q", code, out)
	}

	// Claude Desktop starts servers outside any project: the entry names
	// the workspace. A new file is created.
	out, _, code = runInstall(t, home, project, nil, "claude-desktop", "--name", "my tools")
	desktop := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	if code != 0 || !strings.Contains(out, "Created Claude Desktop's configuration") || !strings.Contains(out, "its tools work in "+project) {
		t.Fatalf("claude-desktop: exit %d, %q", code, out)
	}
	if got := readJSON(t, desktop)["mcpServers"].(map[string]any)["my tools"]; !cmp.Equal(got, map[string]any{"command": "/opt/lcp/bin/lcp", "args": []any{"mcp", "--workspace=" + project}}) {
		t.Errorf("claude-desktop entry: %v", got)
	}

	// VS Code, project scope: .vscode/mcp.json under "servers".
	if err := os.WriteFile(filepath.Join(tools, "x.py"), []byte("def tool_x() -> str:\n    return 'x'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runInstall(t, home, project, nil, "vscode", "--scope", "project", "--file", "tools/x.py"); code != 0 {
		t.Fatalf("vscode: exit %d, %s", code, errOut)
	}
	if got := readJSON(t, filepath.Join(project, ".vscode", "mcp.json"))["servers"].(map[string]any)["lcp"]; !cmp.Equal(got,
		map[string]any{"type": "stdio", "command": "/opt/lcp/bin/lcp", "args": []any{"mcp", "--file=" + filepath.Join(tools, "x.py")}}) {
		t.Errorf("vscode entry: %v", got)
	}

	// An HTTP server with its token, for Windsurf.
	if _, errOut, code := runInstall(t, home, project, map[string]string{"LCP_MCP_TOKEN": "s3cret"}, "windsurf", "--http", "http://10.0.0.5:8765"); code != 0 {
		t.Fatalf("windsurf: exit %d, %s", code, errOut)
	}
	if got := readJSON(t, filepath.Join(home, ".codeium", "windsurf", "mcp_config.json"))["mcpServers"].(map[string]any)["lcp"]; !cmp.Equal(got,
		map[string]any{"serverUrl": "http://10.0.0.5:8765/mcp", "headers": map[string]any{"Authorization": "Bearer s3cret"}}) {
		t.Errorf("windsurf entry: %v", got)
	}

	// --print writes nothing.
	out, errOut, code = runInstall(t, home, project, nil, "cursor", "--tools", tools, "--print")
	if code != 0 || !strings.Contains(errOut, filepath.Join(home, ".cursor", "mcp.json")) {
		t.Fatalf("print: exit %d, %q", code, errOut)
	}
	var snippet map[string]map[string]map[string]any
	if err := json.Unmarshal([]byte(out), &snippet); err != nil || snippet["mcpServers"]["lcp"]["command"] != "/opt/lcp/bin/lcp" {
		t.Errorf("print: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, ".cursor")); err == nil {
		t.Error("--print wrote the configuration")
	}
}

// Bad input: a one-line error, exit 2 (usage) or 1 (the file), and the
// configuration untouched.
func TestMCPInstallRefuses(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	gemini := filepath.Join(home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(gemini), 0o755); err != nil {
		t.Fatal(err)
	}
	jsonc := "{\n  // comments are JSONC, not JSON\n  \"theme\": \"dark\",\n}\n"
	if err := os.WriteFile(gemini, []byte(jsonc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		{[]string{"gemini"}, nil, ExitFailure, "not a JSON object: line 2"},
		{[]string{"claud-desktop"}, nil, ExitUsage, `unknown client "claud-desktop". Did you mean claude-desktop?`},
		{[]string{"claude-desktop", "--scope", "project"}, nil, ExitUsage, "Claude Desktop has no project configuration"},
		{[]string{"claude-desktop", "--http", "http://h:1/mcp", "--token", "t"}, nil, ExitUsage, "starts local servers only"},
		{[]string{"cursor", "--http", "http://h:1/mcp"}, nil, ExitUsage, "requires a bearer token"},
		{[]string{"cursor", "--http", "ftp://h/"}, map[string]string{"LCP_MCP_TOKEN": "t"}, ExitUsage, "want the server's URL"},
		{[]string{"cursor", "--http", "http://h:1/mcp", "--token", "t", "--tools", "x"}, nil, ExitUsage, "--tools describes a server the client starts"},
		{[]string{"cursor", "--token", "t"}, nil, ExitUsage, "go with --http"},
		{[]string{"cursor", "--autonomy", "yolo"}, nil, ExitUsage, "unknown autonomy level"},
		{[]string{"cursor", "--host-config", "missing.json"}, nil, ExitUsage, "--host-config"},
		{[]string{"cursor", "--scope", "team"}, nil, ExitUsage, "want user or project"},
	} {
		out, errOut, code := runInstall(t, home, project, tt.env, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", tt.args, code, out, errOut, tt.code, tt.want)
		}
	}
	if b, _ := os.ReadFile(gemini); string(b) != jsonc {
		t.Errorf("the JSONC file changed: %s", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(gemini)); len(ents) != 1 {
		t.Errorf("files beside it: %v", ents)
	}
	if _, err := os.Stat(filepath.Join(home, ".cursor")); err == nil {
		t.Error("a refused install wrote Cursor's configuration")
	}

	// A temporary build (go run) is refused: it will be gone.
	var out, errb bytes.Buffer
	env := installEnv(home, project, &out, &errb, nil, "mcp", "install", "cursor")
	env.Executable = func() (string, error) { return filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "lcp"), nil }
	if code := Main(env); code != ExitUsage || !strings.Contains(errb.String(), "go install ./cmd/lcp") {
		t.Errorf("go run: exit %d, %q", code, errb.String())
	}
}

// listOverStdio runs lcp with args (an lcp mcp command line) on pipes,
// connects an MCP client and returns the names of the tools it lists.
func listOverStdio(t *testing.T, args []string) []string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	env := &Env{Stdin: inR, Stdout: outW, Stderr: &stderr, Getenv: func(string) string { return "" }, Args: args}
	done := make(chan int, 1)
	go func() {
		code := Main(env)
		outW.Close()
		done <- code
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr: %s)", err, stderr.String())
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	cs.Close()
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("lcp %s: exit %d, stderr: %s", strings.Join(args, " "), code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("lcp mcp did not exit when stdin closed")
	}
	return names
}
