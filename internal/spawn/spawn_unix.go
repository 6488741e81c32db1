//go:build unix

package spawn

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// prepare puts the child in a process group of its own and, on Linux,
// asks for sig when lcp dies.
func prepare(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if runtime.GOOS == "linux" {
		setDeathSignal(cmd.SysProcAttr, sig)
	}
}

// SignalGroup sends sig to the process group pgid; a group that is gone
// is not an error.
func SignalGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
}

func signalGroup(proc *os.Process, pgid int, sig syscall.Signal) {
	if err := syscall.Kill(-pgid, sig); err != nil && err != syscall.ESRCH {
		_ = proc.Signal(sig)
	}
}
