// Package discover finds LCP tool files and reads their tools, exactly as
// contract §4 says, without running any Python: folders are scanned in the
// order given, entries in byte order of their names; a sub-directory X/
// contributes X/X.py first and then its other *.py files; loose *.py files
// are loaded; names starting with "." and __pycache__ are skipped, and
// __init__.py never loads. Files given one by one come after the folders.
// The first tool of a name wins; later ones, unreadable files, missing
// paths and syntax errors are diagnostics, never failures.
//
//	res := discover.Run(discover.Options{Folders: []string{"./my_tools"}})
//	for _, t := range res.Tools {
//		fmt.Println(t.Name, t.Library, t.Path)
//	}
//	for _, d := range res.Diagnostics {
//		fmt.Println(d)
//	}
package discover

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lcptools/lcp/pysrc"
	"github.com/lcptools/lcp/pysrc/pyval"
	"github.com/lcptools/lcp/tool"
)

// Options says where to look.
type Options struct {
	// Folders are the tools folders (tools_folders), scanned in order.
	Folders []string
	// Files are single tool files (tool_files), loaded after the folders.
	Files []string
	// Default returns the folders of the built-in default library, used
	// when neither Folders nor Files is given. Nil means no default.
	Default func() ([]string, error)
	// PreciseTypes reads annotations with the reader's precise mapping
	// (pysrc.Options.PreciseTypes) for the libraries it says yes to (by
	// stem); nil means the LCP rule of SPEC §5 everywhere.
	PreciseTypes func(stem string) bool
	// Cache, when set, remembers the files read, so that a later Run with
	// the same cache parses only files whose content changed, and keeps
	// the last good version of a file that no longer reads (see Cache).
	Cache *Cache
}

// File is one tool file that was read.
type File struct {
	// Path is the file's absolute path (its identity: the Python module is
	// keyed by it).
	Path string
	// Stem is the file name without ".py": the key of host_tool_configs.
	Stem string
	// Group is the library the file belongs to for mounting: the folder
	// name X for files of a sub-directory X/, else the stem.
	Group string
	// Dir is the directory put on sys.path for sibling imports.
	Dir string
	// Source is what the reader extracted.
	Source *pysrc.File
	// Sum is the SHA-256 of the content read, which identifies the
	// version of the file.
	Sum [sha256.Size]byte
	// LastGood is set when the file on disk no longer reads (a syntax
	// error, not UTF-8, unreadable) and Source is its last good version,
	// kept by a Cache.
	LastGood bool
	// Meta is the library metadata of the file's library: its own, or, for
	// a sibling module of a folder library X/, that of X/X.py (or of the
	// first module of X/ that declares any).
	Meta pysrc.Library
}

// Library returns the file's library description for tool.Info: the ID
// is the stem (the key of host_tool_configs), the rest is Meta.
func (f *File) Library() tool.Library {
	lib := tool.Library{ID: f.Stem, Name: f.Stem}
	meta := f.Meta
	if meta == (pysrc.Library{}) && f.Source != nil {
		meta = f.Source.Library
	}
	if meta.Name != "" {
		// Lone surrogates (kept by the reader in their WTF-8 form) become
		// one U+FFFD each, as SPEC §16 says, not one per byte.
		lib.Name = pyval.ValidUTF8(meta.Name)
	}
	lib.Description = pyval.ValidUTF8(meta.Description)
	lib.Icon = pyval.ValidUTF8(meta.Icon)
	return lib
}

// Tool is one discovered tool and the file that defines it.
type Tool struct {
	*pysrc.Tool
	File *File
}

