package sbinit

import (
	"sync/atomic"
	"time"
)

// Limits are the resource limits the init sets on the command (the
// per-process part of the sandbox's Limits; the run's totals are lcp's).
// A negative value means no limit of lcp's own.
type Limits struct {
	Memory    int64
	Processes int
	FileSize  int64
	CPUTime   time.Duration
	OpenFiles int
	// TmpSize is the size of the init's throwaway layers.
	TmpSize int64
}

// InitTasks is what the pids budget adds for the sandbox's init: its own
// threads, which count as tasks of the run's control group.
const InitTasks = 16

// entered records that the binary has opted in to being the sandbox's
// init: it imports the sandbox/boot package, or has called sandbox.Main.
var entered atomic.Bool

// Opted marks the binary as opted in; Enter has run (and returned: this
// process is not an init).
func Opted() { entered.Store(true) }

// OptedIn reports whether the binary has opted in.
func OptedIn() bool { return entered.Load() }
