package worker

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

const pidLib = `
import os, time

def tool_pid() -> int:
    return os.getpid()

def tool_wait(path: str) -> str:
    with open(path, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(3600)
    return "woke"
`

// TestKilledFromOutside kills a real worker with SIGKILL in the middle of a
// call: the call's error says it was killed from outside lcp, not by the
// out-of-memory killer (the kernel counted none).
func TestKilledFromOutside(t *testing.T) {
	p, _ := testPool(t, nil)
	ws := t.TempDir()
	lib := writeLib(t, "pids", pidLib)
	before := markOOM(os.Getpid())
	mark := filepath.Join(t.TempDir(), "started")
	fifo := mark + ".fifo"
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), &Request{CallID: "w", Workspace: ws, Library: lib, Function: "tool_wait",
			Args: json.RawMessage(`{"path":` + strconv.Quote(fifo) + `}`)}, nil)
		errc <- err
	}()
	b, err := os.ReadFile(fifo) // returns once the tool has written its pid and closed
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatalf("pid %q: %v", b, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = <-errc
	var ce *CrashError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a CrashError", err)
	}
	if _, oom := before.oomSince(); oom {
		t.Skip("the kernel counted an out-of-memory kill during the test")
	}
	if ce.Cause != CauseSignal || !strings.Contains(ce.Reason, "from outside lcp") || strings.Contains(err.Error(), "out-of-memory killer (") {
		t.Errorf("cause %d, error %v", ce.Cause, err)
	}
	if r := mustCall(t, p, ws, lib, "tool_pid", "{}"); !r.StateReset || string(r.Value) == strconv.Itoa(pid) {
		t.Errorf("after the kill: pid %s, state reset %v; want a fresh worker", r.Value, r.StateReset)
	}
}

// TestOOMClassification: a SIGKILL the engine did not send is the OOM
// killer's only when the worker's cgroup counted an OOM kill.
func TestOOMClassification(t *testing.T) {
	events := filepath.Join(t.TempDir(), "memory.events")
	if err := os.WriteFile(events, []byte("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mark   oomMark
		limit  int64
		cause  CrashCause
		reason string
	}{
		{"cgroup counted one", oomMark{events: events}, 0, CauseOOM, "out-of-memory killer (the kernel counted an OOM kill in its cgroup"},
		{"with a limit", oomMark{events: events}, 1 << 30, CauseMemoryLimit, "memory limit is 1073741824 bytes"},
		{"counted before", oomMark{events: events, group: 1}, 0, CauseSignal, "from outside lcp"},
		{"nothing known", oomMark{}, 0, CauseSignal, "from outside lcp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := &proc{pool: NewPool(&Options{MemoryLimit: tc.limit}), lib: Library{Path: "/l.py"}, workspace: "/ws", oom: tc.mark}
			c := pr.crashError(workerStatus{Signal: 9}, true)
			if c.Cause != tc.cause || !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("cause %d reason %q, want %d and %q", c.Cause, c.Reason, tc.cause, tc.reason)
			}
		})
	}
}
