//go:build linux

package worker

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Linux delivers the parent-death signal when the *thread* that forked the
// child exits, not the process. Go may retire OS threads (a goroutine that
// exits while locked to its thread takes the thread with it), so every
// worker is started from one goroutine locked to its thread for the life of
// the process.

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan spawnReq
)

func spawnLoop() {
	runtime.LockOSThread()
	for r := range spawnCh {
		r.done <- r.cmd.Start()
	}
}

// startCmd starts cmd from the locked spawner thread.
func startCmd(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnReq)
		go spawnLoop()
	})
	r := spawnReq{cmd: cmd, done: make(chan error, 1)}
	spawnCh <- r
	return <-r.done
}

// sysProcAttr puts the guardian in its own process group and sends it
// SIGTERM when the engine dies; the guardian then kills the worker and
// everything below it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
