package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingToolsFolder: a --tools folder or --file that does not exist
// is a usage error naming the flag and the path for the commands that
// list or run tools, and an error finding of lcp check (exit 1), never an
// empty inventory that passes.
func TestMissingToolsFolder(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-tools")
	file := filepath.Join(dir, "a_file.py")
	if err := os.WriteFile(file, []byte("def tool_x() -> str:\n    return 'x'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		args   []string
		want   string
		code   int
		stdout bool // the message is on stdout (a finding)
	}{
		{"list", []string{"list", "--tools", missing}, "--tools " + missing + ": no such folder", 0, false},
		{"list --json", []string{"list", "--json", "--tools", missing}, "--tools " + missing + ": no such folder", 0, false},
		{"check", []string{"check", "--tools", missing}, "[missing-folder]", ExitFailure, true},
		{"call", []string{"call", "--tools", missing, "tool_x"}, "--tools " + missing + ": no such folder", 0, false},
		{"a file as --tools", []string{"list", "--tools", file}, "--tools " + file + ": not a folder", 0, false},
		{"missing --file", []string{"list", "--file", missing + ".py"}, "--file " + missing + ".py: no such file", 0, false},
		{"a folder as --file", []string{"call", "--file", dir, "tool_x"}, "--file " + dir + ": a folder", 0, false},
		{"check, a folder as --file", []string{"check", "--file", dir}, "[not-a-file]", ExitFailure, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.code == 0 {
				c.code = ExitUsage
			}
			out, errOut, code := run(t, "", c.args...)
			where := errOut
			if c.stdout {
				where = out
			}
			if code != c.code || !strings.Contains(where, c.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, c.code, c.want)
			}
			if strings.Contains(out, "No tools found") {
				t.Errorf("stdout says %q", out)
			}
		})
	}
}
