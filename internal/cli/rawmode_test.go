//go:build unix

package cli

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// waitRaw waits until the terminal whose parent side is ptmx is in raw
// mode (no line editing, no echo), which a prompt sets before it reads:
// keys typed earlier would be dropped by the prompt as typed ahead. It
// calls the program hung after screenHang.
func waitRaw(t *testing.T, ptmx *os.File) {
	t.Helper()
	// Through SyscallConn, not Fd, which would make the descriptor
	// blocking under the goroutine that copies the screen.
	rc, err := ptmx.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(screenHang)
	for {
		var tio *unix.Termios
		if cerr := rc.Control(func(fd uintptr) { tio, err = unix.IoctlGetTermios(int(fd), ioctlReadTermios) }); cerr != nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("reading the terminal's mode: %v", err)
		}
		if tio.Lflag&(unix.ICANON|unix.ECHO) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal was not put in raw mode within %v", screenHang)
		}
		time.Sleep(time.Millisecond)
	}
}
