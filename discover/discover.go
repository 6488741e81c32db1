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
//	for _, d := range res.Diagnostics() {
//		fmt.Println(d)
//	}
package discover

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
	// Sum identifies the version of the file: the content read's Sum.
	Sum Sum
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
// title and hints its library declares in TOOL_ANNOTATIONS. A Python tool
// declares every interaction (any of them may call the handlers); what
// its source shows it asks (pysrc.Asks) is DetectedInteractions, except
// for a tool read by the fallback, which is not analysed.
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
	if !t.ParsedViaRegexFallback {
		a := t.Asks
		info.DetectedInteractions = &tool.Capabilities{Confirm: a.Confirm, Text: a.Text, MultilineText: a.Text, Secret: a.Secret, Select: a.Select}
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

	// parts are the problems found on the way, in order (Diagnostics).
	parts []diagPart
	opts  Options
	wd    string // the working directory, for abs; "" when unknown
}

// diagPart is a piece of a discovery's diagnostics: diagnostics made when
// found, or the reader's findings about a file (syntax errors, undocumented
// parameters...), made only when asked: listing never prints them, and
// the standard library has thousands.
type diagPart struct {
	made []tool.Diagnostic
	src  *pysrc.File // the file whose findings these are, or nil
	path string      // the file's path as given
	dups []duplicate // the file's tools defined before
}

// duplicate is a tool that another, registered, already defines.
type duplicate struct {
	t     *pysrc.Tool
	first *Tool
}

// Diagnostics returns the problems found on the way, in order: those of
// the scan, then for each file those of reading it, its syntax errors and
// the reader's findings, and its tools that another file already defines.
// They are made at each call, into a new slice.
func (r *Result) Diagnostics() []tool.Diagnostic {
	n := 0
	for _, p := range r.parts {
		n += len(p.made)
		n += len(p.dups)
		if p.src != nil {
			n += len(p.src.SyntaxErrors) + 1
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]tool.Diagnostic, 0, n)
	for _, p := range r.parts {
		out = append(out, p.made...)
		if p.src != nil {
			out = appendFindings(out, p.src, p.path)
		}
		for _, d := range p.dups {
			out = append(out, tool.Diagnostic{
				Severity: "warning", Code: "duplicate-tool", File: p.path, Line: d.t.Line, Tool: d.t.Name,
				Message: "tool " + d.t.Name + " is already defined in " + d.first.File.Path + ":" + strconv.Itoa(d.first.Line) + "; this one is ignored",
			})
		}
	}
	return out
}

// appendFindings appends the problems of a file as it reads now: its
// syntax errors and the reader's findings.
func appendFindings(out []tool.Diagnostic, src *pysrc.File, path string) []tool.Diagnostic {
	for _, e := range src.SyntaxErrors {
		out = append(out, tool.Diagnostic{
			Severity: "error", Code: "syntax-error", File: path, Line: e.Pos.Line, Column: e.Pos.Column,
			Message: e.Msg + " (tools read by the lossy fallback extractor)",
		})
	}
	for _, d := range src.Diagnostics() {
		if d.Kind == pysrc.DiagSyntaxError {
			continue // reported above with its column
		}
		sev := "warning"
		if d.Kind == pysrc.DiagUndocumented || d.Kind == pysrc.DiagFallbackParsing {
			sev = "info"
		}
		out = append(out, tool.Diagnostic{Severity: sev, Code: string(d.Kind), File: path, Line: d.Line, Message: d.Message})
	}
	return out
}

// add appends diagnostics made now.
func (r *Result) add(ds ...tool.Diagnostic) {
	if len(ds) == 0 {
		return
	}
	if k := len(r.parts) - 1; k >= 0 && r.parts[k].src == nil && r.parts[k].dups == nil {
		r.parts[k].made = append(r.parts[k].made, ds...)
		return
	}
	r.parts = append(r.parts, diagPart{made: ds})
}

// Run discovers the tools of opts. The files are read and parsed
// concurrently (one goroutine per CPU); the result is the same as reading
// them one after the other: tools, files and diagnostics keep their order.
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
	// First the plan, in order: the diagnostics of the scan and the files
	// to load; then the reads, in parallel; then the registration, in order.
	var plan []step
	for _, dir := range folders {
		plan = append(plan, r.scanFolder(dir)...)
	}
	for _, f := range files {
		st, err := os.Stat(f)
		switch {
		case err != nil:
			plan = append(plan, diagStep("error", "missing-file", f, fmt.Sprintf("tool file %s: %v", f, pathErr(err))))
		case st.IsDir():
			plan = append(plan, diagStep("error", "not-a-file", f, fmt.Sprintf("tool file %s is a directory (use --tools for folders)", f)))
		default:
			plan = append(plan, step{path: f})
		}
	}
	r.run(plan)
	return r
}

