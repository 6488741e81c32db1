package binding

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lcptools/lcp/discover"
	"github.com/lcptools/lcp/pysrc"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
)

// ErrLibraryNotFound is wrapped by MountToolLibrary when no configured
// folder and no built-in library has a library of that name.
var ErrLibraryNotFound = errors.New("tool library not found")

// searchFolders returns the folders libraries are looked up in: the
// configured folders, then the built-in default library's, then the
// optional built-in libraries'.
func (b *Binding) searchFolders() []string {
	folders := append([]string(nil), b.opts.Folders...)
	return append(folders, b.builtinFolders()...)
}

// builtinFolders returns the folders of the built-in libraries: the
// default library's, then the optional ones'.
func (b *Binding) builtinFolders() []string {
	var folders []string
	for _, f := range []func() ([]string, error){b.opts.Default, b.opts.Optional} {
		if f != nil {
			if dirs, err := f(); err == nil {
				folders = append(folders, dirs...)
			}
		}
	}
	return folders
}

// libraryFiles finds the library named name: a directory name/ (its files
// in load order) or a file name.py, in the first folder that has one.
func (b *Binding) libraryFiles(name string) ([]string, bool) {
	return libraryFilesIn(b.searchFolders(), name)
}

func libraryFilesIn(folders []string, name string) ([]string, bool) {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return nil, false
	}
	name = strings.TrimSuffix(name, ".py")
	for _, dir := range folders {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			if files := discover.LibraryFiles(p); len(files) > 0 {
				return files, true
			}
		}
		if st, err := os.Stat(p + ".py"); err == nil && st.Mode().IsRegular() {
			return []string{p + ".py"}, true
		}
	}
	return nil, false
}

// HasLibraryInFolders reports whether a configured tools folder (not the
// built-in default library) has a library named name: such a library
// comes before a built-in one of the same name.
func (b *Binding) HasLibraryInFolders(name string) bool {
	_, ok := libraryFilesIn(b.opts.Folders, name)
	return ok
}

// DefaultLibraries lists the names of the libraries of the built-in
// default Python library, in order.
func (b *Binding) DefaultLibraries() []string {
	if b.opts.Default == nil {
		return nil
	}
	dirs, err := b.opts.Default()
	if err != nil {
		return nil
	}
	var names []string
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if strings.HasPrefix(n, ".") || n == "__pycache__" || n == "__init__.py" {
				continue
			}
			if e.IsDir() || strings.HasSuffix(n, ".py") {
				names = append(names, strings.TrimSuffix(n, ".py"))
			}
		}
	}
	return names
}

// MountToolLibrary registers the tools of the library named name (a
// directory name/ or a file name.py), looked up in every configured folder
// and then in the built-in default library. Tools already registered are
// left alone; a clash with a tool of another file is a diagnostic. It is
// idempotent and reports whether the library is fully mounted afterwards.
// A mounted library is read again by Reload.
func (b *Binding) MountToolLibrary(name string) (bool, error) {
	files, ok := b.libraryFiles(name)
	if !ok {
		return false, fmt.Errorf("%w: %q", ErrLibraryNotFound, name)
	}
	name = strings.TrimSuffix(name, ".py")
	b.reloadMu.Lock()
	defer b.reloadMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false, &tool.ClosedError{What: "LCP binding"}
	}
	t := &table{tools: b.tools, order: b.order, files: b.files, diags: b.diags}
	res := b.mountInto(t, name, files)
	b.order, b.files, b.diags = t.order, t.files, t.diags
	known := false
	for _, m := range b.mounts {
		known = known || m == name
	}
	if !known {
		b.mounts = append(b.mounts, name)
	}
	return b.mountedLocked(res), nil
}

