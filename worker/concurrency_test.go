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
	errs := make(chan error, goroutines*perG)
	pids := make(map[string]map[float64]bool)
	var pidMu sync.Mutex
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				n := g*perG + i
				lib := libs[n%3]
				ws := wss[(n/3)%2]
				pause := 0.0
				if n%50 == 0 {
					pause = 0.05
				}
				id := fmt.Sprintf("call-%d", n)
				r, err := p.Call(context.Background(), &Request{CallID: id, Workspace: ws, Library: lib,
					Function: "tool_echo", Args: json.RawMessage(fmt.Sprintf(`{"n":%d,"pause":%g}`, n, pause))}, nil)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
					continue
				}
				var got struct {
					N   int
					Lib string
					WS  string
					PID float64
				}
				if err := json.Unmarshal(r.Value, &got); err != nil {
					errs <- err
					continue
				}
				if got.N != n || got.Lib != lib.Stem || got.WS != filepath.Base(ws) {
					errs <- fmt.Errorf("%s got %s", id, r.Value)
				}
				pidMu.Lock()
				key := lib.Stem + ws
				if pids[key] == nil {
					pids[key] = map[float64]bool{}
				}
				pids[key][got.PID] = true
				pidMu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
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
	deadline := time.Now().Add(5 * time.Second)
	for {
		g, fd := runtime.NumGoroutine(), openFDs(t)
		if g <= baseG && fd <= baseFD {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("leak: %d goroutines (was %d), %d fds (was %d)", g, baseG, fd, baseFD)
			break
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
