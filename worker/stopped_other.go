//go:build !linux

package worker

// stoppedKnown says whether isStopped can tell: not on this system.
const stoppedKnown = false

func isStopped(int) bool { return false }
