package watch

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// counter counts the callbacks and signals each.
type counter struct {
	n  atomic.Int64
	ch chan struct{}
}

func newCounter() *counter { return &counter{ch: make(chan struct{}, 100)} }

func (c *counter) fn() {
	c.n.Add(1)
	c.ch <- struct{}{}
}

func (c *counter) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-c.ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no callback after %s", what)
	}
}

// quiet reports whether no callback comes within d.
func (c *counter) quiet(d time.Duration) bool {
	select {
	case <-c.ch:
		return false
	case <-time.After(d):
		return true
	}
}

func TestBurstsAndFilters(t *testing.T) {
	dir := t.TempDir()
	c := newCounter()
	w, err := New(c.fn, &Options{Quiet: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Set([]string{dir})

	// A burst of writes is one callback.
	for i := 0; i < 10; i++ {
		if err := os.WriteFile(filepath.Join(dir, "a.py"), []byte{byte('a' + i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.wait(t, "a burst of writes")
	if !c.quiet(300 * time.Millisecond) {
		t.Error("a burst gave more than one callback")
	}

	// Editors' temporary files, dot files and other files do not count.
	for _, name := range []string{".a.py.swp", "notes.txt", "a.py~"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !c.quiet(300 * time.Millisecond) {
		t.Error("an irrelevant file gave a callback")
	}

	// A new library folder counts, and can then be watched.
	sub := filepath.Join(dir, "lib")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	c.wait(t, "a new folder")
	w.Set([]string{dir, sub})
	if err := os.WriteFile(filepath.Join(sub, "lib.py"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.wait(t, "a file in the new folder")

	// A watched folder deleted: a callback, and no crash.
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	c.wait(t, "a deleted folder")
	w.Set([]string{dir, sub}) // gone: skipped
	if got := len(w.Dirs()); got != 1 {
		t.Errorf("watching %d directories, want 1", got)
	}
}

// TestMaxDelay: events that keep coming do not hold the callback back
// forever.
func TestMaxDelay(t *testing.T) {
	dir := t.TempDir()
	c := newCounter()
	w, err := New(c.fn, &Options{Quiet: 200 * time.Millisecond, MaxDelay: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Set([]string{dir})
	stop := time.After(3 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	i := 0
loop:
	for {
		select {
		case <-stop:
			break loop
		case <-tick.C:
			i++
			_ = os.WriteFile(filepath.Join(dir, "a.py"), []byte{byte(i)}, 0o644)
		}
	}
	if n := c.n.Load(); n < 2 {
		t.Errorf("%d callbacks in 3 s of constant writes, want several", n)
	}
}

func TestCloseStopsCallbacks(t *testing.T) {
	dir := t.TempDir()
	c := newCounter()
	w, err := New(c.fn, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Set([]string{dir})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(dir, "a.py"), []byte("x"), 0o644)
	if !c.quiet(300 * time.Millisecond) {
		t.Error("a callback after Close")
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	w.Set([]string{dir}) // after Close: nothing happens
}
