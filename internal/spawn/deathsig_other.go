//go:build unix && !linux

package spawn

import (
	"os/exec"
	"syscall"
)

func setDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}

// start starts cmd: without a parent-death signal, nothing ties the child
// to a thread.
func start(cmd *exec.Cmd) error { return cmd.Start() }

func awaitExit(int) {}