// step is one step of a discovery: a diagnostic of the scan (diag set),
// or a file to load (path set) and, once read, what reading it gave.
type step struct {
	diag        *tool.Diagnostic
	path, group string
	got         fileRead
}

func diagStep(sev, code, file, msg string) step {
	return step{diag: &tool.Diagnostic{Severity: sev, Code: code, File: file, Message: msg}}
}

// run reads the files of a plan concurrently, then registers the steps in
// order: the first tool of a name wins.
func (r *Result) run(plan []step) {
	if runtime.GOOS != "windows" {
		r.wd, _ = os.Getwd() // once: filepath.Abs asks for it (two stats) per file
	}
	readAll(plan, r.read)
	files, tools := 0, 0
	for i := range plan {
		if plan[i].diag == nil {
			files++
			if f := plan[i].got.file; f != nil {
				tools += len(f.Source.Tools)
			}
		}
	}
	r.Files = slices.Grow(r.Files, files)
	r.Tools = slices.Grow(r.Tools, tools)
	seen := make(map[string]*Tool, tools)
	for i := range plan {
		if d := plan[i].diag; d != nil {
			r.add(*d)
			continue
		}
		r.register(&plan[i].got, seen)
		plan[i].got = fileRead{} // the parse is the File's now
	}
	r.shareMeta()
}

// readAll reads the files of plan with read, in parallel: one goroutine
// per CPU, each taking the next file not yet taken and reading it into
// its own buffer, used again for its next file.
func readAll(plan []step, read func(path, group string, buf *[]byte) fileRead) {
	var todo []int
	for i := range plan {
		if plan[i].diag == nil {
			todo = append(todo, i)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	if workers <= 1 {
		var buf []byte
		for _, i := range todo {
			plan[i].got = read(plan[i].path, plan[i].group, &buf)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var buf []byte
			for {
				k := int(next.Add(1)) - 1
				if k >= len(todo) {
					return
				}
				i := todo[k]
				plan[i].got = read(plan[i].path, plan[i].group, &buf)
			}
		})
	}
	wg.Wait()
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

// scanFolder lists the files a tools folder contributes, in order, and
// the problems of the scan where they occur.
func (r *Result) scanFolder(dir string) []step {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return []step{diagStep("error", "missing-folder", dir, fmt.Sprintf("tools folder %s: %v", dir, pathErr(err)))}
	case !st.IsDir():
		return []step{diagStep("error", "not-a-folder", dir, fmt.Sprintf("tools folder %s is not a folder (use --file for single files)", dir))}
	}
	names, err := readNames(dir)
	if err != nil {
		return []step{diagStep("warning", "unreadable-folder", dir, fmt.Sprintf("tools folder %s: %v", dir, err))}
	}
	var out []step
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
			out = append(out, step{path: p, group: strings.TrimSuffix(name, ".py")})
		}
	}
	return out
}

