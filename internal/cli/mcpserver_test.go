package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseServerFlag(t *testing.T) {
	tests := []struct {
		in      string
		alias   string
		command string
		args    []string
		url     string
		err     string
	}{
		{in: "npx -y @modelcontextprotocol/server-everything", alias: "everything", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-everything"}},
		{in: "uvx mcp-server-fetch", alias: "fetch", command: "uvx", args: []string{"mcp-server-fetch"}},
		{in: "npx -y some-pkg@1.2.3 --verbose", alias: "some-pkg", command: "npx", args: []string{"-y", "some-pkg@1.2.3", "--verbose"}},
		{in: "python3 'my server.py'", alias: "my_server", command: "python3", args: []string{"my server.py"}},
		{in: `node "a \"b\".js" c\ d`, alias: "a__b_", command: "node", args: []string{`a "b".js`, "c d"}},
		{in: "fs=npx -y @modelcontextprotocol/server-filesystem /data", alias: "fs", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/data"}},
		{in: "my-tool", alias: "my-tool", command: "my-tool"},
		{in: "docker run -i --rm mcp/github", alias: "github", command: "docker", args: []string{"run", "-i", "--rm", "mcp/github"}},
		{in: "python3 -m weather_server", alias: "weather_server", command: "python3", args: []string{"-m", "weather_server"}},
		{in: "http://localhost:8000/mcp", alias: "localhost", url: "http://localhost:8000/mcp"},
		{in: "search=https://search.example.org/mcp", alias: "search", url: "https://search.example.org/mcp"},
		{in: "", err: "empty"},
		{in: "fs=", err: "empty"},
		{in: "node 'x.js", err: "a single quote is not closed"},
		{in: `node "x.js`, err: "a double quote is not closed"},
		{in: `node x\`, err: "ends with a backslash"},
		{in: "https://", err: "is not a URL"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			sc, _, err := parseServerFlag(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sc.Alias != tt.alias || sc.Command != tt.command || !slices.Equal(sc.Args, tt.args) || sc.URL != tt.url {
				t.Errorf("got alias %q command %q args %q url %q", sc.Alias, sc.Command, sc.Args, sc.URL)
			}
		})
	}
}

// TestServerFlagsAliases: aliases made from commands get a number when
// taken; an alias given twice is a usage error.
func TestServerFlagsAliases(t *testing.T) {
	got, err := serverFlags([]string{"npx -y @x/server-a", "npx -y @y/server-a", "b=node b.js"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var aliases []string
	for _, sc := range got {
		aliases = append(aliases, sc.Alias)
	}
	if !slices.Equal(aliases, []string{"a", "a-2", "b"}) {
		t.Errorf("aliases %q", aliases)
	}
	if _, err := serverFlags([]string{"b=node b.js", "b=node c.js"}, nil); err == nil || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), `the alias "b" is used twice`) {
		t.Errorf("alias twice: %v", err)
	}
	if _, err := serverFlags([]string{"a::b=node b.js"}, nil); err == nil || ExitCode(err) != ExitUsage {
		t.Errorf("alias with '::': %v", err)
	}
}

// TestPathsShown: a local script's folder is shown to the server's
// sandbox; a script in node_modules shows node_modules.
func TestPathsShown(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "node_modules", "pkg", "dist", "index.js")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "server.py")
	if err := os.WriteFile(local, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := pathsShown([]string{"-y", script, local, "stdio", filepath.Join(dir, "missing.js")})
	want := []string{filepath.Join(dir, "node_modules"), dir}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzSplitCommandLine(f *testing.F) {
	for _, s := range []string{"npx -y pkg", `a "b c" 'd e' f\ g`, `"\"\\\$"`, `'`, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := splitCommandLine(s)
		if err != nil {
			return
		}
		for _, w := range words {
			if len(w) > len(s) {
				t.Fatalf("%q: word %q longer than the line", s, w)
			}
		}
	})
}

// TestMCPServerFlag: one server given on the command line, the reference
// server of the MCP project run by node: its tools are listed and called,
// and its start is shown on stderr; a command that does not exist says
// it did not start.
func TestMCPServerFlag(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	script, err := filepath.Abs("../../mcp/testdata/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skip("the npm peers are not installed: run `npm ci` in mcp/testdata/node")
	}
	server := "node " + script + " stdio"
	out, errOut, code := run(t, "", "list", "--tools", t.TempDir(), "--mcp-server", server)
	if code != 0 || !strings.Contains(out, "index::echo") {
		t.Fatalf("list: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "lcp: starting MCP server index…\n") || !strings.Contains(errOut, "lcp: MCP server index started: ") {
		t.Errorf("no start-up progress on stderr: %q", errOut)
	}
	out, errOut, code = run(t, "", "call", "--tools", t.TempDir(), "--mcp-server", "ev="+server, "ev::echo", "message=hi")
	if code != 0 || !strings.Contains(out, "hi") {
		t.Fatalf("call: exit %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = run(t, "", "list", "--tools", t.TempDir(), "--mcp-server", "gone=/nonexistent/mcp-server")
	if !strings.Contains(errOut, "lcp: MCP server gone did not start: ") {
		t.Errorf("a missing command: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = run(t, "", "list", "--mcp-server", "node 'x.js")
	if code != ExitUsage || !strings.Contains(errOut, "lcp: --mcp-server: ") {
		t.Errorf("bad quoting: exit %d, stderr %q", code, errOut)
	}
}
