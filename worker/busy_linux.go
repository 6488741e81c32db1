package worker

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// cpuBusy reports whether threads wait for a CPU, from the kernel's count
// of runnable threads in /proc/loadavg, read at most every 10 ms. On a
// machine where threads wait for a CPU, a poller only takes the CPU from
// them (and waking a parked thread is fast anyway: no CPU is idle).
//
// One reading says little: the count is of one instant, and a caller
// polling for a worker's reply is itself one of two threads that run at
// once, so that any third one (a kernel thread, a runtime thread that woke)
// tips a two-CPU machine over. The samples are averaged (see busyStep), and
// the machine counts as busy once about one thread waits on average.
func cpuBusy() bool {
	now := time.Now().UnixNano()
	last := busySampled.Load()
	if now-last > int64(10*time.Millisecond) && busySampled.CompareAndSwap(last, now) {
		busyAvg.Store(busyStep(busyAvg.Load(), runnableThreads(), runtime.NumCPU()))
	}
	return busyAvg.Load() >= busyThreshold
}

// busyStep returns the average of the threads waiting for a CPU (in 256ths)
// after a sample of runnable threads on a machine of cpus: a moving
// average with a weight of 1/4, where a sample over by 20 counts as 20.
func busyStep(avg int64, runnable, cpus int) int64 {
	over := int64(max(runnable-cpus, 0)) << 8
	return avg + (over-avg)/4
}

// busyThreshold is the average (in 256ths of a thread) from which cpuBusy
// reports a busy machine: a thread that waits in every sample reaches it
// in five (50 ms); one that waits in a third of them, seldom.
const busyThreshold = 192

var (
	busySampled atomic.Int64
	busyAvg     atomic.Int64
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
