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