// Info returns the tool's description in the core model, with the
// title and hints its library declares in TOOL_ANNOTATIONS.
func (t *Tool) Info() tool.Info {
	info := tool.Info{
		Name:                   t.Name,
		Description:            pyval.ValidUTF8(t.Description),
		InputSchema:            t.InputSchema(),
		Interactions:           tool.AllInteractions,
		Library:                t.File.Library(),
		Source:                 t.File.Path,
		ParsedViaRegexFallback: t.ParsedViaRegexFallback,
	}
	if a := t.Annotations; a != nil {
		info.Title = pyval.ValidUTF8(a.Title)
		info.Annotations = &tool.Annotations{Title: info.Title, ReadOnlyHint: a.ReadOnly, DestructiveHint: a.Destructive,
			IdempotentHint: a.Idempotent, OpenWorldHint: a.OpenWorld}
	}
	return info
}

// Result is what a discovery found.
type Result struct {
	// Tools are the tools in discovery order, first name wins.
	Tools []*Tool
	// Files are the files read, in order.
	Files []*File
	// Diagnostics are the problems found on the way, in order.
	Diagnostics []tool.Diagnostic

	opts Options
}

// Run discovers the tools of opts.
func Run(opts Options) *Result {
	r := &Result{opts: opts}
	folders, files := opts.Folders, opts.Files
	if len(folders) == 0 && len(files) == 0 && opts.Default != nil {
		var err error
		folders, err = opts.Default()
		if err != nil {
			r.diag("error", "default-library", "", fmt.Sprintf("the built-in default library is unavailable: %v", err))
		}
	}
	seen := make(map[string]*Tool)
	for _, dir := range folders {
		for _, p := range r.scanFolder(dir) {
			r.load(p.path, p.group, seen)
		}
	}
	for _, f := range files {
		st, err := os.Stat(f)
		switch {
		case err != nil:
			r.diag("warning", "missing-file", f, fmt.Sprintf("tool file %s: %v", f, pathErr(err)))
			continue
		case st.IsDir():
			r.diag("warning", "not-a-file", f, fmt.Sprintf("tool file %s is a directory (use --tools for folders)", f))
			continue
		}
		r.load(f, "", seen)
	}
	r.shareMeta()
	return r
}

// shareMeta gives every file its library's metadata (File.Meta). The
// files of a folder library X/ are one library: they all carry the
// TOOL_LIBRARY_* values of X/X.py, or, when it declares none, of the
// first module of X/ that does, or else the name X.
func (r *Result) shareMeta() {
	declared := func(f *File) bool {
		l := f.Source.Library
		return l.Name != f.Stem || l.Description != "" || l.Icon != ""
	}
	inFolderLib := func(f *File) bool { return f.Group == filepath.Base(f.Dir) }
	meta := map[string]pysrc.Library{} // by directory
	for _, f := range r.Files {
		if !inFolderLib(f) || !declared(f) {
			continue
		}
		if _, ok := meta[f.Dir]; !ok || f.Stem == f.Group {
			meta[f.Dir] = f.Source.Library
		}
	}
	for _, f := range r.Files {
		f.Meta = f.Source.Library
		if !inFolderLib(f) {
			continue
		}
		if m, ok := meta[f.Dir]; ok {
			f.Meta = m
		} else {
			f.Meta = pysrc.Library{Name: f.Group}
		}
	}
}

type entry struct{ path, group string }

// scanFolder lists the files a tools folder contributes, in order.
func (r *Result) scanFolder(dir string) []entry {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		r.diag("warning", "missing-folder", dir, fmt.Sprintf("tools folder %s: %v", dir, pathErr(err)))
		return nil
	case !st.IsDir():
		r.diag("warning", "not-a-folder", dir, fmt.Sprintf("tools folder %s is not a folder (use --file for single files)", dir))
		return nil
	}
	names, err := readNames(dir)
	if err != nil {
		r.diag("warning", "unreadable-folder", dir, fmt.Sprintf("tools folder %s: %v", dir, err))
		return nil
	}
	var out []entry
	for _, name := range names {
		if skipped(name) {
			continue
		}
		p := filepath.Join(dir, name)
		st, err := os.Stat(p) // follows symbolic links; a broken link is ignored
		if err != nil {
			continue
		}
		switch {
		case st.IsDir():
			out = append(out, r.scanLibrary(p, name)...)
		case st.Mode().IsRegular() && strings.HasSuffix(name, ".py") && name != "__init__.py":
			out = append(out, entry{p, strings.TrimSuffix(name, ".py")})
		}
	}
	return out
}

