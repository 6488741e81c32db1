//go:build linux || darwin

package discover

import (
	"io/fs"
	"slices"
	"syscall"
)

// readFile reads the file at path as os.ReadFile does, into *buf (grown
// as needed), with the system calls themselves: open, fstat, reads,
// close. An *os.File costs seven more per file on Linux (the netpoller's
// fcntl and epoll_ctl calls that a regular file refuses, and their
// undoing), which for a folder of small files is as much kernel time as
// the reads; the errors are the same *fs.PathError values.
func readFile(path string, buf *[]byte) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	b := (*buf)[:0]
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && st.Size > 0 && st.Size < 1<<40 {
		b = slices.Grow(b, int(st.Size)+1) // +1: the read that sees the end needs room
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			*buf = b
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			*buf = b
			return b, nil
		}
		b = b[:len(b)+n]
	}
}
