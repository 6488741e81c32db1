package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteRunNewRepoHooksDisabled creates a repository inside a real
// Write sandbox with a hook, a hooks path and an fsmonitor, and checks
// that the user's next host git commit there runs none of them.
func TestWriteRunNewRepoHooksDisabled(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	r := runIn(t, &Policy{Workspace: ws, Mode: Write}, `
set -e
git init -q x
printf '#!/bin/sh\necho hook >> `+marker+`\n' > x/.git/hooks/pre-commit
chmod +x x/.git/hooks/pre-commit
mkdir -p x/h && cp x/.git/hooks/pre-commit x/h/pre-commit
git -C x config core.fsmonitor "$PWD/x/h/pre-commit"
git -C x config user.name Test
git -C x config alias.st "!sh x/h/pre-commit"`)
	if r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	got := strings.Join(r.report.NewRepos, "\n")
	for _, want := range []string{"new repository x/.git: hooks disabled: pre-commit (moved to x/.git/hooks.lcp-disabled)",
		"config disabled: core.fsmonitor, alias.st"} {
		if !strings.Contains(got, want) {
			t.Errorf("NewRepos = %q, want %q", got, want)
		}
	}
	writeTestFile(t, filepath.Join(ws, "x", "f"), "f\n")
	for _, args := range [][]string{{"add", "f"}, {"-c", "user.email=t@example.com", "commit", "-qm", "m"}, {"status"}} {
		cmd := exec.Command("git", append([]string{"-C", filepath.Join(ws, "x")}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("host git %v: %v\n%s", args, err, out)
		}
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a hook the run planted ran on the host: %q", b)
	}
	cmd := exec.Command("git", "-C", filepath.Join(ws, "x"), "config", "user.name")
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "Test" {
		t.Errorf("user.name = %q, %v: the rest of the configuration should be kept", out, err)
	}
}

func TestNeutraliseKnownReposUntouched(t *testing.T) {
	ws := t.TempDir()
	writeTestFile(t, filepath.Join(ws, "a", ".git", "hooks", "pre-commit"), "#!/bin/sh\n")
	writeTestFile(t, filepath.Join(ws, "a", ".git", "config"), "[core]\n\tfsmonitor = ./m\n")
	known, err := gitDirs(ws)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := neutraliseNewRepos(ws, known)
	if err != nil || len(lines) != 0 {
		t.Fatalf("lines %q, err %v: a repository found at plan time is not changed", lines, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "a", ".git", "hooks", "pre-commit")); err != nil {
		t.Fatal(err)
	}
}