// scanLibrary lists the files of a directory library X/: X/X.py first
// (when it is a file), then the other *.py files directly in X/.
func (r *Result) scanLibrary(dir, name string) []entry {
	names, err := readNames(dir)
	if err != nil {
		r.diag("warning", "unreadable-folder", dir, fmt.Sprintf("library folder %s: %v", dir, err))
		return nil
	}
	primary := name + ".py"
	var out []entry
	if primary != "__init__.py" {
		if st, err := os.Stat(filepath.Join(dir, primary)); err == nil && st.Mode().IsRegular() {
			out = append(out, entry{filepath.Join(dir, primary), name})
		}
	}
	for _, n := range names {
		if skipped(n) || n == "__init__.py" || n == primary || !strings.HasSuffix(n, ".py") {
			continue
		}
		p := filepath.Join(dir, n)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, entry{p, name})
		}
	}
	return out
}

// LibraryFiles returns the files a library directory X/ contributes, in
// load order: X/X.py (when it is a file), then the other *.py files
// directly in X/ in byte order. Missing or unreadable directories give
// nothing.
func LibraryFiles(dir string) []string {
	r := &Result{}
	var out []string
	for _, e := range r.scanLibrary(dir, filepath.Base(dir)) {
		out = append(out, e.path)
	}
	return out
}

// ReadFiles reads the given files (and only those) as one discovery:
// first tool of a name wins. Group names every file's library. Of opts,
// only PreciseTypes and Cache are used.
func ReadFiles(group string, files []string, opts *Options) *Result {
	r := &Result{}
	if opts != nil {
		r.opts = Options{PreciseTypes: opts.PreciseTypes, Cache: opts.Cache}
	}
	seen := make(map[string]*Tool)
	for _, f := range files {
		r.load(f, group, seen)
	}
	r.shareMeta()
	return r
}

// readNames returns the names in dir in byte order (os.ReadDir sorts by
// name, comparing bytes).
func readNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names, nil
}

func skipped(name string) bool { return strings.HasPrefix(name, ".") || name == "__pycache__" }

// load reads one file and registers its tools.
func (r *Result) load(path, group string, seen map[string]*Tool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	stem := pysrc.Stem(path)
	if group == "" {
		group = stem
	}
	pf, sum, lastGood, ok := r.read(path, abs, stem)
	if !ok {
		return
	}
	f := &File{Path: abs, Stem: stem, Group: group, Dir: filepath.Dir(abs), Source: pf, Sum: sum, LastGood: lastGood}
	r.Files = append(r.Files, f)
	if !lastGood {
		for _, e := range pf.SyntaxErrors {
			r.Diagnostics = append(r.Diagnostics, tool.Diagnostic{
				Severity: "error", Code: "syntax-error", File: path, Line: e.Pos.Line, Column: e.Pos.Column,
				Message: e.Msg + " (tools read by the lossy fallback extractor)",
			})
		}
		for _, d := range pf.Diagnostics {
			if d.Kind == pysrc.DiagSyntaxError {
				continue // reported above with its column
			}
			sev := "warning"
			if d.Kind == pysrc.DiagUndocumented || d.Kind == pysrc.DiagFallbackParsing {
				sev = "info"
			}
			r.Diagnostics = append(r.Diagnostics, tool.Diagnostic{Severity: sev, Code: string(d.Kind), File: path, Line: d.Line, Message: d.Message})
		}
	}
	for _, t := range pf.Tools {
		if first, dup := seen[t.Name]; dup {
			r.Diagnostics = append(r.Diagnostics, tool.Diagnostic{
				Severity: "warning", Code: "duplicate-tool", File: path, Line: t.Line, Tool: t.Name,
				Message: fmt.Sprintf("tool %s is already defined in %s:%d; this one is ignored", t.Name, first.File.Path, first.Line),
			})
			continue
		}
		dt := &Tool{Tool: t, File: f}
		seen[t.Name] = dt
		r.Tools = append(r.Tools, dt)
	}
}

