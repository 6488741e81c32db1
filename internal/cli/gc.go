package cli

import (
	"runtime/debug"
	"sync"
)

// oneShotHeap is the heap a one-shot command grows to before the garbage
// collector runs (see oneShotGC).
const oneShotHeap = 256 << 20

var oneShot struct {
	mu      sync.Mutex
	n       int   // commands running with the setting
	percent int   // the settings before the first of them
	limit   int64 //
}

// oneShotGC turns the garbage collector of a command that reads its
// inventory once, prints and exits (lcp list, lcp check) into a memory
// limit: no collection until the heap reaches 256 MiB, then collections
// that keep it there (Go's soft memory limit). Listing the 168 files of
// Python's standard library allocates about 35 MB, most of it live until
// the end; at Go's default (GOGC=100) the collector ran 5 to 9 times and
// took a quarter of the command's CPU. A huge inventory still collects,
// rather than growing without bound. The first 64 MiB of the heap are
// backed by huge pages where the kernel has them (growHugeHeap). GOGC or GOMEMLIMIT in the
// environment win. The returned function restores the previous settings
// once the last command that changed them ends (commands share the
// process in tests).
func oneShotGC(getenv func(string) string) (restore func()) {
	if getenv == nil || getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	oneShot.mu.Lock()
	defer oneShot.mu.Unlock()
	if oneShot.n == 0 {
		oneShot.percent = debug.SetGCPercent(-1)
		oneShot.limit = debug.SetMemoryLimit(oneShotHeap)
		growHugeHeap()
	}
	oneShot.n++
	return func() {
		oneShot.mu.Lock()
		defer oneShot.mu.Unlock()
		if oneShot.n--; oneShot.n == 0 {
			debug.SetMemoryLimit(oneShot.limit)
			debug.SetGCPercent(oneShot.percent)
		}
	}
}
