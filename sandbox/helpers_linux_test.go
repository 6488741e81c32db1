package sandbox

import (
	"bytes"
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/lcptools/lcp/internal/spawn"
)

// requireSandbox skips the test when this machine cannot sandbox.
func requireSandbox(t testing.TB) {
	t.Helper()
	if st := Probe(); !st.Available {
		t.Skipf("the kernel sandbox is unavailable here: %s", st.Reason)
	}
}

type result struct {
	stdout, stderr string
	err            error
	report         *Report
	box            *Box
}

// runIn runs a shell script sandboxed by p and returns its outcome; the
// Box is closed at the end of the test.
func runIn(t testing.TB, p *Policy, script string) result {
	t.Helper()
	return runCmd(t, p, "/bin/sh", "-c", script)
}

// runCmd runs a program sandboxed by p, with a hang detector far from
// expected times.
func runCmd(t testing.TB, p *Policy, path string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = p.Workspace
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if p.Env == nil {
		p.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	}
	box, err := Wrap(cmd, p)
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	t.Cleanup(func() { box.Close() })
	err = cmd.Start()
	box.Started()
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	werr := cmd.Wait()
	return result{stdout: out.String(), stderr: errb.String(), err: werr, report: box.Report(), box: box}
}

// startLocked starts cmd from a thread that lives as long as the process,
// so that its parent-death signal fires only when the process dies.
func startLocked(cmd *exec.Cmd) (*spawn.Process, error) {
	return spawn.Start(cmd, &spawn.Options{DeathSignal: syscall.SIGKILL})
}
