//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

const nonblock = syscall.O_NONBLOCK

func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