// read reads and parses one file, through the cache when there is one.
// With a cache, a file that no longer reads gives its last good version
// (lastGood) and a diagnostic saying so; ok is false when there is
// nothing to load.
func (r *Result) read(path, abs, stem string) (pf *pysrc.File, sum [sha256.Size]byte, lastGood, ok bool) {
	c := r.opts.Cache
	precise := r.opts.PreciseTypes != nil && r.opts.PreciseTypes(stem)
	var before fs.FileInfo
	if c != nil {
		before, _ = os.Stat(path)
	}
	src, err := os.ReadFile(path)
	if err == nil && c != nil && changing(path, before, len(src)) {
		// Caught in the middle of a write: keep the last good version;
		// the end of the write brings another change, and another read.
		if good := c.good(abs, precise); good != nil {
			r.diag("warning", "file-changing", path, fmt.Sprintf("%s changed while it was read; its last good version's tools are kept until it settles", path))
			return good.pf, good.sum, true, true
		}
	}
	if err != nil {
		if good := c.good(abs, precise); good != nil {
			r.diag("error", "unreadable-file", path, fmt.Sprintf("cannot read %s: %v; its last good version's tools are kept", path, pathErr(err)))
			return good.pf, good.sum, true, true
		}
		r.diag("warning", "unreadable-file", path, fmt.Sprintf("cannot read %s: %v", path, pathErr(err)))
		return nil, sum, false, false
	}
	sum = sha256.Sum256(src)
	if pf := c.lookup(abs, sum, precise); pf != nil {
		return pf, sum, false, true
	}
	pf, err = pysrc.ReadFileOptions(path, src, &pysrc.Options{PreciseTypes: precise})
	if err != nil {
		// err repeats the path: say what is wrong once.
		if good := c.good(abs, precise); good != nil {
			r.diag("error", "not-utf8", path, fmt.Sprintf("skipped %s: it is not valid UTF-8 (tool files must be UTF-8); its last good version's tools are kept", path))
			return good.pf, good.sum, true, true
		}
		r.diag("warning", "not-utf8", path, fmt.Sprintf("skipped %s: it is not valid UTF-8 (tool files must be UTF-8)", path))
		return nil, sum, false, false
	}
	if pf.SyntaxErrors != nil {
		if good := c.good(abs, precise); good != nil {
			e := pf.SyntaxErrors[0]
			r.Diagnostics = append(r.Diagnostics, tool.Diagnostic{
				Severity: "error", Code: "syntax-error", File: path, Line: e.Pos.Line, Column: e.Pos.Column,
				Message: e.Msg + " (the tools of its last good version are kept until it parses again)",
			})
			return good.pf, good.sum, true, true
		}
	}
	c.store(abs, sum, precise, pf)
	return pf, sum, false, true
}

func (r *Result) diag(sev, code, file, msg string) {
	r.Diagnostics = append(r.Diagnostics, tool.Diagnostic{Severity: sev, Code: code, File: file, Message: msg})
}

// changing reports whether a file changed while it was read: its size or
// modification time moved, or what was read is not its size.
func changing(path string, before fs.FileInfo, n int) bool {
	after, err := os.Stat(path)
	if before == nil || err != nil {
		return true
	}
	return before.Size() != after.Size() || !before.ModTime().Equal(after.ModTime()) || after.Size() != int64(n)
}

// pathErr strips the path an *fs.PathError repeats.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
