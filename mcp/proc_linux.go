package mcp

import "syscall"

// processAttrs puts a stdio server in its own process group and has the
// kernel end it if lcp dies.
func processAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
