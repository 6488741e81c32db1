package binding

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/lcptools/lcp/discover"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
)

// reloadedNote is added, as "_reloaded", to the first result served by a
// fresh worker after the library's files changed on disk.
const reloadedNote = "The tool library was reloaded from disk after its files changed: its module state was reset."

// Change says what a Reload changed.
type Change struct {
	// Added, Removed and Changed are tool names: tools that appeared,
	// disappeared, or whose description, schema or library changed.
	Added, Removed, Changed []string
	// Files are the library files that changed on disk: edited, added or
	// removed (absolute paths, sorted). A file that stopped parsing is not
	// among them: its last good version is kept.
	Files []string
	// Diagnostics is set when the diagnostics changed (a file stopped or
	// started parsing, say).
	Diagnostics bool
}

// Tools reports whether the inventory of tools changed.
func (c *Change) Tools() bool {
	return len(c.Added)+len(c.Removed)+len(c.Changed) > 0
}

// Empty reports whether nothing changed at all.
func (c *Change) Empty() bool { return !c.Tools() && len(c.Files) == 0 && !c.Diagnostics }

// libState tracks one library file's calls in flight and the restart a
// reload asks for: its worker is stopped once idle (or by the next call,
// which then starts afresh), and that next call's result says so.
type libState struct {
	mu       sync.Mutex
	inflight int
	pending  bool   // the worker must be released before the next call
	note     bool   // the next call's result says the library was reloaded
	gen      uint64 // counts the releases, to explain calls cut by one
}

// state returns the libState of a file, making it on first use.
func (b *Binding) state(path string) *libState {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.states == nil {
		b.states = map[string]*libState{}
	}
	st := b.states[path]
	if st == nil {
		st = &libState{}
		b.states[path] = st
	}
	return st
}

// begin is called before a call of lib runs: a restart the reload asked
// for happens now (calls of the old code still running finish in the old
// worker, which stops after them; this call gets a fresh one). It
// returns the release generation the call runs in and, for a tool call
// (takeNote), whether its result gets the reload note.
func (b *Binding) begin(lib worker.Library, takeNote bool) (gen uint64, note bool) {
	st := b.state(lib.Path)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.pending {
		b.pool.Retire(lib)
		st.pending = false
		st.gen++
	}
	st.inflight++
	if takeNote {
		note, st.note = st.note, false
	}
	return st.gen, note
}

// end is called when a call of lib is over; it reports whether the
// library was released (reloaded) while the call ran.
func (b *Binding) end(lib worker.Library, gen uint64) bool {
	st := b.state(lib.Path)
	st.mu.Lock()
	st.inflight--
	idle := st.inflight == 0 && st.pending
	cut := st.gen != gen
	st.mu.Unlock()
	if idle {
		go b.releaseIdle(lib, st)
	}
	return cut
}

// releaseIdle stops the worker of a reloaded library that no call uses.
func (b *Binding) releaseIdle(lib worker.Library, st *libState) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.pending && st.inflight == 0 {
		b.pool.Release(lib)
		st.pending = false
		st.gen++
	}
}

// Reload reads the tool files again — the configured folders and files
// and the mounted libraries — and makes the binding serve what they
// define now. Tools registered from code stay. A file that stops parsing
// (or cannot be read, or is caught half-written) keeps the tools of its
// last good version, with a diagnostic. The workers of the libraries in
// a changed file's directory (which share its sys.path entry, so may
// import it) restart before their next call, whose result carries
// "_reloaded"; the prompt functions of those libraries run again.
func (b *Binding) Reload() (*Change, error) {
	b.reloadMu.Lock()
	defer b.reloadMu.Unlock()
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return nil, &tool.ClosedError{What: "LCP binding"}
	}
	mounts := append([]string(nil), b.mounts...)
	b.mu.RUnlock()

	t := b.read(mounts) // reads the disk without holding b.mu

	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, &tool.ClosedError{What: "LCP binding"}
	}
	for _, name := range b.order { // tools registered from code stay
		if e := b.tools[name]; e.code != "" {
			b.addTo(t, e)
		}
	}
	change := diffTables(&table{tools: b.tools, order: b.order, files: b.files, diags: b.diags}, t)
	oldFiles := b.files
	b.tools, b.order, b.files, b.diags = t.tools, t.order, t.files, t.diags
	b.mu.Unlock()

	if len(change.Files) == 0 {
		return change, nil
	}
	dirs := map[string]bool{}
	for _, p := range change.Files {
		dirs[filepath.Dir(p)] = true
	}
	var affected []string
	for _, f := range oldFiles {
		if dirs[f.Dir] {
			affected = append(affected, f.Path)
		}
	}
	b.prompts.invalidate(affected...)
	for _, p := range affected {
		lib := worker.Library{Path: p, Stem: filepath.Base(p[:len(p)-len(filepath.Ext(p))])}
		st := b.state(p)
		st.mu.Lock()
		st.pending, st.note = true, true
		idle := st.inflight == 0
		st.mu.Unlock()
		if idle {
			go b.releaseIdle(lib, st)
		}
	}
	return change, nil
}

