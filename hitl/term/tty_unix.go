//go:build unix

package term

import (
	"fmt"
	"os"
)

// OpenTTY opens the process's controlling terminal, /dev/tty, for hosts
// whose standard input is not the terminal (a batch piped in) while the
// operator still sits at one. It fails when the process has none. The
// caller closes the file after the Terminal.
func OpenTTY() (*os.File, error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	return f, nil
}
