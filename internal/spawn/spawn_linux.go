//go:build linux

package spawn

import (
	"os"
	"os/exec"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
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

// start starts cmd from the locked spawner thread, so that the
// parent-death signal fires only when lcp exits.
func start(cmd *exec.Cmd) error {
	once.Do(func() {
		requests = make(chan request)
		go loop()
	})
	r := request{cmd: cmd, done: make(chan error, 1)}
	requests <- r
	return <-r.done
}

// awaitExit returns once the child pid has exited (without reaping it),
// waiting in the network poller on a pidfd; when pidfds are refused it
// returns at once and the caller's wait blocks instead.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		return err != nil || info.Signo != 0
	})
}
