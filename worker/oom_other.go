//go:build !linux

package worker

// oomMark is empty where the kernel's out-of-memory counters are unknown.
type oomMark struct{}

func markOOM(int) oomMark { return oomMark{} }

// oomSince never reports an out-of-memory kill here.
func (oomMark) oomSince() (string, bool) { return "", false }
