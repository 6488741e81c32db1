//go:build linux

package worker

import (
	"os/exec"
	"syscall"

	"github.com/lcptools/lcp/internal/spawn"
)

// startCmd starts cmd from the locked spawner thread (package spawn), so
// that the parent-death signal fires only when the engine exits.
func startCmd(cmd *exec.Cmd) error { return spawn.Start(cmd) }

// sysProcAttr puts the guardian in its own process group and sends it
// SIGTERM when the engine dies; the guardian then kills the worker and
// everything below it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
