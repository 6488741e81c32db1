// Package boot makes the binary that imports it the sandbox's init at the
// earliest point Go allows: a process the sandbox started as the init of
// a command runs the init from this package's initializer, before the
// binary's other packages initialize, and exits.
//
// Import it, for its side effect, from package main only (a library must
// not decide that its host is an init):
//
//	import _ "github.com/lcptools/lcp/sandbox/boot"
//
// It is the fast form of calling sandbox.Main first in main: either opts
// the binary in; with neither, the sandbox refuses to run commands
// (sandbox.ErrNoMain). The import costs a process that is not an init one
// environment look-up.
package boot

import "github.com/lcptools/lcp/sandbox/internal/sbinit"

func init() {
	sbinit.Enter()
	sbinit.Opted()
}
