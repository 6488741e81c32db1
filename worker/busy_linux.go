package worker

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// cpuBusy reports whether more threads are runnable than there are CPUs,
// from the kernel's count in /proc/loadavg, read at most every 10 ms. On a
// machine where threads wait for a CPU, a poller only takes the CPU from
// them (and waking a parked thread is fast anyway: no CPU is idle).
func cpuBusy() bool {
	now := time.Now().UnixNano()
	last := busySampled.Load()
	if now-last > int64(10*time.Millisecond) && busySampled.CompareAndSwap(last, now) {
		busyNow.Store(runnableThreads() > runtime.NumCPU())
	}
	return busyNow.Load()
}

var (
	busySampled atomic.Int64
	busyNow     atomic.Bool
)

// runnableThreads returns the fourth field of /proc/loadavg ("3/650": 3
// runnable of 650), or 0 when it cannot be read.
func runnableThreads() int {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	return parseRunnable(b)
}

func parseRunnable(b []byte) int {
	f := bytes.Fields(b)
	if len(f) < 4 {
		return 0
	}
	r, _, ok := bytes.Cut(f[3], []byte("/"))
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(string(r))
	if err != nil {
		return 0
	}
	return n
}
