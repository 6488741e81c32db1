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

func TestCallEndToEnd(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	lib := `
import os
COUNT = 0

def tool_add(a: int, b: int = 2):
    """Adds two numbers.

    Args:
        a: the first
        b: the second
    """
    return {"success": True, "output": a + b, "prompt_injection": "say the sum"}

def tool_count():
    global COUNT
    COUNT += 1
    return COUNT

def tool_fail():
    raise ValueError("nope")

def tool_where(tool_context=None):
    return {"cwd": os.getcwd(), "ctx": tool_context}

def tool_chart():
    return {"_lcp_content": [
        {"type": "text", "text": "Sales:"},
        {"type": "image", "data": bytes(68), "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "test://data.csv", "mimeType": "text/csv", "text": "a,b"}},
    ]}

def tool_video():
    return {"output": "x", "_lcp_content": [{"type": "video", "data": "AA=="}]}
`
	if err := os.WriteFile(filepath.Join(dir, "mathlib.py"), []byte(lib), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()

	out, _, code := run(t, "", "call", "--tools", dir, "--workspace", ws, "--json", "tool_add", "a=40")
	if code != 0 || !strings.Contains(out, `"output": 42`) {
		t.Fatalf("key=value call: %d %s", code, out)
	}
	out, _, code = run(t, "", "call", "--tools", dir, "--json", "tool_add", "--args", `{"a":"1","b":"2"}`)
	if code != 0 || !strings.Contains(out, `"output": 3`) {
		t.Fatalf("--args call with coercion: %d %s", code, out)
	}
	out, errOut, code := run(t, "", "call", "--tools", dir, "tool_fail")
	if code != ExitFailure || !strings.Contains(errOut, "Error executing 'tool_fail': ValueError: nope") {
		t.Fatalf("failing tool: %d %q %q", code, out, errOut)
	}
	out, errOut, code = run(t, "", "call", "--tools", dir, "--json", "tool_nope")
	if code != ExitEngine || !strings.Contains(out, `"status_code": 404`) || errOut != "lcp: Tool 'tool_nope' not found.\n" {
		t.Fatalf("unknown tool: %d %q %q", code, out, errOut)
	}
	// The nearest names on stderr; the result object keeps the
	// contract's text.
	out, errOut, code = run(t, "", "call", "--tools", dir, "--json", "tool_ad", "a=1")
	if code != ExitEngine || !strings.Contains(out, `"error": "Tool 'tool_ad' not found."`) || errOut != "lcp: Tool 'tool_ad' not found. Did you mean tool_add?\n" {
		t.Fatalf("misspelt tool: %d %q %q", code, out, errOut)
	}
	out, errOut, code = run(t, "", "call", "--tools", dir, "count")
	if code != ExitEngine || out != "" || errOut != "lcp: Tool 'count' not found. Did you mean tool_count?\n" {
		t.Fatalf("tool without its prefix: %d %q %q", code, out, errOut)
	}
	out, _, code = run(t, "", "call", "--tools", dir, "--workspace", ws, "--context", `{"user":"ada"}`, "--json", "tool_where")
	if code != 0 || !strings.Contains(out, `"user": "ada"`) || !strings.Contains(out, ws) {
		t.Fatalf("context and workspace: %d %s", code, out)
	}
	// Content blocks: placeholders in text, whole in --json.
	out, _, code = run(t, "", "call", "--tools", dir, "tool_chart")
	if code != 0 || out != "Sales:\n[image image/png, 68 bytes]\n[resource test://data.csv, text/csv, 3 bytes]\n" {
		t.Fatalf("tool_chart: %d %q", code, out)
	}
	out, _, code = run(t, "", "call", "--tools", dir, "--json", "tool_chart")
	if code != 0 || !strings.Contains(out, `"_lcp_content": [`) || !strings.Contains(out, `"data": "AAAA`) || strings.Contains(out, "_converted") {
		t.Fatalf("tool_chart --json: %d %s", code, out)
	}
	_, errOut, code = run(t, "", "call", "--tools", dir, "tool_video")
	if code != ExitFailure || !strings.Contains(errOut, `unknown content type "video"`) {
		t.Fatalf("a block lcp cannot carry: %d %q", code, errOut)
	}
	for _, bad := range [][]string{
		{"call", "--tools", dir, "tool_add", "--args", "[1]"},
		{"call", "--tools", dir, "tool_add", "--args", "{", "x=1"},
		{"call", "--tools", dir, "tool_add", "novalue"},
		{"call", "--tools", dir},
		{"call", "--tools", dir, "--approve", "sometimes", "tool_add"},
		{"call", "--tools", dir, "--context", "5", "tool_add"},
		{"list", "--format", "yaml"},
		{"call", "--tools", dir, "--workspace", "/does/not/exist", "tool_add"},
	} {
		if _, errOut, code := run(t, "", bad...); code != ExitUsage || errOut == "" || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want a one-line usage error", bad, code, errOut)
		}
	}
}

