//go:build linux && !race

package worker

import (
	"syscall"
	"unsafe"
)

// readNonblock reads a non-blocking descriptor with a raw system call,
// without the scheduler's bookkeeping for a call that may block, which a
// leader polling the reply pipe every few microseconds would pay on every
// poll. (Race builds use syscall.Read, whose annotations tell the race
// detector that what a goroutine wrote before it sent a call frame
// happened before the goroutines that read the worker's answers.)
func readNonblock(fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(p), uintptr(len(b)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}
