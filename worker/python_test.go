package worker

import (
	"os"
	"os/exec"
	"testing"
)

// TestPythonUnit runs the worker program's own unit tests.
func TestPythonUnit(t *testing.T) {
	requirePython(t)
	t.Parallel()
	cmd := exec.Command("python3", "-m", "unittest", "lcp_worker_test")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python unit tests failed: %v\n%s", err, out)
	}
}
