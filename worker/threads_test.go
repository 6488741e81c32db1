package worker

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// osThreads returns the process's thread count (Linux).
func osThreads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("Threads:")); ok {
			n, _ := strconv.Atoi(string(bytes.TrimSpace(v)))
			return n
		}
	}
	t.Skip("no thread count")
	return 0
}

// TestIdleWorkersHoldNoThread checks that idle workers are watched through
// the network poller: 16 of them do not pin 16 threads of the engine.
func TestIdleWorkersHoldNoThread(t *testing.T) {
	requirePython(t)
	p, _ := testPool(t, nil)
	ws := t.TempDir()
	for i := range 16 {
		lib := writeLib(t, fmt.Sprintf("idle%d", i), "def tool_x():\n    return 1\n")
		wantValue(t, mustCall(t, p, ws, lib, "tool_x", "{}"), "1")
	}
	time.Sleep(5 * watchDelay) // every watcher has started
	before := osThreads(t)
	time.Sleep(5 * watchDelay)
	if n := osThreads(t); n >= 16 {
		t.Errorf("%d threads with 16 idle workers (%d a moment ago): watchers pin threads", n, before)
	}
}
