package lcp

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lcptools/lcp/pysrc"
	"github.com/lcptools/lcp/tool"
)

// Kinds of LibraryInfo.
const (
	// KindPython is an LCP Python library: a file, or a folder X/ of files.
	KindPython = "python"
	// KindBuiltin is a Go library of the built-in default library.
	KindBuiltin = "builtin"
	// KindDynamic is a set of Python tools registered from code.
	KindDynamic = "dynamic"
	// KindMCP is the tools of an MCP server.
	KindMCP = "mcp"
	// KindNative is the host's own toolsets (Config.Toolsets).
	KindNative = "native"
)

// LibraryInfo describes one library of the inventory, for host UIs and
// `lcp list --libraries`: its metadata, where it comes from, its tools and
// the diagnostics about its files.
type LibraryInfo struct {
	// ID is the library's key: the stem of a file library, the folder name
	// of a folder library X/, the built-in library's ID, the MCP server's
	// alias.
	ID string `json:"id"`
	// Name, Description and Icon are TOOL_LIBRARY_NAME, _DESC and _ICON
	// (the files of a folder library share those of X/X.py).
	Name        string `json:"name"`
	Description string `json:"description"`
	Icon        string `json:"icon"`
	// Kind is KindPython, KindBuiltin, KindDynamic, KindMCP or KindNative.
	Kind string `json:"kind"`
	// Files are the library's source files (absolute paths), in load order.
	Files []string `json:"files"`
	// Tools are the names of the library's tools in the inventory.
	Tools []string `json:"tools"`
	// Diagnostics are those about the library's files.
	Diagnostics []tool.Diagnostic `json:"diagnostics"`
	// Sandbox says whether what the library runs is in lcp's kernel
	// sandbox, and how.
	Sandbox *Containment `json:"sandbox"`
}

// Libraries lists the inventory's libraries, in the order of their first
// tool, then those with no tool in the inventory (a file that defines
// none, or that could not be read).
func (e *Engine) Libraries(ctx context.Context) ([]LibraryInfo, error) {
	infos, err := e.Tools(ctx)
	if err != nil {
		return nil, err
	}
	var libs []*LibraryInfo
	byKey := map[string]*LibraryInfo{}
	get := func(key string, mk func() *LibraryInfo) *LibraryInfo {
		if l := byKey[key]; l != nil {
			return l
		}
		l := mk()
		if l.Files == nil {
			l.Files = []string{}
		}
		l.Tools, l.Diagnostics = []string{}, []tool.Diagnostic{}
		byKey[key] = l
		libs = append(libs, l)
		return l
	}
	// The Python files, grouped into libraries.
	fileLib := map[string]string{} // path -> library key
	pending := map[string]*LibraryInfo{}
	var order []string
	for _, f := range e.lcp.Files() {
		key := "py:" + f.Dir + "|" + f.Group
		fileLib[f.Path] = key
		l := pending[key]
		if l == nil {
			meta := f.Meta
			if meta == (pysrc.Library{}) && f.Source != nil {
				meta = f.Source.Library
			}
			name := meta.Name
			if name == "" {
				name = f.Group
			}
			l = &LibraryInfo{ID: f.Group, Name: name, Description: meta.Description, Icon: meta.Icon, Kind: KindPython}
			pending[key] = l
			order = append(order, key)
		}
		l.Files = append(l.Files, f.Path)
	}
	var remote map[string]bool
	if e.remote != nil {
		remote = map[string]bool{}
		if rs, err := e.remote.Tools(ctx); err == nil {
			for _, r := range rs {
				remote[r.Name] = true
			}
		}
	}
	for _, in := range infos {
		var l *LibraryInfo
		switch key, ok := fileLib[in.Source]; {
		case ok:
			l = get(key, func() *LibraryInfo { return pending[key] })
		case strings.HasPrefix(in.Source, "dynamic:"):
			l = get("dyn:"+in.Library.ID, func() *LibraryInfo { return libraryOf(in.Library, KindDynamic) })
		case in.Source == "" && isBuiltin(in.Library.ID) && e.builtins.isMounted(in.Library.ID):
			l = get("go:"+in.Library.ID, func() *LibraryInfo { return libraryOf(in.Library, KindBuiltin) })
		case remote[in.Name]:
			l = get("mcp:"+in.Library.ID, func() *LibraryInfo { return libraryOf(in.Library, KindMCP) })
		default:
			l = get("native:"+in.Library.ID, func() *LibraryInfo { return libraryOf(in.Library, KindNative) })
		}
		l.Tools = append(l.Tools, in.Name)
	}
	for _, key := range order { // Python libraries without a tool
		get(key, func() *LibraryInfo { return pending[key] })
	}
	// The diagnostics, by file. A file that could not be read at all is a
	// library of its own, without tools.
	for _, d := range e.Diagnostics(ctx) {
		if d.File == "" {
			continue
		}
		abs, err := filepath.Abs(d.File)
		if err != nil {
			abs = d.File
		}
		key, ok := fileLib[abs]
		if !ok {
			if !strings.HasSuffix(abs, ".py") {
				continue // a folder: not a library
			}
			stem := pysrc.Stem(abs)
			key = "py:" + filepath.Dir(abs) + "|" + stem
			fileLib[abs] = key
			get(key, func() *LibraryInfo {
				return &LibraryInfo{ID: stem, Name: stem, Kind: KindPython}
			})
			if l := byKey[key]; !slices.Contains(l.Files, abs) {
				l.Files = append(l.Files, abs)
			}
		}
		if l := byKey[key]; l != nil {
			l.Diagnostics = append(l.Diagnostics, d)
		}
	}
	out := make([]LibraryInfo, len(libs))
	for i, l := range libs {
		c := e.containment(l)
		l.Sandbox = &c
		out[i] = *l
	}
	return out, nil
}

func libraryOf(lib tool.Library, kind string) *LibraryInfo {
	name := lib.Name
	if name == "" {
		name = lib.ID
	}
	return &LibraryInfo{ID: lib.ID, Name: name, Description: lib.Description, Icon: lib.Icon, Kind: kind}
}
