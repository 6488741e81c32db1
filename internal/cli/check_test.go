package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkFixture writes a tools folder with one finding of each severity
// and a duplicate tool, and returns it.
func checkFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"a_leak.py": `def tool_leak(api_key: str):
    """Stores the API key given by the user for later calls.

    Args:
        api_key (str): The key.
    """
    return {"success": True, "output": "key " + api_key}
`,
		"b_plain.py": `def tool_plain(x):
    """Returns its argument back, as a smoke test of the host."""
    return {"success": True, "output": str(x)}


def tool_leak(n: int):
    """A second tool of the same name: discovery keeps the first.

    Args:
        n (int): A number.
    """
    return {"success": True, "output": str(n)}


def tool_string():
    """Returns a bare string instead of the canonical result dict."""
    return "done"
`,
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCheckFormats(t *testing.T) {
	dir := checkFixture(t)
	out, errOut, code := run(t, "", "check", "--tools", dir)
	if code != ExitFailure || !strings.Contains(errOut, "at or above error") {
		t.Fatalf("text: exit %d, %q", code, errOut)
	}
	for _, want := range []string{
		"a_leak.py:7:40: error: tool_leak puts a secret into its result under 'output'",
		"[secret-leak]\n    fix: mask the value",
		"b_plain.py:1:5: info: parameter 'x' of tool_plain has no description in the docstring [undocumented-parameter]",
		"b_plain.py:6:5: warning: tool tool_leak is already defined in",
		"b_plain.py:17:5: warning: tool_string returns a string on this branch [noncanonical-return]",
		"3 tool(s), 1 error, 2 warnings, 1 note\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}

	out, _, code = run(t, "", "check", "--tools", dir, "--format", "json")
	var findings []struct {
		Severity, Code, Message, Fix, File string
		Line, Column                       int
	}
	if code != ExitFailure || json.Unmarshal([]byte(out), &findings) != nil || len(findings) != 4 {
		t.Fatalf("json: exit %d\n%s", code, out)
	}
	for _, f := range findings {
		if f.Code == "" || f.Fix == "" || f.Line == 0 || f.Column == 0 || f.File == "" {
			t.Errorf("incomplete finding %+v", f)
		}
	}
	if out2, _, _ := run(t, "", "check", "--tools", dir, "--json"); out2 != out {
		t.Errorf("--json differs from --format json")
	}

	out, _, code = run(t, "", "check", "--tools", dir, "--format", "sarif")
	var log struct {
		Version string
		Runs    []struct {
			Results []struct {
				RuleID    string
				Level     string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine, StartColumn int }
					}
				}
			}
		}
	}
	if code != ExitFailure || json.Unmarshal([]byte(out), &log) != nil || log.Version != "2.1.0" || len(log.Runs[0].Results) != 4 {
		t.Fatalf("sarif: exit %d\n%s", code, out)
	}
	first := log.Runs[0].Results[0]
	loc := first.Locations[0].PhysicalLocation
	if first.RuleID != "secret-leak" || first.Level != "error" || loc.ArtifactLocation.URI != "a_leak.py" || loc.Region.StartLine != 7 {
		t.Errorf("first result %+v: want secret-leak in a_leak.py (relative to the checked folder) line 7", first)
	}
}

func TestCheckFailOn(t *testing.T) {
	dir := checkFixture(t)
	clean := t.TempDir()
	src := "def tool_x(a: int):\n    \"\"\"Returns a number it is given back, unchanged.\"\"\"\n    return {\"success\": True, \"output\": str(a)}\n"
	if err := os.WriteFile(filepath.Join(clean, "x.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir, failOn string
		want        int
	}{
		{dir, "", ExitFailure}, {dir, "error", ExitFailure}, {dir, "warning", ExitFailure}, {dir, "info", ExitFailure},
		{dir, "none", 0}, {dir, "None", 0}, {dir, "ERROR", ExitFailure},
		{clean, "info", ExitFailure}, // undocumented parameter: a note
		{clean, "warning", 0}, {clean, "", 0},
	} {
		args := []string{"check", "--tools", c.dir}
		if c.failOn != "" {
			args = append(args, "--fail-on", c.failOn)
		}
		if _, errOut, code := run(t, "", args...); code != c.want {
			t.Errorf("--fail-on %q on %s: exit %d (%s), want %d", c.failOn, filepath.Base(c.dir), code, errOut, c.want)
		}
	}
}

func TestCheckBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--format", "xml"},
		{"check", "--fail-on", "sometimes"},
		{"check", "--json", "--format", "sarif"},
	} {
		if _, errOut, code := run(t, "", args...); code != ExitUsage || strings.Count(strings.TrimSpace(errOut), "\n") > 0 || errOut == "" {
			t.Errorf("%v: exit %d, %q; want a one-line usage error", args, code, errOut)
		}
	}
}

// TestCheckBuiltinLibrary: with no --tools, the built-in library (the
// seeds' example libraries) has no finding.
func TestCheckBuiltinLibrary(t *testing.T) {
	out, errOut, code := run(t, "", "check", "--fail-on", "info")
	if code != 0 || !strings.Contains(out, "0 errors, 0 warnings, 0 notes") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
}

// TestCheckMissingAndBroken: missing paths and broken files are findings,
// and the rest is still checked.
func TestCheckMissingAndBroken(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.py"), []byte("def tool_x(:\n  pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "latin1.py"), []byte("x = '\xe9'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, "", "check", "--tools", dir, "--tools", filepath.Join(dir, "nope"), "--file", filepath.Join(dir, "gone.py"))
	for _, want := range []string{"[missing-folder]", "[missing-file]", "[syntax-error]", "[not-utf8]", "bad.py:1:12: error"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code != ExitFailure {
		t.Errorf("exit %d", code)
	}
}
