//go:build unix

package mcp

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// signalByName returns the signal named "SIGKILL", ..., 0 if unknown.
func signalByName(name string) syscall.Signal { return unix.SignalNum(name) }
