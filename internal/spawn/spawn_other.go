//go:build !unix

package spawn

import (
	"os"
	"os/exec"
	"syscall"
)

func prepare(*exec.Cmd, syscall.Signal) {}

func start(cmd *exec.Cmd) error { return cmd.Start() }

// SignalGroup does nothing: there are no process groups here.
func SignalGroup(int, syscall.Signal) {}

// signalGroup kills the process: without groups or signals, every signal
// is a kill, and what the child started may outlive it.
func signalGroup(proc *os.Process, _ int, _ syscall.Signal) { _ = proc.Kill() }

func awaitExit(int) {}
