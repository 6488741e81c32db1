//go:build !linux

package sbinit

// Enter does nothing: there is no sandbox init on this system.
func Enter() {}

// LandlockABI returns 0: Landlock is Linux's.
func LandlockABI() int { return 0 }
