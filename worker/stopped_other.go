//go:build !linux

package worker

// stoppedKnown says whether isStopped can tell: not on this system.
const stoppedKnown = false

func isStopped(int) bool { return false }

// startPids returns the processes of a worker still in its start-up: only
// its guardian is known on this system.
func startPids(gpid int) []int { return []int{gpid} }

// killPids has nothing to kill: startPids knows only the guardian here.
func killPids([]int) {}
