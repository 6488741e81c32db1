package cli

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// hugeHeap is the part of the heap a one-shot command asks to have backed
// by transparent huge pages (see growHugeHeap).
const hugeHeap = 64 << 20

// growHugeHeap maps hugeHeap bytes of heap at once, asks the kernel to
// back them with transparent huge pages, and hands them back to the Go
// heap free, for the allocations of the command that follows.
//
// Why: with the collector off (oneShotGC) every byte a command allocates
// is memory the process touches for the first time, one page fault per
// 4 KiB page; listing Python's standard library took about 5,300 of them
// above the start-up, and on a virtual machine a fault costs several
// microseconds: a third of the command's CPU. The Go runtime does not ask
// for huge pages itself, and the kernel's default (transparent_hugepage
// "madvise") gives them only to memory that asks. A 2 MiB page is one
// fault where 512 small pages were 512.
//
// How: one large allocation is a fresh span the runtime maps and does not
// clear (new memory is zero); madvise(MADV_HUGEPAGE) marks it; one
// collection, cheap this early (the live heap is the start-up's), frees
// the span to the page heap, which gives its pages to the next
// allocations, lowest addresses first. Pages never used are never
// faulted in: the resident memory grows by what the command uses, in 2
// MiB steps. With the collector off the background scavenger does not
// return the free pages to the kernel; the memory limit still counts
// them. Where the kernel has no transparent huge pages ("never", or not
// built in) the advice does nothing and the cost is the one collection.
func growHugeHeap() {
	b := make([]byte, hugeHeap)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only: without it the pages are small
	b = nil
	runtime.GC()
}
