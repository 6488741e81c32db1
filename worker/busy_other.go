//go:build !linux

package worker

// cpuBusy reports false: only Linux tells how many threads are runnable.
func cpuBusy() bool { return false }
