//go:build unix

package main

import (
	"os"
	"syscall"
)

// minorFaults is the number of page faults a finished process took that
// needed no disk read: on a start-up, the pages of the binary and of the
// heap it touched.
func minorFaults(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Minflt)
	}
	return 0
}
