package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// leadFileOpen reports whether lib's worker has its leaders' duplicate of
// the reply pipe in the network poller.
func leadFileOpen(t *testing.T, p *Pool, lib Library) bool {
	t.Helper()
	pr := onlyProc(t, p, lib)
	pr.kickMu.RLock()
	defer pr.kickMu.RUnlock()
	return pr.leadFile != nil
}

func onlyProc(t *testing.T, p *Pool, lib Library) *proc {
	t.Helper()
	prs := p.liveProcs(func(pr *proc) bool { return pr.lib.Path == lib.Path })
	if len(prs) != 1 {
		t.Fatalf("%d workers for the library, want 1", len(prs))
	}
	return prs[0]
}

// waitLeadFileOpen waits until the leader of a call that cannot end yet
// has parked with the duplicate open.
func waitLeadFileOpen(t *testing.T, p *Pool, lib Library) {
	t.Helper()
	for end := time.Now().Add(hangAfter); !leadFileOpen(t, p, lib); {
		if time.Now().After(end) {
			t.Fatalf("no duplicate in the poller after %v while a call waits", hangAfter)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLeadFileWhileParking: the duplicate is opened by a leader that parks,
// and a leader that parks after it was closed opens it again and is still
// woken by its cancellation. The calls wait for a gate the test opens, so
// that their leaders park whatever the machine's speed.
func TestLeadFileWhileParking(t *testing.T) {
	p, _ := testPool(t, nil)
	lib := writeLib(t, "lead", "import os, time\n\n"+
		"def tool_gate(path: str) -> str:\n"+
		"    while not os.path.exists(path):\n        time.sleep(0.005)\n    return 'ok'\n")
	ws := t.TempDir()
	wantValue(t, mustCall(t, p, ws, lib, "tool_gate", `{"path": "/"}`), `"ok"`) // starts the worker

	gated := func(ctx context.Context, gate string) <-chan error {
		done := make(chan error, 1)
		go func() {
			r, err := p.Call(ctx, &Request{CallID: "gate", Workspace: ws, Library: lib, Function: "tool_gate",
				Args: []byte(`{"path": "` + gate + `"}`)}, nil)
			if err == nil && (r.Exception != nil || string(r.Value) != `"ok"`) {
				err = errors.New("the gated call did not return ok")
			}
			done <- err
		}()
		return done
	}
	open := func(gate string) {
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Closed first, as after leadIdleHits polls that found the reply (the
	// first call may have parked and opened it).
	onlyProc(t, p, lib).closeLeadFile()
	if leadFileOpen(t, p, lib) {
		t.Fatal("closeLeadFile left the duplicate open")
	}
	gate := filepath.Join(ws, "gate")
	done := gated(context.Background(), gate)
	waitLeadFileOpen(t, p, lib) // opened by the parked leader
	open(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	onlyProc(t, p, lib).closeLeadFile()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done = gated(ctx, filepath.Join(ws, "never"))
	waitLeadFileOpen(t, p, lib)
	cancel() // the parked leader is woken by its kick
	if err := <-done; !errors.Is(err, ErrCancelled) {
		t.Fatalf("cancelled call: err = %v, want ErrCancelled", err)
	}
}
