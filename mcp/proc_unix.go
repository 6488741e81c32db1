//go:build unix && !linux

package mcp

import (
	"os"
	"syscall"
)

// processAttrs puts a stdio server in its own process group.
func processAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group of proc (a negative pid
// addresses the group), or to proc alone when that fails.
func signalGroup(proc *os.Process, sig syscall.Signal) {
	if err := syscall.Kill(-proc.Pid, sig); err != nil {
		_ = proc.Signal(sig)
	}
}
