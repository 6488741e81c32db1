//go:build linux

package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

func needSandbox(t *testing.T) {
	t.Helper()
	if st := sandbox.Probe(); !st.Available {
		t.Skipf("the kernel sandbox is unavailable here: %s", st.Reason)
	}
}

const shellTool = "tool_execute_shell_command"

func (e *env) read(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.ws, name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func TestShellSandboxedSafe(t *testing.T) {
	needSandbox(t)
	e := newEnv(t, "safe")
	e.write("a.txt", "one\ntwo\n")

	// Reads and new files: no question.
	res := e.call(shellTool, map[string]any{"command": "wc -l < a.txt; echo new > new.txt"})
	wantSuccess(t, res, true)
	if strings.TrimSpace(res["stdout"].(string)) != "2" || len(e.asked) != 0 {
		t.Fatalf("result %v, asked %d", res, len(e.asked))
	}
	if e.read("new.txt") != "new\n" {
		t.Errorf("new.txt = %q: new files apply at once", e.read("new.txt"))
	}
	if !strings.Contains(res["output"].(string), "new file new.txt") {
		t.Errorf("output does not tell what was applied: %q", res["output"])
	}

	// Deleting an existing file runs, and the deletion waits for the
	// operator, who rejects it here.
	res = e.call(shellTool, map[string]any{"command": "ls; rm -f a.txt; echo x > other.txt"})
	if len(e.asked) != 1 || e.asked[0].Label != "Apply changes to existing workspace files" || !strings.Contains(e.asked[0].Source, "deleted a.txt") {
		t.Fatalf("asked = %+v", e.asked)
	}
	wantSuccess(t, res, false)
	if e.read("a.txt") != "one\ntwo\n" || e.read("other.txt") != "x\n" {
		t.Errorf("after a rejection: a.txt %q (kept), other.txt %q (new, applied)", e.read("a.txt"), e.read("other.txt"))
	}
	wc := res["workspace_changes"].(map[string]any)
	if !strings.Contains(res["error"].(string), "not now") || !strings.Contains(strings.Join(toStrings(wc["dropped"]), ""), "deleted a.txt") {
		t.Errorf("the result does not tell what was dropped: %v", res)
	}

	// Approved: the deletion applies.
	e.decision, e.asked = tool.Allow, nil
	res = e.call(shellTool, map[string]any{"command": "rm a.txt"})
	wantSuccess(t, res, true)
	if _, err := os.Stat(filepath.Join(e.ws, "a.txt")); err == nil || len(e.asked) != 1 {
		t.Errorf("approved deletion: asked %d, a.txt still there: %v", len(e.asked), err == nil)
	}

	// Files the session created change without asking.
	e.decision, e.asked = tool.Reject, nil
	res = e.call(shellTool, map[string]any{"command": "echo again > new.txt && rm other.txt"})
	wantSuccess(t, res, true)
	if len(e.asked) != 0 || e.read("new.txt") != "again\n" {
		t.Errorf("own file: asked %d, new.txt %q", len(e.asked), e.read("new.txt"))
	}

	// The network is a permission beyond the sandbox: asked before.
	e.asked = nil
	res = e.call(shellTool, map[string]any{"command": "curl -s http://127.0.0.1:9/"})
	wantSuccess(t, res, false)
	if len(e.asked) != 1 || e.asked[0].Label != "Run a shell command" || !strings.Contains(e.asked[0].Source, "network access") {
		t.Fatalf("network: asked %+v", e.asked)
	}
	e.asked = nil
	e.call(shellTool, map[string]any{"command": "echo hi", "network": true})
	if len(e.asked) != 1 {
		t.Errorf("a run asking for the network was not put to the operator")
	}
}

func TestShellSandboxedTellsWhatWasBlocked(t *testing.T) {
	needSandbox(t)
	e := newEnv(t, "safe")
	res := e.call(shellTool, map[string]any{"command": "f=/etc/lcp-test; echo x > $f"})
	wantSuccess(t, res, false)
	if b, _ := res["sandbox_blocked"].([]any); len(b) == 0 || !strings.Contains(res["error"].(string), "unsandboxed=true") {
		t.Errorf("blocked write: %v", res)
	}
	if _, err := os.Stat("/etc/lcp-test"); err == nil {
		os.Remove("/etc/lcp-test")
		t.Fatal("the sandbox let the command write /etc")
	}
	// The denial is a log record of the call, for the metrics.
	e.mu.Lock()
	defer e.mu.Unlock()
	found := false
	for _, ev := range e.events {
		if ev.Kind == tool.EventLog && strings.Contains(string(ev.Data), `"`+builtin.SandboxDenialKey+`":"filesystem"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no sandbox denial event among %+v", e.events)
	}
}

func TestShellSandboxedStrict(t *testing.T) {
	needSandbox(t)
	e := newEnv(t, "strict")
	e.write(".git/HEAD", "ref: refs/heads/main\n")
	e.decision = tool.Allow
	res := e.call(shellTool, map[string]any{"command": "echo x > f.txt; d=.git; echo y > $d/planted"})
	if len(e.asked) != 1 {
		t.Fatalf("strict asked %d times", len(e.asked))
	}
	if e.read("f.txt") != "x\n" {
		t.Errorf("strict writes the workspace directly: f.txt = %q", e.read("f.txt"))
	}
	if _, err := os.Stat(filepath.Join(e.ws, ".git", "planted")); err == nil {
		t.Errorf("strict wrote .git without being granted it: %v", res)
	}
	e.asked = nil
	e.call(shellTool, map[string]any{"command": "git add f.txt"})
	if len(e.asked) != 1 || !strings.Contains(e.asked[0].Source, "version control") {
		t.Errorf("git add in strict does not say it writes .git: %+v", e.asked)
	}
}

func TestPythonSandboxed(t *testing.T) {
	needSandbox(t)
	havePython(t)
	e := newEnv(t, "safe")
	e.write("data.csv", "a,b\n1,2\n")
	res := e.call("tool_execute_python_code", map[string]any{"code": "import subprocess, os\n" +
		"subprocess.run(['touch', 'made.txt'])\nprint(open('data.csv').read().count(','), os.environ.get('HOME'))"})
	wantSuccess(t, res, true)
	if len(e.asked) != 0 {
		t.Fatalf("sandboxed Python that spawns asked: %+v", e.asked)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "made.txt")); err != nil {
		t.Errorf("made.txt: %v", err)
	}
	home, _ := os.UserHomeDir()
	if got := strings.TrimSpace(res["stdout"].(string)); got != "2 "+home {
		t.Errorf("stdout = %q", got)
	}
	// Rewriting a file the session did not create waits for approval.
	res = e.call("tool_execute_python_code", map[string]any{"code": "open('data.csv', 'w').write('gone')"})
	if len(e.asked) != 1 || !strings.Contains(e.asked[0].Source, "modified data.csv") || e.read("data.csv") != "a,b\n1,2\n" {
		t.Errorf("asked %+v, data.csv %q", e.asked, e.read("data.csv"))
	}
	wantSuccess(t, res, false)
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	if ss, ok := v.([]string); ok {
		return ss
	}
	return out
}

// TestWriteThroughLinkIntoGit checks that workspace_tools judge a write
// where it lands: a link in the workspace that leads into .git is .git.
func TestWriteThroughLinkIntoGit(t *testing.T) {
	e := newEnv(t, "safe")
	e.write(".git/hooks/.keep", "")
	if err := os.Symlink(".git/hooks", filepath.Join(e.ws, "hooks")); err != nil {
		t.Skip(err)
	}
	res := e.call("tool_write_file", map[string]any{"file_name": "hooks/pre-commit", "content": "#!/bin/sh\nid\n"})
	if len(e.asked) != 1 || !strings.Contains(e.asked[0].Source, ".git") {
		t.Fatalf("asked = %+v", e.asked)
	}
	wantSuccess(t, res, false)
	if _, err := os.Stat(filepath.Join(e.ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a hook was planted through a link")
	}
}

// A run killed before it ended applies nothing, not even its new files
// (they may be half written), and says what it discarded.
func TestKilledRunAppliesNothing(t *testing.T) {
	needSandbox(t)
	e := newEnv(t, "safe")
	res := e.call(shellTool, map[string]any{"command": "echo partial > new.txt; kill -9 $$"})
	wantSuccess(t, res, false)
	if _, err := os.Stat(filepath.Join(e.ws, "new.txt")); err == nil {
		t.Errorf("new.txt of a killed run was applied")
	}
	wc, _ := res["workspace_changes"].(map[string]any)
	if got := strings.Join(toStrings(wc["discarded"]), ";"); !strings.Contains(got, "new file new.txt") {
		t.Errorf("discarded = %q, result %v", got, res)
	}
	if !strings.Contains(res["error"].(string), "killed by SIGKILL") {
		t.Errorf("error %q does not say why", res["error"])
	}
}
