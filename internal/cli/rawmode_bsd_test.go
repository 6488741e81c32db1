//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package cli

import "golang.org/x/sys/unix"

// ioctlReadTermios reads a terminal's mode on the BSDs and macOS.
const ioctlReadTermios = unix.TIOCGETA
