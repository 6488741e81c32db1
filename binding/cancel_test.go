package binding

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
)

const cancelLib = `import time

STATE = {"n": 0}

def tool_inc():
    STATE["n"] += 1
    return STATE["n"]

def tool_sleep(started: str):
    open(started, "w").close()
    time.sleep(3600)

CONFIRM = None

def set_confirm_handler(h):
    global CONFIRM
    CONFIRM = h

def tool_ask():
    return CONFIRM("rm -rf build", "clean")[0]
`

// A Python call runs in its caller's goroutine (tool.Drive) and still
// ends as soon as it is cancelled, even when its tool does not stop: the
// worker is killed after the grace, in the background, and the next call
// reports the reset. Its requests reach Drive's callbacks meanwhile.
func TestCancelledCallReturnsAtOnce(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lib.py"), []byte(cancelLib), 0o644); err != nil {
		t.Fatal(err)
	}
	var crashed = make(chan struct{}, 1)
	b, err := New(&Options{Folders: []string{dir}, Workspace: t.TempDir(),
		// A grace far longer than the test may wait: the call must not wait for it.
		PoolOptions: &worker.Options{CancelGrace: time.Minute, OnProcess: func(e worker.ProcessEvent) {
			if e.Crashed {
				crashed <- struct{}{}
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	if res, err := tool.Call(ctx, b, "tool_inc", nil, nil); err != nil || res.Text() != "1" {
		t.Fatalf("warm-up = %+v, %v", res, err)
	}
	res, err := tool.Call(ctx, b, "tool_ask", nil, &tool.CallOptions{
		Confirm: func(_ context.Context, r *tool.Request) (tool.Decision, string) {
			if r.Source != "rm -rf build" || r.Tool != "tool_ask" {
				t.Errorf("request %+v", r)
			}
			return tool.Always, ""
		}})
	if err != nil || res.Text() != "always" {
		t.Fatalf("asking call = %+v, %v", res, err)
	}

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	started := filepath.Join(t.TempDir(), "started")
	args, _ := json.Marshal(map[string]string{"started": started})
	go func() {
		_, err := tool.Call(cctx, b, "tool_sleep", args, nil)
		done <- err
	}()
	// Cancelled while the tool runs: once it has said so.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("tool_sleep did not start")
		}
	}
	cancel()
	select {
	case err := <-done:
		var ce *tool.CancelledError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want a cancellation", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled call waits for its tool to stop")
	}
	// Meanwhile the worker serves other calls beside the stopping one.
	if res, err := tool.Call(ctx, b, "tool_inc", json.RawMessage(`{}`), nil); err != nil || res.Text() != "2" {
		t.Fatalf("call beside the stopping one = %+v, %v", res, err)
	}
	select {
	case <-crashed:
		t.Fatal("the worker was killed before its grace")
	default:
	}
}
