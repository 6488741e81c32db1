package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/internal/jsontest"
)

// run runs the lcp command with the given stdin and returns what it
// printed and its exit code.
func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Args: args}
	code = Main(env)
	return out.String(), errb.String(), code
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

// TestListReaderConformance runs `lcp list --json --file F` on every
// reader conformance file and compares with the expected tools.
func TestListReaderConformance(t *testing.T) {
	dir := "../../pysrc/testdata/conformance"
	f, err := os.Open(filepath.Join(dir, "adversarial.expected.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		var c struct {
			File  string            `json:"file"`
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		out, errOut, code := run(t, "", "list", "--json", "--file", filepath.Join(dir, c.File))
		if code != 0 {
			t.Errorf("%s: exit %d: %s", c.File, code, errOut)
			continue
		}
		var got []json.RawMessage
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Errorf("%s: stdout is not a JSON array: %v\n%s", c.File, err, out)
			continue
		}
		compareTools(t, c.File, got, c.Tools)
	}
	if n < 50 {
		t.Fatalf("only %d cases", n)
	}
}

func compareTools(t *testing.T, name string, got, want []json.RawMessage) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d tools, want %d", name, len(got), len(want))
		return
	}
	for i := range want {
		var w, g struct {
			Name     string `json:"name"`
			Fallback bool   `json:"_parsed_via_regex_fallback"`
		}
		_ = json.Unmarshal(want[i], &w)
		_ = json.Unmarshal(got[i], &g)
		if w.Fallback {
			if g != w {
				t.Errorf("%s tool %d: got %+v, want %+v", name, i, g, w)
			}
			continue
		}
		gc, _ := jsontest.Canonical(got[i])
		wc, _ := jsontest.Canonical(want[i])
		if gc != wc {
			t.Errorf("%s tool %d:\n got  %s\n want %s", name, i, gc, wc)
		}
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	src := "def tool_ok(a):\n    \"\"\"Fine.\"\"\"\n\ndef tool_broken(:\n    pass\n"
	if err := os.WriteFile(filepath.Join(dir, "broken.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, "", "check", "--tools", dir)
	if code != ExitFailure || !strings.Contains(out, "broken.py:4:") || !strings.Contains(out, "syntax-error") {
		t.Fatalf("check: %d\n%s", code, out)
	}
	out, _, code = run(t, "", "check", "--json", "--tools", dir)
	var diags []map[string]any
	if code != ExitFailure || json.Unmarshal([]byte(out), &diags) != nil || len(diags) == 0 {
		t.Fatalf("check --json: %d\n%s", code, out)
	}
}

func TestCheckRiskyPatterns(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"runner.py":  "import subprocess\n\ndef tool_run(cmd: str):\n    \"\"\"Runs a command.\n\n    Args:\n        cmd: the command\n    \"\"\"\n    return subprocess.run(cmd, shell=True).returncode\n",
		"guarded.py": "import subprocess\n_CONFIRM_HANDLER = None\n\ndef set_confirm_handler(h):\n    global _CONFIRM_HANDLER\n    _CONFIRM_HANDLER = h\n\ndef tool_guarded_run(cmd: str):\n    \"\"\"Runs a command after asking.\n\n    Args:\n        cmd: the command\n    \"\"\"\n    d, _ = _CONFIRM_HANDLER(cmd, 'run')\n    return subprocess.run(cmd, shell=True).returncode if d != 'reject' else 'refused'\n",
		"math.py":    "def tool_add(a: int, b: int):\n    \"\"\"Adds.\n\n    Args:\n        a: one\n        b: two\n    \"\"\"\n    return a + b\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _, code := run(t, "", "check", "--json", "--tools", dir)
	var diags []struct {
		Code, File, Message string
	}
	if code != 0 || json.Unmarshal([]byte(out), &diags) != nil {
		t.Fatalf("check: %d\n%s", code, out)
	}
	var risky []string
	for _, d := range diags {
		if d.Code == "risky-pattern" {
			risky = append(risky, filepath.Base(d.File))
			if !strings.Contains(d.Message, "subprocess") {
				t.Errorf("message %q does not say why", d.Message)
			}
		}
	}
	if len(risky) != 1 || risky[0] != "runner.py" {
		t.Fatalf("risky files %v, want [runner.py]", risky)
	}
}

// --autonomy sets the built-ins' level; a library's level in
// --host-config wins.
func TestAutonomyFlag(t *testing.T) {
	ws := t.TempDir()
	// safe runs ls without asking; strict asks, and nobody is there.
	if out, errOut, code := run(t, "", "call", "--workspace", ws, "--autonomy", "safe", "tool_execute_shell_command", "command=echo hi"); code != 0 || !strings.Contains(out, "hi") {
		t.Fatalf("safe: exit %d, %q %q", code, out, errOut)
	}
	_, errOut, code := run(t, "", "call", "--workspace", ws, "--autonomy", "strict", "tool_execute_shell_command", "command=echo hi")
	if code != ExitFailure || !strings.HasPrefix(errOut, "Rejected by the operator: ") {
		t.Fatalf("strict: exit %d, %q", code, errOut)
	}
	hc := filepath.Join(t.TempDir(), "host.json")
	if err := os.WriteFile(hc, []byte(`{"system_shell": {"autonomy_level": "safe"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := run(t, "", "call", "--workspace", ws, "--autonomy", "strict", "--host-config", hc, "tool_execute_shell_command", "command=echo hi"); code != 0 || !strings.Contains(out, "hi") {
		t.Fatalf("--host-config wins: exit %d, %q %q", code, out, errOut)
	}
	if _, errOut, code := run(t, "", "list", "--autonomy", "reckless"); code != ExitUsage || !strings.Contains(errOut, `unknown autonomy level "reckless"`) {
		t.Fatalf("bad level: exit %d, %q", code, errOut)
	}
}

// lcp list --format F prints JSON in that format, --json or not.
func TestListFormatWithoutJSON(t *testing.T) {
	for format, key := range map[string]string{"openai": `"type": "function"`, "anthropic": `"input_schema"`, "mcp": `"inputSchema"`, "lcp": `"input_schema"`} {
		out, errOut, code := run(t, "", "list", "--format", format)
		var specs []map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &specs) != nil || len(specs) == 0 || !strings.Contains(out, key) {
			t.Errorf("list --format %s: exit %d, %q, stdout %.200s", format, code, errOut, out)
		}
	}
	if out, _, code := run(t, "", "list"); code != 0 || !strings.HasPrefix(out, "TOOL") {
		t.Errorf("list without --format prints a table: %.100s", out)
	}
}
