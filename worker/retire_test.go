//go:build unix

package worker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

const retireLib = `import os, time


def tool_pid():
    return os.getpid()


def tool_until(path: str):
    while not os.path.exists(path):
        time.sleep(0.01)
    return os.getpid()
`

// TestRetire: after Retire, a call in flight finishes in its worker, the
// next call gets a fresh worker, and the old one stops once its call is
// done.
func TestRetire(t *testing.T) {
	p, _ := testPool(t, nil)
	lib := writeLib(t, "retire", retireLib)
	ws := t.TempDir()
	old, err := strconv.Atoi(string(mustCall(t, p, ws, lib, "tool_pid", "{}").Value))
	if err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(t.TempDir(), "go")
	args, _ := json.Marshal(map[string]string{"path": gate})
	type answer struct {
		r   *Reply
		err error
	}
	done := make(chan answer, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		r, err := p.Call(context.Background(), &Request{CallID: "until", Workspace: ws, Library: lib, Function: "tool_until", Args: args}, nil)
		done <- answer{r, err}
	}()
	<-started
	// The call is in flight once the worker counts it.
	for deadline := time.Now().Add(2 * time.Minute); p.inFlight(lib) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the call did not start")
		}
	}
	p.Retire(lib)
	next, err := strconv.Atoi(string(mustCall(t, p, ws, lib, "tool_pid", "{}").Value))
	if err != nil {
		t.Fatal(err)
	}
	if next == old {
		t.Errorf("the call after Retire ran in the retired worker %d", old)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil {
		t.Fatalf("the call in flight at Retire: %v", a.err)
	}
	wantValue(t, a.r, strconv.Itoa(old))
	for deadline := time.Now().Add(2 * time.Minute); syscall.Kill(old, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the retired worker %d is still running", old)
		}
	}
}

// inFlight counts the calls in flight on lib's workers.
func (p *Pool) inFlight(lib Library) int {
	n := 0
	for _, pr := range p.liveProcs(func(pr *proc) bool { return pr.lib.Path == lib.Path }) {
		pr.mu.Lock()
		n += len(pr.calls)
		pr.mu.Unlock()
	}
	return n
}
