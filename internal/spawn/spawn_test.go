//go:build linux

package spawn

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

func TestStartSetsTheDeathSignal(t *testing.T) {
	cmd := exec.Command("sh", "-c", "grep -i '^SigBlk\\|^PPid' /proc/self/status; cat /proc/self/stat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	Deathsig(cmd.SysProcAttr, syscall.SIGKILL)
	var out strings.Builder
	cmd.Stdout = &out
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Fatal("Deathsig did not set the signal")
	}
	if !strings.Contains(out.String(), "PPid") {
		t.Fatalf("the child did not run: %q", out.String())
	}
}