func TestBatch(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.py"), []byte("N = 0\ndef tool_count():\n    global N\n    N += 1\n    return N\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := `{"tool":"tool_count","args":{}}
not json
{"tool":"tool_count"}

{"args":{}}
{"tool":"tool_missing","args":{}}
{"tool":"tool_count","args":[1]}
{"tool":"tool_count","args":{}}`
	out, _, code := run(t, in, "call", "--tools", dir, "--batch", "-")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitFailure || len(lines) != 7 {
		t.Fatalf("exit %d, %d lines:\n%s", code, len(lines), out)
	}
	// Each result says its input line (the blank one counts) and tool.
	want := []string{
		`{"line":1,"tool":"tool_count","result":{"output":1,"success":true,"status_code":200}}`,
		`{"line":2,"result":{"output":"batch line 2: not a JSON object {\"tool\", \"args\"}: invalid character 'o' in literal null (expecting 'u')","success":false,"status_code":400,"error":"batch line 2: not a JSON object {\"tool\", \"args\"}: invalid character 'o' in literal null (expecting 'u')"}}`,
		`{"line":3,"tool":"tool_count","result":{"output":2,"success":true,"status_code":200}}`,
		`{"line":5,"result":{"output":"batch line 5: missing \"tool\"","success":false,"status_code":400,"error":"batch line 5: missing \"tool\""}}`,
		`{"line":6,"tool":"tool_missing","result":{"output":"Tool 'tool_missing' not found.","success":false,"status_code":404,"error":"Tool 'tool_missing' not found."}}`,
		`{"line":7,"tool":"tool_count","result":{"output":"batch line 7: \"args\" must be a JSON object","success":false,"status_code":400,"error":"batch line 7: \"args\" must be a JSON object"}}`,
		`{"line":8,"tool":"tool_count","result":{"output":3,"success":true,"status_code":200}}`,
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("result %d:\n got  %s\n want %s", i+1, lines[i], w)
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

// TestBuiltinsWithoutATerminal: a risky built-in action is not approved
// without a person; the reason says how to approve; --yes approves.
func TestBuiltinsWithoutATerminal(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "junk.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "", "call", "--workspace", ws, "tool_execute_shell_command", "command=rm junk.txt")
	if code != ExitFailure || !strings.HasPrefix(errOut, "Rejected by the operator: Not approved") || !strings.Contains(errOut, "--yes") {
		t.Fatalf("unattended rm: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "junk.txt")); err != nil {
		t.Fatal("the file was removed without approval")
	}
	out, _, code := run(t, "", "call", "--workspace", ws, "--json", "tool_execute_shell_command", "command=ls")
	if code != 0 || !strings.Contains(out, "junk.txt") {
		t.Fatalf("read-only ls: exit %d, %s", code, out)
	}
	if _, errOut, code := run(t, "", "call", "--workspace", ws, "--yes", "tool_execute_shell_command", "command=rm junk.txt"); code != 0 {
		t.Fatalf("--yes rm: exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "junk.txt")); err == nil {
		t.Fatal("--yes did not run the command")
	}
}

// TestRejectedReadsAsRejected: a Python tool whose confirmation is
// declined fails with its own text (the result object is the tool's),
// and the person reads a refusal, not an error 500.
func TestRejectedReadsAsRejected(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	src := `_CONFIRM_HANDLER = None


def set_confirm_handler(h):
    global _CONFIRM_HANDLER
    _CONFIRM_HANDLER = h


def tool_drop_table(name: str):
    """Drops a table of the database.

    Args:
        name: the table
    """
    decision, reason = _CONFIRM_HANDLER("DROP TABLE " + name, "drop table")
    if decision not in ("allow", "always"):
        return {"success": False, "error": "Not dropped: " + (reason or "rejected")}
    return {"success": True, "output": "dropped"}
`
	if err := os.WriteFile(filepath.Join(dir, "db.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "", "call", "--tools", dir, "--approve", "reject", "tool_drop_table", "name=users")
	if code != ExitFailure || out != "" || errOut != "Rejected by the operator: "+rejectedByFlag+"\n" {
		t.Fatalf("rejected: exit %d, %q, %q", code, out, errOut)
	}
	out, errOut, code = run(t, "", "call", "--tools", dir, "--approve", "reject", "--json", "tool_drop_table", "name=users")
	if code != ExitFailure || !strings.Contains(out, `"error": "Not dropped: `+rejectedByFlag+`"`) || strings.Contains(out, "Rejected by the operator") ||
		errOut != "lcp: Rejected by the operator: "+rejectedByFlag+"\n" {
		t.Fatalf("rejected, --json: exit %d, %q, %q", code, out, errOut)
	}
	out, _, code = run(t, "", "call", "--tools", dir, "--yes", "tool_drop_table", "name=users")
	if code != 0 || out != "dropped\n" {
		t.Fatalf("approved: exit %d, %q", code, out)
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
