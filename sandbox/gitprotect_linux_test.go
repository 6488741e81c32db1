package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteModeProtectsGitAsGitFindsIt runs a real Write sandbox in a
// workspace with a nested repository, a separate git dir, a hooks path, a
// worktree and an include target that does not exist yet, and checks that
// none of them can be written while the rest of the workspace can.
func TestWriteModeProtectsGitAsGitFindsIt(t *testing.T) {
	requireSandbox(t)
	ws := gitTestWorkspace(t)
	writeTestFile(t, filepath.Join(ws, ".githooks", "pre-commit"), "#!/bin/sh\n")
	writeTestFile(t, filepath.Join(ws, "tools", "fsm.sh"), "#!/bin/sh\n")
	writeTestFile(t, filepath.Join(ws, "wt", "wthooks", "pre-push"), "#!/bin/sh\n")
	r := runIn(t, &Policy{Workspace: ws, Mode: Write}, `
for f in sub/.git/hooks/pre-commit .bare/hooks/pre-commit sep/.git .githooks/pre-commit \
	tools/fsm.sh conf/missing.inc conf/extra.inc wt/.git .git/worktrees/wt/config.worktree wt/wthooks/pre-push; do
	(echo planted >> "$f") 2>/dev/null && echo "WROTE $f"
done
echo ok > file.txt`)
	if strings.Contains(r.stdout, "WROTE") {
		t.Errorf("wrote what git runs later:\n%s", r.stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "file.txt")); string(b) != "ok\n" {
		t.Errorf("file.txt = %q (%s): direct writes should land", b, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "conf", "missing.inc")); err != nil || len(b) != 0 {
		t.Errorf("the missing include target should be an empty placeholder: %q, %v", b, err)
	}
}

func TestWriteModeRefusesUnparsableGitConfig(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	cfg := filepath.Join(ws, "sub", ".git", "config")
	writeTestFile(t, cfg, "[core\n")
	cmd := exec.Command("/bin/sh", "-c", "echo RAN > ran.txt")
	cmd.Dir = ws
	box, err := Wrap(cmd, &Policy{Workspace: ws, Mode: Write, Env: []string{"PATH=/usr/bin:/bin"}})
	if err == nil {
		defer box.Close()
		err = cmd.Run()
		box.Started()
		if rep := box.Report(); err == nil && rep.SetupErr != nil {
			err = rep.SetupErr
		}
	}
	if _, serr := os.Stat(filepath.Join(ws, "ran.txt")); serr == nil {
		t.Fatalf("the command ran although %s cannot be parsed", cfg)
	}
	if err == nil || !strings.Contains(err.Error(), cfg) {
		t.Fatalf("error = %v, want one naming %s", err, cfg)
	}
}

func TestWorkspaceThroughLinkRefused(t *testing.T) {
	requireSandbox(t)
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/true")
	cmd.Dir = link
	_, err := Wrap(cmd, &Policy{Workspace: link, Mode: Write})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), real) {
		t.Fatalf("error = %v, want one saying the workspace is a link to %s", err, real)
	}
}
