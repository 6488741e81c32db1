package worker

import (
	"context"
	"errors"
	"testing"
	"time"
)

// leadFileOpen reports whether lib's worker has its leaders' duplicate of
// the reply pipe in the network poller.
func leadFileOpen(t *testing.T, p *Pool, lib Library) bool {
	t.Helper()
	prs := p.liveProcs(func(pr *proc) bool { return pr.lib.Path == lib.Path })
	if len(prs) != 1 {
		t.Fatalf("%d workers for the library, want 1", len(prs))
	}
	pr := prs[0]
	pr.kickMu.RLock()
	defer pr.kickMu.RUnlock()
	return pr.leadFile != nil
}

// TestLeadFileWhileParking: the duplicate is opened by a leader that parks,
// and a leader that parks after it was closed opens it again and is still
// woken by its cancellation.
func TestLeadFileWhileParking(t *testing.T) {
	p, _ := testPool(t, nil)
	lib := writeLib(t, "lead", "import time\n\n"+
		"def tool_nap(s: float = 0.0) -> str:\n    time.sleep(s)\n    return 'ok'\n")
	ws := t.TempDir()
	// Longer than any poll: the leader parks.
	wantValue(t, mustCall(t, p, ws, lib, "tool_nap", `{"s": 0.05}`), `"ok"`)
	if !leadFileOpen(t, p, lib) {
		t.Fatal("a leader parked, but the duplicate is not in the poller")
	}
	pr := p.liveProcs(func(pr *proc) bool { return pr.lib.Path == lib.Path })[0]
	pr.closeLeadFile() // as after leadIdleHits polls that found the reply
	if leadFileOpen(t, p, lib) {
		t.Fatal("closeLeadFile left the duplicate open")
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := p.Call(ctx, &Request{CallID: "nap", Workspace: ws, Library: lib, Function: "tool_nap",
		Args: []byte(`{"s": 600}`)}, nil)
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("cancelled call: err = %v, want ErrCancelled", err)
	}
	wantValue(t, mustCall(t, p, ws, lib, "tool_nap", `{"s": 0.05}`), `"ok"`)
	if !leadFileOpen(t, p, lib) {
		t.Fatal("a leader parked again, but the duplicate was not reopened")
	}
}
