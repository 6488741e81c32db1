package worker

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"
)

// TestOnProcess: the hook sees a worker start, its crash, and the restart
// after it; a worker the pool stops is no crash.
func TestOnProcess(t *testing.T) {
	var mu sync.Mutex
	var events []ProcessEvent
	p, _ := testPool(t, &Options{OnProcess: func(e ProcessEvent) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}})
	lib := writeLib(t, "obs", "import os\n\ndef tool_ok():\n    return 1\n\ndef tool_die():\n    os._exit(3)\n")
	ws := t.TempDir()
	mustCall(t, p, ws, lib, "tool_ok", `{}`)
	if _, err := p.Call(context.Background(), &Request{CallID: "die", Workspace: ws, Library: lib, Function: "tool_die", Args: json.RawMessage(`{}`)}, nil); err == nil {
		t.Fatal("the crash was not an error")
	}
	mustCall(t, p, ws, lib, "tool_ok", `{}`)
	p.Release(lib)
	want := []ProcessEvent{{Started: true}, {Crashed: true}, {Started: true, Restart: true}, {}}
	deadline := time.Now().Add(hangAfter)
	for {
		mu.Lock()
		n := len(events)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != len(want) {
		t.Fatalf("events %+v", events)
	}
	for i, w := range want {
		e := events[i]
		if e.Started != w.Started || e.Restart != w.Restart || e.Crashed != w.Crashed || e.Library != lib.Path || e.PID == 0 {
			t.Errorf("event %d = %+v, want %+v", i, e, w)
		}
		if e.Crashed && e.Reason == "" {
			t.Errorf("a crash without a reason: %+v", e)
		}
	}
}
