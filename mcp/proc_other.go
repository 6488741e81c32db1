//go:build !unix

package mcp

import (
	"os"
	"syscall"
)

// processAttrs has nothing to set where there are no process groups.
func processAttrs() *syscall.SysProcAttr { return nil }

// signalGroup ends proc: without process groups or signals (Windows),
// every signal is a kill, and what the server started may outlive it.
func signalGroup(proc *os.Process, _ syscall.Signal) {
	_ = proc.Kill()
}
