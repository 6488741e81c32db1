//go:build !linux

package worker

import "runtime"

// osYield gives the processor to another goroutine, if there is one.
func osYield() { runtime.Gosched() }
