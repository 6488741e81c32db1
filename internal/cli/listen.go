package cli

import (
	"errors"
	"syscall"
)

// listenError words a failure to listen at addr, given with flag, as a
// usage error; a port in use says how to pick a free one.
func listenError(flag, addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return usagef("%s %s: the port is in use by another program; stop it, choose another port, or give %s 127.0.0.1:0 for any free one (%w)", flag, addr, flag, err)
	}
	return usagef("%s %s: %w", flag, addr, err)
}
