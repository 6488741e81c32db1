//go:build !linux

package cli

// growHugeHeap does nothing where madvise(MADV_HUGEPAGE) is not Linux's.
func growHugeHeap() {}
