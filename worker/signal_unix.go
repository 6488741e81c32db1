//go:build unix

package worker

import "syscall"

// killGroup sends sig to the process group pgid (ignoring a gone group).
func killGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
}
