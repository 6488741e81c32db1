//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
)

// Probe reports that this system has no sandbox: lcp's sandbox needs
// Linux namespaces.
func Probe() Status {
	if r := forcedOff(); r != "" {
		return Status{Forced: true, Reason: r}
	}
	return Status{Reason: "lcp's sandbox needs Linux (this is " + runtime.GOOS + ")"}
}

// Wrap returns ErrUnsupported: there is no sandbox on this system.
func Wrap(cmd *exec.Cmd, p *Policy) (*Box, error) {
	return nil, fmt.Errorf("%w: %s", ErrUnsupported, Probe().Reason)
}

// LandlockABI returns 0: Landlock is Linux's.
func LandlockABI() int { return 0 }

func statID(path string) (fileID, bool) { return fileID{}, false }
