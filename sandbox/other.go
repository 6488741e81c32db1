//go:build !linux

package sandbox

import (
	"fmt"
	"os"
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

// Supported reports false: lcp's sandbox needs Linux.
func Supported() bool { return false }

// Wrap returns ErrUnsupported: there is no sandbox on this system.
func Wrap(cmd *exec.Cmd, p *Policy) (*Box, error) {
	return nil, fmt.Errorf("%w: %s", ErrUnsupported, Probe().Reason)
}

// LandlockABI returns 0: Landlock is Linux's.
func LandlockABI() int { return 0 }

func statID(path string) (fileID, bool) { return fileID{}, false }

// Changes returns an error: there is no copy-on-write run on this system.
func (b *Box) Changes(l *Ledger) (*ChangeSet, error) {
	return nil, fmt.Errorf("%w: %s", ErrUnsupported, Probe().Reason)
}

// Apply applies nothing: there is no copy-on-write run on this system.
func (cs *ChangeSet) Apply(which func(*Change) bool, l *Ledger) *Outcome {
	out := &Outcome{}
	for _, c := range cs.Changes {
		if which(&c) {
			out.Failed = append(out.Failed, Failure{c, ErrUnsupported})
		}
	}
	return out
}

func (b *Box) serveEgress(*os.File) {}

// enterInit does nothing: there is no sandbox init on this system.
func enterInit() {}
