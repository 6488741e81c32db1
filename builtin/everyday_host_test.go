//go:build linux

package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/tool"
)

// everydayHost are commands that only read, or only write new files in
// the workspace: without a sandbox, safe mode must run at least 90% of
// them without asking.
var everydayHost = []string{
	"ls", "ls -la", "pwd", "cat README.md", "head -n 3 data.csv", "tail -n 2 data.csv", "wc -l data.csv",
	"grep -r TODO .", "find . -name '*.go'", "sort data.csv | uniq -c", "du -sh .", "diff data.csv data.csv",
	"sha256sum data.csv", "stat main.go", "date", "uname -a",
	"git status", "git log --oneline", "git diff", "git add README.md",
	"go version", "python3 --version", "python3 -c 'print(6*7)'", "python3 script.py",
	`python3 -c 'import json; print(json.dumps({"a": 1}))'`, "pip list", "pip --version",
	"make", "make hello", "make -n hello",
	"tar czf new.tgz README.md data.csv", "tar tzf new.tgz",
	"mkdir -p build && touch build/x", "cp data.csv build/", "echo done > out.txt",
}

// riskyHost must ask without a sandbox: they change existing entries
// (content, modes, times, extended attributes) or run what is not judged.
var riskyHost = []string{
	"chmod +x script.py", "touch README.md", "touch -d 2020-01-01 README.md", "setfattr -n user.x -v 1 .",
	"python3 -c 'import os; os.setxattr(\".\", \"user.x\", b\"1\")'", "python3 -c 'import os; os.chmod(\"README.md\", 0o777)'",
	"python3 -c 'import os; os.utime(\"README.md\", (0, 0))'", "python3 -c 'import subprocess; subprocess.run([\"id\"])'",
	"python3 -c 'open(\"README.md\", \"w\").write(\"x\")'", "python3 evil.py", "python3 -m json.tool data.json",
	"make danger", "make build", "rm README.md", "mv README.md x.md", "sed -i s/a/b/ data.csv",
	"git commit -m x", "git add -p", "tar xf new.tgz", "tar czf README.md data.csv", "pip install requests",
	"pip list --outdated",
}

func TestEverydayCommandsWithoutSandbox(t *testing.T) {
	for _, bin := range []string{"git", "go", "python3", "make", "tar", "pip"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("needs %s", bin)
		}
	}
	ws := t.TempDir()
	files := map[string]string{
		"README.md": "# Project\nTODO: more\n",
		"data.csv":  "a,1\nb,2\nb,3\n",
		"data.json": `{"name": "lcp", "n": 1}`,
		"main.go":   "package main\n\nfunc main() { println(\"hi\") }\n",
		"go.mod":    "module example.com/m\n\ngo 1.21\n",
		"script.py": "import json\nprint(json.load(open('data.json'))['name'])\n",
		"evil.py":   "import os\nos.system('id')\n",
		"Makefile":  "hello:\n\t@echo hello\nbuild:\n\tgo build ./...\ndanger:\n\trm -f README.md\n.PHONY: hello build danger\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setup := "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm init"
	if out, err := exec.Command("sh", "-c", "cd "+ws+" && "+setup).CombinedOutput(); err != nil {
		t.Fatalf("setup: %v %s", err, out)
	}
	ts, err := builtin.New(&builtin.Options{Workspace: ws, Configs: map[string]map[string]any{
		builtin.SystemShell:   {"autonomy_level": "safe", "sandbox": "off", "timeout": 120},
		builtin.ExecutePython: {"autonomy_level": "safe", "sandbox": "off"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	call := func(cmd string) (asked bool, res *tool.Result) {
		raw, _ := json.Marshal(map[string]any{"command": cmd})
		res, err := tool.Call(context.Background(), ts, "tool_execute_shell_command", raw, &tool.CallOptions{
			Confirm: func(context.Context, *tool.Request) (tool.Decision, string) { asked = true; return tool.Reject, "no" },
		})
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return asked, res
	}
	asked := 0
	for _, cmd := range everydayHost {
		a, res := call(cmd)
		if a {
			asked++
			t.Logf("asked: %s", cmd)
			continue
		}
		if !res.Success {
			t.Errorf("%s failed: %s", cmd, strings.TrimSpace(res.Error))
		}
	}
	pct := 100 * float64(asked) / float64(len(everydayHost))
	t.Logf("everyday commands without a sandbox: %d, asked %d (%.1f%%)", len(everydayHost), asked, pct)
	if pct > 10 {
		t.Errorf("%.1f%% of everyday commands asked without a sandbox, want at most 10%%", pct)
	}
	for _, cmd := range riskyHost {
		if a, _ := call(cmd); !a {
			t.Errorf("ran without asking: %s", cmd)
		}
	}
	// tool_execute_python_code judges the same way.
	for _, code := range []string{"import os\nos.setxattr('.', 'user.x', b'1')", "import os\nos.chmod('README.md', 0o777)",
		"import os\nos.utime('README.md', (0, 0))"} {
		asked := false
		raw, _ := json.Marshal(map[string]any{"code": code})
		if _, err := tool.Call(context.Background(), ts, "tool_execute_python_code", raw, &tool.CallOptions{
			Confirm: func(context.Context, *tool.Request) (tool.Decision, string) { asked = true; return tool.Reject, "no" },
		}); err != nil {
			t.Fatal(err)
		}
		if !asked {
			t.Errorf("tool_execute_python_code ran without asking: %q", code)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "README.md")); err != nil || string(b) != files["README.md"] {
		t.Errorf("README.md changed: %q %v", b, err)
	}
}
