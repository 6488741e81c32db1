package cli

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"
)

// DefaultMemoryLimit is the soft memory limit TuneGC sets.
const DefaultMemoryLimit = 200 << 20

// TuneGC sets the garbage collector of a process that serves MCP to collect
// less often (GOGC=400) unless the GOGC environment variable says
// otherwise. Most of such a server's garbage is the SDK's JSON decoder
// buffers (32 KiB per message), short-lived and many: at Go's default the
// collector costs more CPU than the calls themselves. The price is a few
// megabytes of heap. This is process-wide policy, so the binary applies it
// (lcp mcp does); the library packages never do.
//
// It also sets a soft memory limit of DefaultMemoryLimit unless the
// GOMEMLIMIT environment variable says otherwise: under a burst of large
// requests the collector then works harder instead of letting the heap
// grow to five times what is live. Until ctx ends, it gives the system
// back every few seconds the free heap a burst left behind.
func TuneGC(ctx context.Context, getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(DefaultMemoryLimit)
	}
	go releaseIdleMemory(ctx)
}

// releaseIdleMemory returns free heap above 32 MiB to the system every five
// seconds until ctx ends: without new allocations no collection runs, and
// the runtime would keep it for minutes.
//
// The free heap is read with runtime.ReadMemStats (idle spans not yet
// released), not runtime/metrics: that package's initializer builds its
// table of descriptions in every process, 0.1-0.5 ms of every lcp
// command's start, for a number read every five seconds by lcp mcp alone.
func releaseIdleMemory(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	var m runtime.MemStats
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		runtime.ReadMemStats(&m)
		if m.HeapIdle-m.HeapReleased > 32<<20 {
			debug.FreeOSMemory()
		}
	}
}
