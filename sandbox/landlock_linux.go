package sandbox

import "github.com/lcptools/lcp/sandbox/internal/sbinit"

// LandlockABI returns the Landlock ABI version of the kernel, 0 when it
// has none (or it is disabled).
func LandlockABI() int { return sbinit.LandlockABI() }
