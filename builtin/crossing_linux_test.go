package builtin_test

import (
	"strings"
	"testing"

	"github.com/lcptools/lcp/tool"
)

// TestStrictKeepsNestedGitReadOnly: in strict, a nested repository's hooks
// and a hooks path are read-only after approval, and the confirmation says
// what is kept so.
func TestStrictKeepsNestedGitReadOnly(t *testing.T) {
	needSandbox(t)
	e := newEnv(t, "strict")
	e.write(".git/config", "[core]\n\thooksPath = .githooks\n")
	e.write(".githooks/pre-commit", "#!/bin/sh\n")
	e.write("sub/.git/hooks/pre-commit", "#!/bin/sh\n")
	e.decision = tool.Allow
	e.call(shellTool, map[string]any{"command": "d=sub/.gi; h=.gith; echo evil >> ${d}t/hooks/pre-commit; echo evil >> ${h}ooks/pre-commit; echo ok > f.txt"})
	if len(e.asked) != 1 || !strings.Contains(e.asked[0].Source, "kept read-only") ||
		!strings.Contains(e.asked[0].Source, "sub/.git") || !strings.Contains(e.asked[0].Source, ".githooks: core.hooksPath") {
		t.Fatalf("the confirmation does not say what is protected: %+v", *e.asked[0])
	}
	if e.read("sub/.git/hooks/pre-commit") != "#!/bin/sh\n" || e.read(".githooks/pre-commit") != "#!/bin/sh\n" {
		t.Errorf("hooks were written: %q, %q", e.read("sub/.git/hooks/pre-commit"), e.read(".githooks/pre-commit"))
	}
	if e.read("f.txt") != "ok\n" {
		t.Errorf("f.txt = %q", e.read("f.txt"))
	}
}

// TestSafeAsksForFilesThatRunLater: a new json.py or .envrc is not applied
// at once in safe; the confirmation gives the reason.
func TestSafeAsksForFilesThatRunLater(t *testing.T) {
	needSandbox(t)
	e := newEnv(t, "safe")
	e.call(shellTool, map[string]any{"command": "echo 'import os' > json.py; echo 'curl x | sh' > .envrc; echo fine > notes.txt"})
	if len(e.asked) != 1 || !strings.Contains(e.asked[0].Source, "standard module json") || !strings.Contains(e.asked[0].Source, "direnv") {
		t.Fatalf("asked = %+v", e.asked)
	}
	if e.read("notes.txt") != "fine\n" {
		t.Errorf("notes.txt = %q: an ordinary new file applies at once", e.read("notes.txt"))
	}
	if !strings.HasPrefix(e.read("json.py"), "<") || !strings.HasPrefix(e.read(".envrc"), "<") {
		t.Errorf("applied without approval: json.py %q, .envrc %q", e.read("json.py"), e.read(".envrc"))
	}
}

// TestShellKillInit: kill -SEGV 1 from the shell tool reaches the init,
// which neither crashes nor shows the model a crash dump.
func TestShellKillInit(t *testing.T) {
	needSandbox(t)
	e := newEnv(t, "safe")
	res := e.call(shellTool, map[string]any{"command": "kill -SEGV 1; kill -ABRT 1; kill -BUS 1; echo alive"})
	out, _ := res["output"].(string)
	wantSuccess(t, res, true)
	if !strings.Contains(out, "alive") || strings.Contains(out, "goroutine") || strings.Contains(out, "SIGSEGV") {
		t.Fatalf("output %q", out)
	}
}

// TestStrictDisablesNewRepoHooks: a repository the shell tool creates in
// strict keeps its files but not its hook; the output says so.
func TestStrictDisablesNewRepoHooks(t *testing.T) {
	needSandbox(t)
	e := newEnv(t, "strict")
	e.decision = tool.Allow
	res := e.call(shellTool, map[string]any{"command": "git init -q x && printf '#!/bin/sh\\necho pwned\\n' > x/.git/hooks/pre-commit && chmod +x x/.git/hooks/pre-commit && echo done"})
	out, _ := res["output"].(string)
	if !strings.Contains(out, "[sandbox] new repository x/.git: hooks disabled: pre-commit (moved to x/.git/hooks.lcp-disabled)") {
		t.Fatalf("output %q (%v)", out, res)
	}
	if e.read("x/.git/hooks.lcp-disabled/pre-commit") != "#!/bin/sh\necho pwned\n" {
		t.Errorf("the hook was not kept aside: %q", e.read("x/.git/hooks.lcp-disabled/pre-commit"))
	}
}
