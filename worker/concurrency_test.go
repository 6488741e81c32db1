package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

const echoLib = `
import os, threading, time
NAME = %q

def tool_echo(n: int, pause: float = 0.0):
    if pause:
        time.sleep(pause)
    print("echo", n)
    return {"n": n, "lib": NAME, "ws": os.path.basename(os.getcwd()), "pid": os.getpid()}
`

func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(entries)
}

// TestConcurrentCalls sends 1,000 calls from 50 goroutines to 3 libraries in
// 2 workspaces; every result must reach its caller, and nothing may leak.
func TestConcurrentCalls(t *testing.T) {
	requirePython(t)
	warm, _ := testPool(t, nil) // starts the spawner thread before counting
	wl := writeLib(t, "warm", "def tool_w():\n    return 1\n")
	mustCall(t, warm, t.TempDir(), wl, "tool_w", "{}")
	warm.Close()

	baseG := runtime.NumGoroutine()
	baseFD := openFDs(t)

	outputs := make(map[string]int)
	var outMu sync.Mutex
	p, _ := testPool(t, &Options{OnOutput: func(o Output) {
		if o.CallID != "" {
			outMu.Lock()
			outputs[o.CallID]++
			outMu.Unlock()
		}
	}})
	var libs []Library
	for i := range 3 {
		name := fmt.Sprintf("echo%d", i)
		libs = append(libs, writeLib(t, name, fmt.Sprintf(echoLib, name)))
	}
	root := t.TempDir()
	var wss []string
	for _, name := range []string{"wsA", "wsB"} {
		ws := filepath.Join(root, name)
		if err := os.Mkdir(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		wss = append(wss, ws)
	}

	const goroutines, perG = 50, 20
	var wg sync.WaitGroup
	var pidMu sync.Mutex
	pids := make(map[string]map[float64]bool)
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				n := g*perG + i
				lib, ws := libs[n%3], wss[(n/3)%2]
				pid, err := echoCall(p, lib, ws, n)
				if err != nil {
					t.Error(err)
					continue
				}
				pidMu.Lock()
				key := lib.Stem + ws
				if pids[key] == nil {
					pids[key] = map[float64]bool{}
				}
				pids[key][pid] = true
				pidMu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(pids) != 6 {
		t.Errorf("%d (library, workspace) pairs served, want 6", len(pids))
	}
	for key, set := range pids {
		if len(set) != 1 {
			t.Errorf("%s served by %d processes, want 1", key, len(set))
		}
	}
	outMu.Lock()
	if len(outputs) != goroutines*perG {
		t.Errorf("output attributed to %d calls, want %d", len(outputs), goroutines*perG)
	}
	outMu.Unlock()

	p.Close()
	waitNoLeak(t, baseG, baseFD)
}

// echoCall makes call n of tool_echo (one in 50 pauses) and checks that its
// result is its own; it returns the pid of the worker that ran it.
func echoCall(p *Pool, lib Library, ws string, n int) (float64, error) {
	pause := 0.0
	if n%50 == 0 {
		pause = 0.05
	}
	id := fmt.Sprintf("call-%d", n)
	r, err := p.Call(context.Background(), &Request{CallID: id, Workspace: ws, Library: lib,
		Function: "tool_echo", Args: json.RawMessage(fmt.Sprintf(`{"n":%d,"pause":%g}`, n, pause))}, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", id, err)
	}
	var got struct {
		N   int
		Lib string
		WS  string
		PID float64
	}
	if err := json.Unmarshal(r.Value, &got); err != nil {
		return 0, err
	}
	if got.N != n || got.Lib != lib.Stem || got.WS != filepath.Base(ws) {
		return 0, fmt.Errorf("%s got %s", id, r.Value)
	}
	return got.PID, nil
}

// waitNoLeak waits for the goroutines and file descriptors to come back to
// their counts before the test.
func waitNoLeak(t *testing.T, baseG, baseFD int) {
	t.Helper()
	deadline := time.Now().Add(hangAfter)
	for {
		g, fd := runtime.NumGoroutine(), openFDs(t)
		if g <= baseG && fd <= baseFD {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("leak: %d goroutines (was %d), %d fds (was %d)", g, baseG, fd, baseFD)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const cpuLib = `
import os, time
def tool_spin(ms: int):
    end = time.time() + ms / 1000.0
    while time.time() < end:
        pass
    return os.getpid()
`

// TestProcessesPerLibrary checks that an opted-in library spreads concurrent
// calls over its processes.
func TestProcessesPerLibrary(t *testing.T) {
	requirePython(t)
	t.Parallel()
	p, _ := testPool(t, &Options{Processes: func(l Library) int {
		if l.Stem == "cpu" {
			return 2
		}
		return 1
	}})
	lib := writeLib(t, "cpu", cpuLib)
	ws := t.TempDir()
	seen := make(map[string]bool)
	for range 3 {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range 2 {
			wg.Go(func() {
				r := mustCall(t, p, ws, lib, "tool_spin", `{"ms": 200}`)
				mu.Lock()
				seen[string(r.Value)] = true
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	if len(seen) != 2 {
		t.Errorf("calls ran in %d processes, want 2", len(seen))
	}
}
