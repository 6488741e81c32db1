package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/tool"
)

// TestPythonShadowsAsk: without a sandbox, tool_execute_python_code and
// tool_execute_python_file ask when a folder Python searches before the
// standard library holds a module or package named like a standard module,
// even when the code imports it only through another standard module
// (import json imports re). Each case first shows, with the operator's
// approval, that a real python3 runs the shadow; then that a refusal runs
// nothing. A folder without __init__ (a namespace portion, which never
// wins over the standard package) does not ask.
func TestPythonShadowsAsk(t *testing.T) {
	havePython(t)
	noSandbox(t)
	shadow := "print('SHADOW RAN')\n"
	pyc := compiledShadow(t, shadow)
	tests := []struct {
		name       string
		files      map[string]string
		pythonPath string
		tool       string
		args       map[string]any
		want       string // the file named in the reason
	}{
		{"module imported directly", map[string]string{"json.py": shadow}, "",
			"tool_execute_python_code", map[string]any{"code": "import json\nprint(json.dumps(1))"}, "json.py"},
		{"module reached through import json", map[string]string{"re.py": shadow}, "",
			"tool_execute_python_code", map[string]any{"code": "import json\nprint(json.dumps(1))"}, "re.py"},
		{"module reached through import secrets", map[string]string{"hmac.py": shadow}, "",
			"tool_execute_python_code", map[string]any{"code": "import secrets\nprint(secrets.token_hex(2))"}, "hmac.py"},
		{"package reached through import secrets", map[string]string{"base64/__init__.py": shadow}, "",
			"tool_execute_python_code", map[string]any{"code": "import secrets\nprint(secrets.token_hex(2))"}, "base64/"},
		{"sourceless bytecode", map[string]string{"numbers.pyc": pyc}, "",
			"tool_execute_python_code", map[string]any{"code": "import statistics\nprint(statistics.mean([1, 2]))"}, "numbers.pyc"},
		{"beside the script", map[string]string{"sub/main.py": "import logging\nprint(1)\n", "sub/string.py": shadow}, "",
			"tool_execute_python_file", map[string]any{"file_name": "sub/main.py"}, "sub/string.py"},
		{"in a PYTHONPATH folder of the workspace", map[string]string{"lib/hmac.py": shadow}, "lib",
			"tool_execute_python_code", map[string]any{"code": "import secrets\nprint(secrets.token_hex(2))"}, "lib/hmac.py"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PYTHONPATH", tc.pythonPath)
			e := newEnv(t, "safe")
			for name, content := range tc.files {
				e.write(name, content)
			}
			e.decision = tool.Allow
			res := e.call(tc.tool, tc.args)
			if len(e.asked) != 1 || !strings.Contains(e.asked[0].Source, tc.want) || !strings.Contains(e.asked[0].Source, "in place of the standard module") {
				t.Fatalf("asked %d times, want once naming %s: %v", len(e.asked), tc.want, e.asked)
			}
			if out, _ := res["stdout"].(string); !strings.Contains(out, "SHADOW RAN") && !preloaded(t, tc.want) {
				t.Fatalf("approved, the shadow should have run (the case must be a real shadow): %v", res)
			}
			e.asked, e.decision = nil, tool.Reject
			res = e.call(tc.tool, tc.args)
			wantSuccess(t, res, false)
			if len(e.asked) != 1 {
				t.Fatalf("asked %d times, want once", len(e.asked))
			}
			if out, _ := res["stdout"].(string); strings.Contains(out, "SHADOW RAN") {
				t.Fatalf("refused, the shadow ran: %v", res)
			}
		})
	}
	t.Run("namespace folder and unrelated modules", func(t *testing.T) {
		t.Setenv("PYTHONPATH", "")
		e := newEnv(t, "safe")
		e.write("json/notes.py", shadow)
		e.write("helpers.py", "X = 1\n")
		e.write("data.json", "{}")
		res := e.call("tool_execute_python_code", map[string]any{"code": "import json, helpers\nprint(json.dumps(helpers.X))"})
		wantSuccess(t, res, true)
		if len(e.asked) != 0 || res["stdout"] != "1\n" {
			t.Fatalf("asked %v, result %v", e.asked, res)
		}
	})
}

// compiledShadow returns src compiled by python3 to bytecode, for a
// sourceless module.
func compiledShadow(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "s.pyc")
	cmd := exec.Command("python3", "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)", filepath.Join(dir, "s.py"), out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// preloaded reports whether python3 has imported the module a shadow
// stands for before it runs any code (this interpreter's site does so
// with re), so that the shadow cannot run here, although the check still
// asks: another interpreter may not preload it.
func preloaded(t *testing.T, shadow string) bool {
	t.Helper()
	mod, _, _ := strings.Cut(filepath.Base(strings.TrimSuffix(shadow, "/")), ".")
	cmd := exec.Command("python3", "-c", "import sys; print(sys.argv[1] in sys.modules)", mod)
	cmd.Dir = t.TempDir()
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	if strings.TrimSpace(string(b)) == "True" {
		t.Logf("python3 imports %s at start-up: only the question is checked", mod)
		return true
	}
	return false
}