// mountInto reads a library's files into t: tools already in t are left
// alone, and a clash with a tool of another file is a diagnostic.
func (b *Binding) mountInto(t *table, name string, files []string) *discover.Result {
	res := discover.ReadFiles(name, files, &discover.Options{PreciseTypes: b.precise, Cache: &b.cache})
	t.diags.addResult(res)
	for _, dt := range res.Tools {
		if old, ok := t.tools[dt.Name]; ok {
			if old.file == nil || old.file.Path != dt.File.Path {
				t.diags.add(tool.Diagnostic{Severity: "warning", Code: "duplicate-tool", Tool: dt.Name, File: dt.File.Path, Line: dt.Line,
					Message: fmt.Sprintf("mounting %s: tool %s is already registered from %s; it is kept", name, dt.Name, sourceOfEntry(old))})
			}
			continue
		}
		b.addTo(t, b.newEntry(dt))
	}
	for _, f := range res.Files {
		dup := false
		for _, g := range t.files {
			dup = dup || g.Path == f.Path
		}
		if !dup {
			t.files = append(t.files, f)
		}
	}
	return res
}

func sourceOfEntry(e *entry) string {
	if e.file != nil {
		return e.file.Path
	}
	return "elsewhere"
}

// MountToolLibraryIfAbsent mounts the library unless it is already fully
// mounted; it reports whether it is mounted afterwards.
func (b *Binding) MountToolLibraryIfAbsent(name string) (bool, error) {
	if b.IsLibraryMounted(name) {
		return true, nil
	}
	return b.MountToolLibrary(name)
}

// IsLibraryMounted reports whether every tool of the library named name
// is registered.
func (b *Binding) IsLibraryMounted(name string) bool {
	files, ok := b.libraryFiles(name)
	if !ok {
		return false
	}
	res := discover.ReadFiles(name, files, &discover.Options{PreciseTypes: b.precise, Cache: &b.cache})
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.mountedLocked(res)
}

func (b *Binding) mountedLocked(res *discover.Result) bool {
	if len(res.Tools) == 0 {
		return false
	}
	for _, t := range res.Tools {
		if _, ok := b.tools[t.Name]; !ok {
			return false
		}
	}
	return true
}

// FindLibraryForTool returns the name of the library that defines the
// tool: a library directory named like the tool, with or without its
// tool_ prefix, else the first library whose files define it; "" when
// none does.
func (b *Binding) FindLibraryForTool(name string) string {
	base := strings.TrimPrefix(name, "tool_")
	for _, cand := range []string{name, base} {
		if files, ok := b.libraryFiles(cand); ok && defines(files, name) {
			return cand
		}
	}
	for _, dir := range b.searchFolders() {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if strings.HasPrefix(n, ".") || n == "__pycache__" || n == "__init__.py" {
				continue
			}
			lib := strings.TrimSuffix(n, ".py")
			if files, ok := b.libraryFiles(lib); ok && defines(files, name) {
				return lib
			}
		}
	}
	return ""
}

// defines reports whether the files define a tool of that name. A cheap
// text search comes first so that only candidate files are parsed.
func defines(files []string, name string) bool {
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(src), name) {
			continue
		}
		pf, err := pysrc.ReadFile(f, src)
		if err != nil {
			continue
		}
		for _, t := range pf.Tools {
			if t.Name == name {
				return true
			}
		}
	}
	return false
}

// IsToolAvailable reports whether the tool is registered or can be
// mounted.
func (b *Binding) IsToolAvailable(name string) bool {
	b.mu.RLock()
	_, ok := b.tools[name]
	b.mu.RUnlock()
	return ok || b.FindLibraryForTool(name) != ""
}

// LoadToolByName returns the tool's info, mounting its library first if
// the tool is not registered yet.
func (b *Binding) LoadToolByName(name string) (tool.Info, error) {
	b.mu.RLock()
	e, ok := b.tools[name]
	b.mu.RUnlock()
	if ok {
		return e.info, nil
	}
	lib := b.FindLibraryForTool(name)
	if lib == "" {
		return tool.Info{}, &tool.UnknownToolError{Name: name}
	}
	if _, err := b.MountToolLibrary(lib); err != nil {
		return tool.Info{}, err
	}
	b.mu.RLock()
	e, ok = b.tools[name]
	b.mu.RUnlock()
	if !ok {
		return tool.Info{}, &tool.UnknownToolError{Name: name}
	}
	return e.info, nil
}

// CodeError reports code that RegisterToolFromCode rejected.
type CodeError struct {
	// Prefix names the registration.
	Prefix string
	// Line is the line of a syntax error, 0 otherwise.
	Line int
	// Message says what is wrong; Traceback is the Python traceback of an
	// exception raised while executing the code.
	Message   string
	Traceback string
}

