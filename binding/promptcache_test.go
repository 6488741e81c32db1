package binding

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cachedPromptsLib writes a library whose prompt function counts its runs
// and sleeps, and one whose prompt function fails.
func cachedPromptsLib(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := `import time

_runs = 0


def tool_slow_prompt():
    global _runs
    _runs += 1
    time.sleep(0.2)
    return f"Slow tool, prompt run {_runs}."


def tool_slow():
    """Static text."""
    return "ok"


def tool_broken_prompt():
    raise ValueError("no prompt today")


def tool_broken():
    """Static broken text."""
    return "ok"
`
	if err := os.WriteFile(filepath.Join(dir, "counted.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPromptsRunOncePerLibrary is the regression test of the prompt
// functions that ran again on every listing: they run once, their failure
// is one diagnostic, and RefreshPrompts runs them again.
func TestPromptsRunOncePerLibrary(t *testing.T) {
	needPython(t)
	b, err := New(&Options{Folders: []string{cachedPromptsLib(t)}, DynamicPrompts: true, Workspace: t.TempDir(), PromptTimeout: noPromptDeadline})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	describe := func() map[string]string {
		t.Helper()
		infos, err := b.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, i := range infos {
			out[i.Name] = i.Description
		}
		return out
	}
	for i := 0; i < 3; i++ {
		d := describe()
		if d["tool_slow"] != "Slow tool, prompt run 1." || d["tool_broken"] != "Static broken text." {
			t.Fatalf("listing %d: %v", i+1, d)
		}
		failed := 0
		for _, diag := range b.Diagnostics() {
			if diag.Code == "prompt-failed" {
				failed++
				if !strings.Contains(diag.Message, "no prompt today") {
					t.Errorf("diagnostic %v", diag)
				}
			}
		}
		if failed != 1 {
			t.Fatalf("listing %d: %d prompt-failed diagnostics, want 1: %v", i+1, failed, b.Diagnostics())
		}
	}
	b.RefreshPrompts()
	if d := describe(); d["tool_slow"] != "Slow tool, prompt run 2." {
		t.Fatalf("after a refresh: %v", d)
	}
}

// TestPromptCacheSharedByConcurrentListings: listings that start together
// share one run of each prompt function.
func TestPromptCacheSharedByConcurrentListings(t *testing.T) {
	needPython(t)
	b, err := New(&Options{Folders: []string{cachedPromptsLib(t)}, DynamicPrompts: true, Workspace: t.TempDir(), PromptTimeout: noPromptDeadline})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	errs := make(chan string, 4)
	for i := 0; i < 4; i++ {
		go func() {
			infos, err := b.Tools(context.Background())
			if err != nil {
				errs <- err.Error()
				return
			}
			for _, in := range infos {
				if in.Name == "tool_slow" {
					errs <- in.Description
				}
			}
		}()
	}
	for i := 0; i < 4; i++ {
		if d := <-errs; d != "Slow tool, prompt run 1." {
			t.Errorf("listing: %s", d)
		}
	}
}

// TestPromptCacheForgetsCancelledRuns: a listing whose context ends while
// a prompt function runs caches nothing.
func TestPromptCacheForgetsCancelledRuns(t *testing.T) {
	needPython(t)
	b, err := New(&Options{Folders: []string{cachedPromptsLib(t)}, DynamicPrompts: true, Workspace: t.TempDir(), PromptTimeout: noPromptDeadline})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Warm the worker first, so that the cut falls inside the prompt.
	if _, err := b.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.RefreshPrompts()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { cancel() }()
	_, _ = b.Tools(ctx)
	for _, d := range b.Diagnostics() {
		if d.Code == "prompt-failed" && strings.Contains(d.Message, "cancel") {
			t.Errorf("a cancelled run left a diagnostic: %v", d)
		}
	}
	infos, err := b.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Name == "tool_slow" && !strings.HasPrefix(in.Description, "Slow tool, prompt run") {
			t.Errorf("after a cancelled listing: %q", in.Description)
		}
	}
}

// noPromptDeadline is the prompt functions' budget in tests that are not
// about it: far from any run's real time, so a busy machine (a worker's
// cold start can take seconds there) never turns it into the outcome.
const noPromptDeadline = 10 * time.Minute
