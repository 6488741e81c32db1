//go:build aix || linux || solaris || zos

package cli

import "golang.org/x/sys/unix"

// ioctlReadTermios reads a terminal's mode on Linux and the System V
// descendants.
const ioctlReadTermios = unix.TCGETS