func (e *CodeError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("register %s: line %d: %s", e.Prefix, e.Line, e.Message)
	}
	return fmt.Sprintf("register %s: %s", e.Prefix, e.Message)
}

// RegisterToolFromCode registers the tool_* functions of a Python source
// string: the code is parsed with the reader (a syntax error rejects it
// with its line), executed as an ephemeral module in a worker (an
// exception rejects it with its traceback), and every module-level tool it
// defines is registered, replacing tools of the same name. The code is
// executed again in a fresh worker whenever one is needed, so the tools
// survive worker restarts. It returns the registered names.
func (b *Binding) RegisterToolFromCode(ctx context.Context, prefix, code string) ([]string, error) {
	if prefix == "" || strings.ContainsAny(prefix, `/\`+"\x00") {
		return nil, &CodeError{Prefix: prefix, Message: "the prefix must be a non-empty name without slashes"}
	}
	sum := sha256.Sum256([]byte(code))
	path := filepath.Join(string(filepath.Separator), "lcp-dynamic", fmt.Sprintf("%s-%x.py", prefix, sum[:6]))
	pf, err := pysrc.ReadFile(path, []byte(code))
	if err != nil {
		return nil, &CodeError{Prefix: prefix, Message: err.Error()}
	}
	if len(pf.SyntaxErrors) > 0 {
		e := pf.SyntaxErrors[0]
		return nil, &CodeError{Prefix: prefix, Line: e.Pos.Line, Message: "syntax error: " + e.Msg}
	}
	lib := worker.Library{Path: path, Stem: prefix, Code: code}
	cfg, err := b.config(prefix)
	if err != nil {
		return nil, err
	}
	reply, err := b.pool.Load(ctx, &worker.Request{
		CallID: tool.NewID(), Workspace: b.ws, Library: lib, Config: cfg,
		Context: []byte(`{}`), Args: []byte(`{}`), Handlers: b.handlers(),
	}, &callHost{b: b, ctx: ctx, stem: prefix})
	if err != nil {
		return nil, fmt.Errorf("register %s: %w", prefix, err)
	}
	if reply.LoadError != nil {
		return nil, &CodeError{Prefix: prefix, Message: reply.LoadError.Type + ": " + reply.LoadError.Message, Traceback: reply.LoadError.Traceback}
	}
	defined := map[string]bool{}
	for _, f := range reply.Functions {
		defined[f] = true
	}
	file := &discover.File{Path: path, Stem: prefix, Group: prefix, Dir: b.ws, Source: pf}
	var names []string
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range pf.Tools {
		if !t.TopLevel || !defined[t.Name] {
			continue
		}
		e := &entry{src: t, file: file, code: code}
		if b.dynamic == nil {
			b.dynamic = map[string]worker.Library{}
		}
		b.dynamic[path] = lib
		e.info = (&discover.Tool{Tool: t, File: file}).Info()
		e.info.Source = "dynamic:" + prefix
		b.add(e)
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return nil, &CodeError{Prefix: prefix, Message: "the code defines no module-level tool_* function"}
	}
	b.releaseUnusedLocked()
	return names, nil
}

// releaseUnusedLocked stops the workers of dynamic libraries no tool
// refers to any more. The caller holds b.mu.
func (b *Binding) releaseUnusedLocked() {
	used := map[string]bool{}
	for _, e := range b.tools {
		if e.code != "" {
			used[e.file.Path] = true
		}
	}
	for path, lib := range b.dynamic {
		if !used[path] {
			delete(b.dynamic, path)
			go b.pool.Release(lib)
		}
	}
}

// UnregisterToolsByPrefix removes the tools named prefix or starting with
// tool_<prefix>, and returns how many were removed.
func (b *Binding) UnregisterToolsByPrefix(prefix string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.unregistered = append(b.unregistered, prefix)
	n := 0
	kept := b.order[:0]
	for _, name := range b.order {
		if matchesPrefix(name, prefix) {
			delete(b.tools, name)
			n++
			continue
		}
		kept = append(kept, name)
	}
	b.order = kept
	b.releaseUnusedLocked()
	return n
}
