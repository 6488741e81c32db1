package cli

import (
	"runtime/debug"
	"testing"
)

func TestOneShotGC(t *testing.T) {
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	getenv := func(string) string { return "" }
	r1 := oneShotGC(getenv)
	r2 := oneShotGC(getenv)
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GC percent during a command = %d, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != oneShotHeap {
		t.Errorf("memory limit during a command = %d, want %d", l, oneShotHeap)
	}
	r1()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GC percent after the first of two commands = %d, want -1", p)
	}
	r2()
	if p := debug.SetGCPercent(before); p != before {
		t.Errorf("GC percent after both = %d, want %d", p, before)
	}
	r := oneShotGC(func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	if p := debug.SetGCPercent(before); p != before {
		t.Errorf("GOGC set: GC percent = %d, want it left at %d", p, before)
	}
	r()
}
