package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/discover"
	"github.com/lcptools/lcp/tool"
)

// TestRun: Run merges discovery's diagnostics with the checklist findings
// of every file, in discovery order and by position, gives discovery's
// line-only diagnostics a column, and turns a file that vanished since
// discovery into a finding.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.py", "def tool_a(x):\n    \"\"\"Returns x back to the model, unchanged.\"\"\"\n    return x\n")
	write("b.py", "def tool_b():\n    \"\"\"Says hello to the user in a friendly way.\"\"\"\n    return {\"success\": True, \"output\": \"hi\"}\n")
	write("c.py", "def tool_c():\n    return 1\n")
	res := discover.Run(discover.Options{Folders: []string{dir, filepath.Join(dir, "missing")}})
	if err := os.Remove(filepath.Join(dir, "c.py")); err != nil {
		t.Fatal(err)
	}
	diags := append(res.Diagnostics(), tool.Diagnostic{Severity: "error", Code: "toolset-unavailable", Message: "an MCP server is down"})
	got := Run(res.Files, diags)
	var lines []string
	for _, f := range got {
		lines = append(lines, f.Format(DisplayPath(f.File, dir)))
	}
	want := []string{
		"missing: error: tools folder " + filepath.Join(dir, "missing") + ": no such file or directory [missing-folder]",
		"error: an MCP server is down [toolset-unavailable]",
		"a.py:1:5: info: parameter 'x' of tool_a has no description in the docstring [undocumented-parameter]",
		"a.py:3:5: warning: tool_a returns the parameter x on this branch [noncanonical-return]",
		"c.py: warning: cannot read " + filepath.Join(dir, "c.py") + " again to check it: no such file or directory [unreadable-file]",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Run:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range got {
		if f.Fix == "" {
			t.Errorf("no fix: %+v", f)
		}
	}
}
