package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallArgsInWords: a bad --args says what is wrong in words, never a
// Go type; a tool argument given as a flag gets its key=value form.
func TestCallArgsInWords(t *testing.T) {
	dir := t.TempDir()
	src := "def tool_add(a: int, b: int = 2) -> int:\n    \"\"\"Adds.\n\n    Args:\n        a: first\n        b: second\n    \"\"\"\n    return a + b\n"
	if err := os.WriteFile(filepath.Join(dir, "calc.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"array", []string{"--args", `[1, 2]`}, `lcp: --args must be a JSON object such as '{"name": "Ada"}': got an array` + "\n"},
		{"string", []string{"--args", `"a"`}, `got a string`},
		{"number", []string{"--args", `5`}, `got a number`},
		{"null", []string{"--args", `null`}, `got null`},
		{"broken", []string{"--args", `{"a": }`}, `not valid JSON at character 7: invalid character '}' looking for beginning of value`},
		{"cut short", []string{"--args", `{"a": 1`}, `not valid JSON at character 7: unexpected end of JSON input`},
		{"flag with a value", []string{"--city", "Paris"}, `lcp: unknown flag: --city. Tool arguments are key=value: city=Paris (or --args '{"city": ...}').` + "\n"},
		{"flag=value", []string{"--city=New York"}, `city='New York'`},
		{"flag alone", []string{"--city"}, `city=VALUE`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := run(t, "", append([]string{"call", "--tools", dir, "tool_add"}, c.args...)...)
			if code != ExitUsage || !strings.Contains(errOut, c.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, ExitUsage, c.want)
			}
			for _, goish := range []string{"Go value", "map[string]", "json.RawMessage", "unmarshal"} {
				if strings.Contains(errOut, goish) {
					t.Errorf("stderr %q names Go internals (%s)", errOut, goish)
				}
			}
		})
	}
}

// TestCallWarnsUnknownArgs: an argument the tool has no parameter for is
// named on stderr with the nearest parameter, before the call runs; a
// tool with **kwargs, which receives it, gets no warning.
func TestCallWarnsUnknownArgs(t *testing.T) {
	dir := t.TempDir()
	src := `def tool_read(file_name: str = "x") -> str:
    """Reads.

    Args:
        file_name: the file
    """
    return file_name

def tool_any(file_name: str = "x", **kwargs) -> str:
    """Takes anything.

    Args:
        file_name: the file
    """
    return ",".join(sorted(kwargs))
`
	if err := os.WriteFile(filepath.Join(dir, "files.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "", "call", "--tools", dir, "tool_read", "filename=a.txt")
	want := `lcp: warning: tool_read has no parameter "filename" (it is dropped). Did you mean file_name?` + "\n"
	if code != 0 || !strings.HasPrefix(errOut, want) || strings.TrimSpace(out) != "x" {
		t.Errorf("exit %d, stdout %q, stderr %q; want stderr to start %q", code, out, errOut, want)
	}
	out, errOut, code = run(t, "", "call", "--tools", dir, "tool_any", "filename=a.txt")
	if code != 0 || strings.Contains(errOut, "warning") || !strings.Contains(out, "filename") {
		t.Errorf("**kwargs: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestCallBindFailureExitCode: a call Python could not make with the
// arguments given (a required argument missing after a misspelt name was
// dropped, or a positional-only name given by name) exits with ExitArgs
// and names the parameters and --validate-args; a TypeError the tool
// raises itself stays a failure of the tool, and --validate-args refusing
// the call exits with ExitArgs too.
func TestCallBindFailureExitCode(t *testing.T) {
	dir := t.TempDir()
	src := `def tool_read(file_name: str) -> str:
    """Reads.

    Args:
        file_name: the file
    """
    return file_name

def tool_typo(x: int = 1) -> str:
    """Raises a TypeError of its own.

    Args:
        x: a number
    """
    return len(x)
`
	if err := os.WriteFile(filepath.Join(dir, "files.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"misspelt name", []string{"tool_read", "filename=a.txt"}, ExitArgs, []string{
			`warning: tool_read has no parameter "filename" (it is dropped). Did you mean file_name?`,
			"lcp: the arguments do not fit tool_read: tool_read() missing 1 required positional argument: 'file_name'; its parameters: file_name",
			"--validate-args"}},
		{"no arguments", []string{"tool_read", "--json"}, ExitArgs, []string{"lcp: the arguments do not fit tool_read: "}},
		{"the tool's own TypeError", []string{"tool_typo"}, ExitFailure, []string{"TypeError: object of type 'int' has no len()"}},
		{"refused by --validate-args", []string{"--validate-args", "tool_read"}, ExitArgs, []string{"the arguments were refused"}},
		{"fits", []string{"tool_read", "file_name=a.txt"}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, "", append([]string{"call", "--tools", dir}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", code, tt.code, out, errOut)
			}
			for _, want := range tt.contains {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr %q lacks %q", errOut, want)
				}
			}
		})
	}
}
