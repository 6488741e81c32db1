//go:build linux

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// quietInput turns off the echo of the terminal f while a call runs, so
// that keys typed meanwhile do not land in the status line. The returned
// function restores the terminal and drops what was typed: keys pressed
// while the call ran answer nothing (a prompt drops them too). It does
// nothing when f is not a terminal.
func quietInput(f *os.File) (restore func()) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO | unix.ECHONL
	if unix.IoctlSetTermios(fd, unix.TCSETS, &quiet) != nil {
		return func() {}
	}
	return func() {
		_ = unix.IoctlSetTermios(fd, unix.TCSETSF, old) // F: flush the input
	}
}