// diffTables compares two registries.
func diffTables(old, cur *table) *Change {
	c := &Change{}
	for _, name := range cur.order {
		o, ok := old.tools[name]
		switch {
		case !ok:
			c.Added = append(c.Added, name)
		case !sameInfo(&o.info, &cur.tools[name].info):
			c.Changed = append(c.Changed, name)
		}
	}
	for _, name := range old.order {
		if _, ok := cur.tools[name]; !ok {
			c.Removed = append(c.Removed, name)
		}
	}
	sums := map[string]discover.Sum{}
	for _, f := range old.files {
		sums[f.Path] = f.Sum
	}
	seen := map[string]bool{}
	for _, f := range cur.files {
		seen[f.Path] = true
		if s, ok := sums[f.Path]; !ok || s != f.Sum {
			c.Files = append(c.Files, f.Path)
		}
	}
	for _, f := range old.files {
		if !seen[f.Path] {
			c.Files = append(c.Files, f.Path)
		}
	}
	sort.Strings(c.Files)
	c.Files = slices.Compact(c.Files)
	c.Diagnostics = !slices.Equal(old.diags.all(), cur.diags.all())
	return c
}

func sameInfo(a, b *tool.Info) bool {
	return a.Description == b.Description && bytes.Equal(a.InputSchema, b.InputSchema) && a.Library == b.Library &&
		a.Source == b.Source && a.ParsedViaRegexFallback == b.ParsedViaRegexFallback
}

// WatchPaths returns what a watcher of the binding's files must watch:
// the configured folders and their library sub-directories, the folders
// of the configured files and of the mounted libraries, and the parent of
// each configured folder (so that a folder deleted and made again is
// seen). The built-in default library is not among them.
func (b *Binding) WatchPaths() []string {
	b.mu.RLock()
	files := append([]*discover.File(nil), b.files...)
	mounts := append([]string(nil), b.mounts...)
	b.mu.RUnlock()
	defaults := b.builtinFolders()
	isDefault := func(p string) bool {
		for _, d := range defaults {
			if rel, err := filepath.Rel(d, p); err == nil && rel != ".." && !startsWithDotDot(rel) {
				return true
			}
		}
		return false
	}
	set := map[string]bool{}
	add := func(p string) {
		if abs, err := filepath.Abs(p); err == nil && !isDefault(abs) {
			set[abs] = true
		}
	}
	for _, dir := range b.opts.Folders {
		add(dir)
		add(filepath.Dir(filepath.Clean(dir)))
		for _, sub := range subdirs(dir) {
			add(sub)
		}
	}
	for _, f := range b.opts.Files {
		add(filepath.Dir(f))
	}
	for _, name := range mounts {
		if files, ok := b.libraryFiles(name); ok && len(files) > 0 {
			add(filepath.Dir(files[0]))
		}
	}
	for _, f := range files {
		add(f.Dir)
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func startsWithDotDot(rel string) bool {
	return len(rel) >= 3 && rel[:3] == ".."+string(filepath.Separator)
}

// subdirs lists the directories directly in dir (a tools folder's
// library folders), following symbolic links.
func subdirs(dir string) []string {
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range names {
		if base := filepath.Base(n); base == "__pycache__" || base[0] == '.' {
			continue
		}
		if isDir(n) {
			out = append(out, n)
		}
	}
	return out
}

func reloadedPayload() json.RawMessage {
	b, _ := json.Marshal(reloadedNote)
	return b
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
