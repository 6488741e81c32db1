package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSafeEnv(t *testing.T) {
	in := []string{"HOME=/h", "PAGER=less", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=x"}
	got := SafeEnv(in)
	for _, want := range []string{"HOME=/h", "PAGER=cat", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_KEY_1=core.fsmonitor",
		"GIT_CONFIG_VALUE_1=false", "GIT_CONFIG_COUNT=9"} {
		if !slices.Contains(got, want) {
			t.Errorf("SafeEnv lacks %q: %q", want, got)
		}
	}
	if slices.Contains(got, "PAGER=less") || slices.Contains(got, "GIT_CONFIG_COUNT=1") {
		t.Errorf("SafeEnv kept an overridden entry: %q", got)
	}
	if in[1] != "PAGER=less" {
		t.Errorf("SafeEnv modified its input")
	}
}

// TestSafeEnvStopsGitHooks runs real git: a repository whose configuration
// names an fsmonitor program must not run it under SafeEnv.
func TestSafeEnvStopsGitHooks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = env
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	base := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	run(base, "init", "-q")
	run(base, "config", "core.fsmonitor", "touch "+marker+"; false")
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)

	run(SafeEnv(base), "status", "--porcelain")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("git status ran the configured fsmonitor under SafeEnv")
	}
	// Without the hardening it does run: the test can fail.
	out := run(base, "status", "--porcelain")
	if _, err := os.Stat(marker); err != nil {
		t.Skipf("this git does not run core.fsmonitor as a command (%s)", strings.TrimSpace(out))
	}
}
