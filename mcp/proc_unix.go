//go:build unix && !linux

package mcp

import "syscall"

// processAttrs puts a stdio server in its own process group.
func processAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
