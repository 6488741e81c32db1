//go:build unix

package proc

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/lcptools/lcp/internal/spawn"
)

// setGroup puts the child in a process group of its own, so that everything
// it starts can be killed at once, and (on Linux) has it killed if lcp dies
// while it runs.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	spawn.Deathsig(cmd.SysProcAttr, syscall.SIGKILL)
}

// killGroup kills the child's whole process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return os.ErrProcessDone
	}
	return err
}

func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal().String()
	}
	return ps.ExitCode(), ""
}
