//go:build !unix

package lcp_test

import "os"

// alive reports whether a process with this id still exists.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
