//go:build !unix

package term

import (
	"errors"
	"os"
)

// OpenTTY opens the process's controlling terminal; on this platform it
// always fails: pass the console's file to New instead.
func OpenTTY() (*os.File, error) {
	return nil, errors.New("terminal: no controlling terminal on this platform")
}
