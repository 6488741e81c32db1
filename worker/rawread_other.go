//go:build unix && (race || !linux)

package worker

import "syscall"

// readNonblock is syscall.Read in race builds and outside Linux (see
// rawread_linux.go).
func readNonblock(fd int, b []byte) (int, error) { return syscall.Read(fd, b) }
