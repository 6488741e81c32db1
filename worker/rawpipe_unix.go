//go:build unix

package worker

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// The reply pipe and the kick pipe are used as raw descriptors, outside
// Go's network poller (see reader.go).

// rawPipe returns a close-on-exec pipe whose ends are blocking.
func rawPipe() (r, w int, err error) {
	var p [2]int
	syscall.ForkLock.RLock()
	err = syscall.Pipe(p[:])
	if err == nil {
		syscall.CloseOnExec(p[0])
		syscall.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	return p[0], p[1], err
}

func setNonblock(fd int) error { return syscall.SetNonblock(fd, true) }

func closeFD(fd int) { _ = syscall.Close(fd) }

// readFD reads without blocking; wouldBlock reports an empty pipe. fd
// must be non-blocking: outside race builds the read is a raw system call
// (see readNonblock).
func readFD(fd int, b []byte) (n int, wouldBlock bool, err error) {
	for {
		n, err = readNonblock(fd, b)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return 0, true, nil
		case n < 0:
			n = 0
		}
		return n, false, err
	}
}

// writeKick writes one byte without blocking (a full pipe is kicked enough).
func writeKick(fd int) { _, _ = syscall.Write(fd, []byte{1}) }

// drainKicks empties the kick pipe.
func drainKicks(fd int) {
	var b [64]byte
	for {
		n, err := syscall.Read(fd, b[:])
		if n <= 0 || err != nil {
			return
		}
	}
}

// pollIn waits up to timeoutMs (-1: no limit) for fd or kick to become
// readable, and reports whether kick did.
func pollIn(fd, kick int, timeoutMs int) (kicked bool) {
	fds := [2]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(kick), Events: unix.POLLIN}}
	if _, err := unix.Poll(fds[:], timeoutMs); err != nil {
		return false
	}
	return fds[1].Revents != 0
}

// dupCloexec duplicates fd, close-on-exec.
func dupCloexec(fd int) (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0) }