// scanLibrary lists the files of a directory library X/: X/X.py first
// (when it is a file), then the other *.py files directly in X/.
func (r *Result) scanLibrary(dir, name string) []step {
	names, err := readNames(dir)
	if err != nil {
		return []step{diagStep("warning", "unreadable-folder", dir, fmt.Sprintf("library folder %s: %v", dir, err))}
	}
	primary := name + ".py"
	var out []step
	if primary != "__init__.py" {
		if st, err := os.Stat(filepath.Join(dir, primary)); err == nil && st.Mode().IsRegular() {
			out = append(out, step{path: filepath.Join(dir, primary), group: name})
		}
	}
	for _, n := range names {
		if skipped(n) || n == "__init__.py" || n == primary || !strings.HasSuffix(n, ".py") {
			continue
		}
		p := filepath.Join(dir, n)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, step{path: p, group: name})
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
		if e.diag == nil {
			out = append(out, e.path)
		}
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
	plan := make([]step, len(files))
	for i, f := range files {
		plan[i] = step{path: f, group: group}
	}
	r.run(plan)
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

// fileRead is what reading one file gave: the problems of the reading,
// and the file to load (none when there is nothing to load).
type fileRead struct {
	path  string // as given
	diags []tool.Diagnostic
	file  *File
}

// register adds a file read to the result: its diagnostics, the file and
// its tools, the first tool of a name winning.
func (r *Result) register(got *fileRead, seen map[string]*Tool) {
	r.add(got.diags...)
	f := got.file
	if f == nil {
		return
	}
	r.Files = append(r.Files, f)
	// The problems of the file as it reads now (those of a last good
	// version were reported when it was read) and its tools defined
	// before, made when asked.
	part := diagPart{path: got.path}
	if !f.LastGood {
		part.src = f.Source
	}
	for _, t := range f.Source.Tools {
		if first, dup := seen[t.Name]; dup {
			part.dups = append(part.dups, duplicate{t, first})
			continue
		}
		dt := &Tool{Tool: t, File: f}
		seen[t.Name] = dt
		r.Tools = append(r.Tools, dt)
	}
	if part.src != nil || part.dups != nil {
		r.parts = append(r.parts, part)
	}
}

// read reads one file and parses it, through the cache when there is one,
// into the File to load (none when there is nothing to load) and the
// problems of the reading. With a cache, a file that no longer reads
// gives its last good version (File.LastGood) and a diagnostic saying so.
// The content is read into *buf, whose memory is used again for the next
// file (a parse keeps no reference to its source). read only reads
// r.opts: files are read concurrently.
func (r *Result) read(path, group string, buf *[]byte) fileRead {
	var got fileRead
	diag := func(sev, code, msg string) {
		got.diags = append(got.diags, tool.Diagnostic{Severity: sev, Code: code, File: path, Message: msg})
	}
	abs := r.abs(path)
	stem := pysrc.Stem(path)
	if group == "" {
		group = stem
	}
	file := func(pf *pysrc.File, sum Sum, lastGood bool) fileRead {
		got.path = path
		got.file = &File{Path: abs, Stem: stem, Group: group, Dir: filepath.Dir(abs), Source: pf, Sum: sum, LastGood: lastGood}
		return got
	}
	c := r.opts.Cache
	precise := r.opts.PreciseTypes != nil && r.opts.PreciseTypes(stem)
	// A file caught changing is only told apart when there is a last
	// good version to keep instead (the stats cost a first reading).
	var before fs.FileInfo
	watchChange := c.good(abs, precise) != nil
	if watchChange {
		before, _ = os.Stat(path)
	}
	if precise {
		// The precise mapping's second pass may keep strings of the
		// tree, which point into the source: give it its own.
		buf = new([]byte)
	}
	src, err := readFile(path, buf)
	if err == nil && watchChange && changing(path, before, len(src)) {
		// Caught in the middle of a write: keep the last good version;
		// the end of the write brings another change, and another read.
		if good := c.good(abs, precise); good != nil {
			diag("warning", "file-changing", fmt.Sprintf("%s changed while it was read; its last good version's tools are kept until it settles", path))
			return file(good.pf, good.sum, true)
		}
	}
	if err != nil {
		if good := c.good(abs, precise); good != nil {
			diag("error", "unreadable-file", fmt.Sprintf("cannot read %s: %v; its last good version's tools are kept", path, pathErr(err)))
			return file(good.pf, good.sum, true)
		}
		diag("warning", "unreadable-file", fmt.Sprintf("cannot read %s: %v", path, pathErr(err)))
		return got
	}
	sum := SumOf(src)
	pf := c.lookup(abs, sum, precise)
	if pf == nil {
		pf, err = pysrc.ReadFileOptions(path, src, &pysrc.Options{PreciseTypes: precise})
		if err != nil {
			// err repeats the path: say what is wrong once.
			if good := c.good(abs, precise); good != nil {
				diag("error", "not-utf8", fmt.Sprintf("skipped %s: it is not valid UTF-8 (tool files must be UTF-8); its last good version's tools are kept", path))
				return file(good.pf, good.sum, true)
			}
			diag("warning", "not-utf8", fmt.Sprintf("skipped %s: it is not valid UTF-8 (tool files must be UTF-8)", path))
			return got
		}
		if pf.SyntaxErrors != nil {
			if good := c.good(abs, precise); good != nil {
				e := pf.SyntaxErrors[0]
				got.diags = append(got.diags, tool.Diagnostic{
					Severity: "error", Code: "syntax-error", File: path, Line: e.Pos.Line, Column: e.Pos.Column,
					Message: e.Msg + " (the tools of its last good version are kept until it parses again)",
				})
				return file(good.pf, good.sum, true)
			}
		}
		c.store(abs, sum, precise, pf)
	}
	return file(pf, sum, false)
}

// readFileOS reads the file at path as os.ReadFile does, into *buf
// (grown as needed), through an *os.File.
func readFileOS(path string, buf *[]byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := (*buf)[:0]
	if st, err := f.Stat(); err == nil && st.Size() > 0 && st.Size() < 1<<40 {
		b = slices.Grow(b, int(st.Size())+1) // +1: the read that sees the end needs room
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			*buf = b
			if err == io.EOF {
				return b, nil
			}
			return nil, err
		}
	}
}

// abs is filepath.Abs(path), or path when that fails, with the working
// directory read once per discovery (on Windows, filepath.Abs itself:
// drive-relative paths have their own rules there).
func (r *Result) abs(path string) string {
	switch {
	case filepath.IsAbs(path):
		return filepath.Clean(path)
	case r.wd != "":
		return filepath.Join(r.wd, path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

func (r *Result) diag(sev, code, file, msg string) {
	r.add(tool.Diagnostic{Severity: sev, Code: code, File: file, Message: msg})
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
