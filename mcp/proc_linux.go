package mcp

import (
	"os"
	"syscall"
)

// processAttrs puts a stdio server in its own process group and has the
// kernel end it if lcp dies.
func processAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// signalGroup sends sig to the process group of proc (a negative pid
// addresses the group), or to proc alone when that fails.
func signalGroup(proc *os.Process, sig syscall.Signal) {
	if err := syscall.Kill(-proc.Pid, sig); err != nil {
		_ = proc.Signal(sig)
	}
}
