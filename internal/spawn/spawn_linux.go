//go:build linux

package spawn

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

type request struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	once     sync.Once
	requests chan request
)

func loop() {
	runtime.LockOSThread() // never unlocked: the thread lives as long as lcp
	for r := range requests {
		r.done <- r.cmd.Start()
	}
}

// Start starts cmd from the locked spawner thread, so that a parent-death
// signal set in cmd.SysProcAttr fires only when lcp exits.
func Start(cmd *exec.Cmd) error {
	once.Do(func() {
		requests = make(chan request)
		go loop()
	})
	r := request{cmd: cmd, done: make(chan error, 1)}
	requests <- r
	return <-r.done
}

// Deathsig asks for sig to be sent to the child when lcp dies.
func Deathsig(attr *syscall.SysProcAttr, sig syscall.Signal) {
	if attr != nil {
		attr.Pdeathsig = sig
	}
}
