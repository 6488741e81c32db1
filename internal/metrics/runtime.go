package metrics

import (
	"runtime"
	"runtime/debug"
	"time"
)

// registerRuntime adds the Go runtime's metrics under the names
// Prometheus' Go collector gives them (a subset: goroutines, threads,
// the GC's pauses, the heap, the scheduler), so dashboards made for Go
// services work unchanged.
func (r *registry) registerRuntime() {
	gauge := func(name, help string, v func() float64) {
		f := newFamily(name, help, gaugeKind)
		f.collect = func(emit func(sample)) { emit(sample{value: v()}) }
		r.register(f)
	}
	gauge("go_goroutines", "Number of goroutines that currently exist.", func() float64 { return float64(runtime.NumGoroutine()) })
	gauge("go_threads", "Number of OS threads created.", func() float64 {
		n, _ := runtime.ThreadCreateProfile(nil)
		return float64(n)
	})
	gauge("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously.",
		func() float64 { return float64(runtime.GOMAXPROCS(0)) })
	gauge("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64.",
		func() float64 { return float64(debug.SetMemoryLimit(-1)) })
	info := newFamily("go_info", "Information about the Go environment.", gaugeKind)
	info.collect = func(emit func(sample)) {
		emit(sample{labels: [][2]string{{"version", runtime.Version()}}, value: 1})
	}
	r.register(info)

	gc := newFamily("go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", summaryKind)
	gc.collect = func(emit func(sample)) {
		st := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
		debug.ReadGCStats(&st)
		s := sample{count: uint64(st.NumGC), sum: st.PauseTotal.Seconds()}
		for i, q := range []float64{0, 0.25, 0.5, 0.75, 1} {
			s.quantiles = append(s.quantiles, [2]float64{q, st.PauseQuantiles[i].Seconds()})
		}
		emit(s)
	}
	r.register(gc)

	// The memory statistics are read once per scrape (ReadMemStats stops
	// the world briefly), before the families are written, and shared by
	// their gauges; scrapes do not overlap (registry.write).
	var ms runtime.MemStats
	r.prepare = append(r.prepare, func() { runtime.ReadMemStats(&ms) })
	mem := func(name, help string, k kind, v func(m *runtime.MemStats) uint64) {
		f := newFamily(name, help, k)
		f.collect = func(emit func(sample)) { emit(sample{value: float64(v(&ms))}) }
		r.register(f)
	}
	mem("go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.Alloc })
	mem("go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already.", counterKind, func(m *runtime.MemStats) uint64 { return m.TotalAlloc })
	mem("go_memstats_sys_bytes", "Number of bytes obtained from system.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.Sys })
	mem("go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed.", counterKind, func(m *runtime.MemStats) uint64 { return m.Mallocs })
	mem("go_memstats_frees_total", "Total number of heap objects frees.", counterKind, func(m *runtime.MemStats) uint64 { return m.Frees })
	mem("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.HeapAlloc })
	mem("go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.HeapSys })
	mem("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.HeapIdle })
	mem("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.HeapInuse })
	mem("go_memstats_heap_released_bytes", "Number of heap bytes released to OS.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.HeapReleased })
	mem("go_memstats_heap_objects", "Number of allocated objects.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.HeapObjects })
	mem("go_memstats_stack_inuse_bytes", "Number of bytes in use by the stack allocator.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.StackInuse })
	mem("go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.StackSys })
	mem("go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.GCSys })
	mem("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.NextGC })
	mem("go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.BuckHashSys })
	mem("go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.MCacheInuse })
	mem("go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.MCacheSys })
	mem("go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.MSpanInuse })
	mem("go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.MSpanSys })
	mem("go_memstats_other_sys_bytes", "Number of bytes used for other system allocations.", gaugeKind, func(m *runtime.MemStats) uint64 { return m.OtherSys })
	lastGC := newFamily("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", gaugeKind)
	lastGC.collect = func(emit func(sample)) { emit(sample{value: float64(ms.LastGC) / 1e9}) }
	r.register(lastGC)
}
