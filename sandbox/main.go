package sandbox

import (
	"errors"
	"sync/atomic"
)

// The sandbox's init is the binary that links this package, started again
// through /proc/self/exe with initEnv set: lcp, a test binary, a Go host
// embedding lcp. Nothing happens behind the binary's back at package init;
// the binary opts in by calling Main, or by importing the sandbox/boot
// package from main (the fast form: the init then runs before the
// binary's heavy packages initialize).
var mainCalled atomic.Bool

// Main turns this process into the sandbox's init when the sandbox started
// it as one, and returns at once otherwise. A binary that runs sandboxed
// commands (any engine whose policy is not full_access) must call it as
// the first statement of main, and a test binary as the first statement
// of TestMain: the sandbox re-executes the binary as the init of every
// sandboxed command, and until Main has been called Wrap refuses to run
// anything, with ErrNoMain. A binary that imports sandbox/boot from main
// need not call it (it may: Main then returns at once).
func Main() {
	enterInit()
	mainCalled.Store(true)
}

// ErrNoMain is the error Wrap returns when the binary has not called Main:
// its re-executed copy would run the binary's own main instead of the
// sandbox's init.
var ErrNoMain = errors.New("sandbox: this binary did not call sandbox.Main at the start of main (or TestMain), nor import sandbox/boot, so it cannot be the sandbox's init")
