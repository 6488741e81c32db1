//go:build unix

package lcp_test

import "syscall"

// alive reports whether a process with this id still exists.
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
