//go:build !unix

package mcp

import "syscall"

// signalByName returns 0: the box, which names signals, is Linux's.
func signalByName(string) syscall.Signal { return 0 }
