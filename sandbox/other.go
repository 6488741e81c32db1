//go:build !linux

package sandbox

import (
	"errors"
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

// Recovery says what Recover did.
type Recovery struct {
	// Completed describes each interrupted apply that was completed.
	Completed []string
	// Removed lists the stale staging folders and layers removed.
	Removed []string
	// Errors are what could not be recovered (also returned joined).
	Errors []error
}

// Empty reports whether there was nothing to recover.
func (r *Recovery) Empty() bool {
	return r == nil || len(r.Completed)+len(r.Removed)+len(r.Errors) == 0
}

// Recover has nothing to do on this system: no run is copy-on-write.
func Recover(string) (*Recovery, error) { return &Recovery{}, nil }

// budget is the budget watch of a run: there is none on this system.
type budget struct{}

func (b *Box) receivedLayer() (string, error) { return "", nil }

// BeginUnit does nothing: there is no sandbox on this system.
func (b *Box) BeginUnit() {}

// EndUnit returns nil: there is no sandbox on this system.
func (b *Box) EndUnit() error { return nil }

// Accounting returns "rlimits": there is no sandbox on this system.
func Accounting() string { return "rlimits" }

// UseLeafGroup does nothing and says why: control groups are Linux's.
func UseLeafGroup() error {
	return errors.New("cgroup v2 leaf group: control groups need Linux (this is " + runtime.GOOS + ")")
}

// LeafGroupStatus returns "": UseLeafGroup does nothing on this system.
func LeafGroupStatus() string { return "" }
