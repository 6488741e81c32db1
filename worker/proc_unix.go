//go:build unix && !linux

package worker

import (
	"os/exec"
	"syscall"
)

// startCmd starts cmd. Without a parent-death signal the worker notices the
// engine's death by the end of its request pipe.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
