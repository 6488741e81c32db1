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

// everyday are the commands an agent runs all day: in the sandbox, safe
// mode must run them without asking (the goal: at most 10% asking), and
// they must work.
var everyday = []string{
	"ls", "ls -la", "pwd", "cat README.md", "head -n 3 data.csv", "tail -n 2 data.csv", "wc -l *.csv",
	"grep -r TODO .", "grep -rn main --include=*.go .", "find . -name '*.go'", "find . -type f | sort",
	"du -sh .", "stat main.go", "file main.go", "sort data.csv | uniq -c", "cut -d, -f1 data.csv",
	"awk -F, '{ s += $2 } END { print s }' data.csv", "sed -n '2,3p' data.csv", "diff data.csv data.csv",
	"git status", "git log --oneline", "git diff", "git diff HEAD --stat", "git show --stat HEAD", "git branch",
	"git ls-files", "git blame README.md",
	"go version", "go build ./...", "go vet ./...", "go test ./...", "gofmt -l .",
	"python3 --version", "python3 -m json.tool data.json", "python3 -c 'print(6*7)'", "python3 script.py",
	"pip list", "pip --version",
	"node --version", "node -e 'console.log(6*7)'", "npm ls", "npm --version",
	"make -n", "make hello", "tar -tf archive.tar", "tar -xf archive.tar -C extracted", "jq .name data.json",
	"echo done > out.txt && cat out.txt", "mkdir -p build && touch build/x", "cp data.csv build/", "date", "uname -a",
	"env | sort | head -3", "which go python3 node", "sha256sum data.csv", "tree -L 1 . 2>/dev/null || ls",
}

func TestEverydayCommands(t *testing.T) {
	needSandbox(t)
	for _, bin := range []string{"git", "go", "python3", "make", "tar"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("needs %s", bin)
		}
	}
	ws := t.TempDir()
	files := map[string]string{
		"README.md":    "# Project\nTODO: more\n",
		"data.csv":     "a,1\nb,2\nb,3\n",
		"data.json":    `{"name": "lcp", "n": 1}`,
		"main.go":      "package main\n\nfunc main() { println(\"hi\") }\n",
		"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
		"go.mod":       "module example.com/m\n\ngo 1.21\n",
		"script.py":    "import json\nprint(json.load(open('data.json'))['name'])\n",
		"Makefile":     "hello:\n\t@echo hello\nbuild:\n\tgo build ./...\n",
		"package.json": `{"name": "m", "version": "1.0.0"}`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(ws, "extracted"), 0o755)
	setup := "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm init && tar -cf archive.tar README.md"
	if out, err := exec.Command("sh", "-c", "cd "+ws+" && "+setup).CombinedOutput(); err != nil {
		t.Fatalf("setup: %v %s", err, out)
	}
	ts, err := builtin.New(&builtin.Options{Workspace: ws, Configs: map[string]map[string]any{
		builtin.SystemShell: {"autonomy_level": "safe", "timeout": 120}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	asked, failed, ran := 0, 0, 0
	for _, cmd := range everyday {
		// A program this machine lacks is not the sandbox's failure.
		prog := strings.Fields(cmd)[0]
		if _, err := exec.LookPath(prog); err != nil && !strings.ContainsAny(prog, "=") {
			t.Logf("skipped (%s is not installed): %s", prog, cmd)
			continue
		}
		ran++
		raw, _ := json.Marshal(map[string]any{"command": cmd})
		var ask bool
		res, err := tool.Call(context.Background(), ts, "tool_execute_shell_command", raw, &tool.CallOptions{
			Confirm: func(context.Context, *tool.Request) (tool.Decision, string) { ask = true; return tool.Reject, "no" },
		})
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if ask {
			asked++
			t.Logf("asked: %s", cmd)
			continue
		}
		if !res.Success {
			failed++
			t.Errorf("%s failed in the sandbox: %s", cmd, strings.TrimSpace(res.Error))
		}
	}
	pct := 100 * float64(asked) / float64(ran)
	t.Logf("everyday commands: %d, asked %d (%.1f%%), failed %d", ran, asked, pct, failed)
	if pct > 10 {
		t.Errorf("%.1f%% of everyday commands asked, want at most 10%%", pct)
	}
}
