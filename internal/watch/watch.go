// Package watch tells when the Python files of some directories change:
// a thin layer over fsnotify that watches a set of directories (not
// recursively), keeps only the events that matter for tool files (a *.py
// file, or a watched directory itself, created, written, removed or
// renamed; a directory created), and calls back once per burst of them,
// after a quiet period: an editor's save is often several events (a
// temporary file, a rename, a write, a chmod) within a few milliseconds.
//
//	w, err := watch.New(func() { reread() }, &watch.Options{Quiet: 100 * time.Millisecond})
//	if err != nil {
//		return err
//	}
//	defer w.Close()
//	w.Set([]string{"./my_tools", "./my_tools/db"})
package watch

import (
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Defaults of Options.
const (
	// DefaultQuiet is how long no event must come before the callback runs.
	DefaultQuiet = 100 * time.Millisecond
	// DefaultMaxDelay bounds the wait of an event when events keep coming.
	DefaultMaxDelay = 500 * time.Millisecond
)

// Options configures a Watcher; nil means the defaults.
type Options struct {
	// Quiet is the quiet period that ends a burst (DefaultQuiet).
	Quiet time.Duration
	// MaxDelay bounds the time from the first event of a burst to the
	// callback (DefaultMaxDelay).
	MaxDelay time.Duration
	// Logger gets the watcher's troubles (a directory that cannot be
	// watched, an overflow of the kernel's queue); nil discards them.
	Logger *slog.Logger
}

// Watcher watches directories and calls back after changes. It is safe
// for concurrent use.
type Watcher struct {
	fs       *fsnotify.Watcher
	onChange func()
	quiet    time.Duration
	maxDelay time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	dirs    map[string]bool
	pending chan struct{}
	done    chan struct{}
	wg      sync.WaitGroup
	closed  bool
}

// New starts a watcher with no directory; onChange is called, from the
// watcher's own goroutine and never twice at once, after each burst.
func New(onChange func(), opts *Options) (*Watcher, error) {
	fs, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &Watcher{fs: fs, onChange: onChange, quiet: DefaultQuiet, maxDelay: DefaultMaxDelay,
		dirs: map[string]bool{}, pending: make(chan struct{}, 1), done: make(chan struct{})}
	if opts != nil {
		if opts.Quiet > 0 {
			w.quiet = opts.Quiet
		}
		if opts.MaxDelay > 0 {
			w.maxDelay = opts.MaxDelay
		}
		w.log = opts.Logger
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.maxDelay < w.quiet {
		w.maxDelay = w.quiet
	}
	w.wg.Add(2)
	go w.read()
	go w.debounce()
	return w, nil
}

// Set makes dirs the watched directories: new ones are added, the others
// removed. A directory that does not exist (yet) is skipped; watch its
// parent to see it appear.
func (w *Watcher) Set(dirs []string) {
	want := map[string]bool{}
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			want[abs] = true
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	for d := range w.dirs {
		if !want[d] {
			_ = w.fs.Remove(d) // gone already when the directory was deleted
			delete(w.dirs, d)
		}
	}
	for d := range want {
		if w.dirs[d] {
			continue
		}
		if err := w.fs.Add(d); err != nil {
			w.log.Debug("watch: cannot watch", "dir", d, "err", err)
			continue
		}
		w.dirs[d] = true
	}
}

// Dirs returns the directories watched now, for tests and diagnostics.
func (w *Watcher) Dirs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.dirs))
	for d := range w.dirs {
		out = append(out, d)
	}
	return out
}

// Close stops the watcher; no callback runs after it returns.
func (w *Watcher) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.done)
	err := w.fs.Close()
	w.wg.Wait()
	return err
}

// read turns the relevant fsnotify events into a pending change.
func (w *Watcher) read() {
	defer w.wg.Done()
	for {
		select {
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			if w.relevant(ev) {
				w.poke()
			}
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			// An overflow lost events: read everything again.
			w.log.Warn("watch: error", "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.poke()
			}
		}
	}
}

func (w *Watcher) poke() {
	select {
	case w.pending <- struct{}{}:
	default:
	}
}

// relevant says whether an event may change the tools: a Python file, a
// watched directory (deleted, say), or a new directory (a new library
// folder, or a tools folder made again). Editors' temporary and backup
// files, __pycache__ and dot files are not.
func (w *Watcher) relevant(ev fsnotify.Event) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	base := filepath.Base(ev.Name)
	if strings.HasPrefix(base, ".") || base == "__pycache__" {
		return false
	}
	if strings.HasSuffix(base, ".py") {
		return true
	}
	w.mu.Lock()
	watched := w.dirs[ev.Name]
	if watched && (ev.Op.Has(fsnotify.Remove) || ev.Op.Has(fsnotify.Rename)) {
		// The kernel dropped the watch with the directory: a Set that
		// names it again must add it anew when it is back.
		_ = w.fs.Remove(ev.Name)
		delete(w.dirs, ev.Name)
	}
	w.mu.Unlock()
	if watched {
		return true
	}
	if ev.Op.Has(fsnotify.Create) || ev.Op.Has(fsnotify.Rename) || ev.Op.Has(fsnotify.Remove) {
		// A directory appears or goes (its content is unknown here).
		return !strings.Contains(base, ".") && !strings.HasSuffix(base, "~")
	}
	return false
}

// debounce calls onChange once per burst of events.
func (w *Watcher) debounce() {
	defer w.wg.Done()
	for {
		select {
		case <-w.done:
			return
		case <-w.pending:
		}
		first := time.Now()
		quiet := time.NewTimer(w.quiet)
	burst:
		for {
			left := w.maxDelay - time.Since(first)
			if left <= 0 {
				break
			}
			select {
			case <-w.done:
				quiet.Stop()
				return
			case <-w.pending:
				quiet.Reset(min(w.quiet, left))
			case <-quiet.C:
				break burst
			}
		}
		quiet.Stop()
		select {
		case <-w.done:
			return
		default:
		}
		w.onChange()
	}
}
