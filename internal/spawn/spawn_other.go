//go:build !linux

package spawn

import (
	"os/exec"
	"syscall"
)

// Start starts cmd.
func Start(cmd *exec.Cmd) error { return cmd.Start() }

// Deathsig does nothing: only Linux has parent-death signals.
func Deathsig(attr *syscall.SysProcAttr, sig syscall.Signal) {}
