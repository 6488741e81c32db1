// Package corpus builds the folders of Python files the benchmarks read:
// Python's standard library with every `def name` renamed `def
// tool_name` (so that every function is a tool), in full or only its
// top-level modules, and folders of generated typical tool files.
//
//	c, err := corpus.StdlibTopLevel("python3", dir)
//	fmt.Println(c) // 168 files, 4.7 MB (top-level standard library of Python 3.11.7, defs renamed tool_*)
package corpus

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Corpus is a folder of .py files written for a benchmark.
type Corpus struct {
	// Dir is the folder.
	Dir string
	// Files are the paths of the files, in byte order of their names.
	Files []string
	// Size is the total size of the files in bytes.
	Size int64
	// What says what the files are.
	What string
}

func (c *Corpus) String() string {
	return fmt.Sprintf("%d files, %.1f MB (%s)", len(c.Files), float64(c.Size)/1e6, c.What)
}

var defNameRE = regexp.MustCompile(`(?m)^([ \t]*(?:async[ \t]+)?def[ \t]+)([A-Za-z_]\w*)`)

// Rename renames every `def name` of Python source `def tool_name`.
func Rename(src []byte) []byte { return defNameRE.ReplaceAll(src, []byte("${1}tool_${2}")) }

// stdlib returns the standard library's folder and the version of the
// interpreter python.
func stdlib(python string) (dir, version string, err error) {
	out, err := exec.Command(python, "-c", `import sys, sysconfig; print(sysconfig.get_paths()["stdlib"]); print(sys.version.split()[0])`).Output()
	if err != nil {
		return "", "", fmt.Errorf("locating the standard library of %s: %w", python, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 {
		return "", "", fmt.Errorf("unexpected answer from %s: %q", python, out)
	}
	return lines[0], lines[1], nil
}

// StdlibTopLevel writes the .py files at the top of python's standard
// library into dir, renamed (168 files, 4.7 MB for Python 3.11), under
// their own names.
func StdlibTopLevel(python, dir string) (*Corpus, error) {
	root, version, err := stdlib(python)
	if err != nil {
		return nil, err
	}
	srcs, err := filepath.Glob(filepath.Join(root, "*.py"))
	if err != nil {
		return nil, err
	}
	sort.Strings(srcs)
	c := &Corpus{Dir: dir, What: "top-level standard library of Python " + version + ", defs renamed tool_*"}
	for _, p := range srcs {
		if err := c.add(filepath.Base(p), p); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// StdlibAll writes every .py file of python's standard library (but its
// site-packages) into dir, renamed, as one flat folder: the i-th file in
// byte order of its path is named %05d_<name> (about 1,700 files, 32 MB).
func StdlibAll(python, dir string) (*Corpus, error) {
	root, version, err := stdlib(python)
	if err != nil {
		return nil, err
	}
	var srcs []string
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".py") && !strings.Contains(path, "site-packages") {
			srcs = append(srcs, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(srcs)
	c := &Corpus{Dir: dir, What: "standard library of Python " + version + ", defs renamed tool_*"}
	for i, p := range srcs {
		if err := c.add(fmt.Sprintf("%05d_%s", i, filepath.Base(p)), p); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// add writes the renamed content of src as dir/name.
func (c *Corpus) add(name, src string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return c.write(name, Rename(b))
}

func (c *Corpus) write(name string, b []byte) error {
	p := filepath.Join(c.Dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return err
	}
	c.Files = append(c.Files, p)
	c.Size += int64(len(b))
	return nil
}

// Folder describes the .py files of an existing folder: those at its top,
// or with tree those of its sub-folders too.
func Folder(dir string, tree bool) (*Corpus, error) {
	c := &Corpus{Dir: dir, What: "the folder " + dir}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && !tree {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".py") {
			st, err := d.Info()
			if err != nil {
				return err
			}
			c.Files = append(c.Files, p)
			c.Size += st.Size()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(c.Files)
	return c, nil
}

// ToolFiles writes n generated tool files into dir, the same ones for the
// same n: a library's metadata, imports, two to six documented tools with
// annotated parameters and defaults, a helper, sometimes a prompt
// function — about 3 KB each, as the tool libraries people write.
func ToolFiles(dir string, n int) (*Corpus, error) {
	c := &Corpus{Dir: dir, What: "generated tool files"}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		name := fmt.Sprintf("%s_%03d", pick(r, nouns), i)
		if err := c.write(name+".py", []byte(toolFile(r, name))); err != nil {
			return nil, err
		}
	}
	return c, nil
}

var (
	nouns  = []string{"files", "weather", "search", "notes", "calendar", "mail", "git", "images", "math", "web", "shell", "db"}
	verbs  = []string{"get", "list", "find", "create", "update", "delete", "summarize", "convert", "fetch", "check"}
	params = []struct{ name, ann, def, doc string }{
		{"path", "str", "", "The file or folder to work on."},
		{"query", "str", "", "What to look for."},
		{"limit", "int", "10", "At most this many results."},
		{"recursive", "bool", "False", "Descend into sub-folders."},
		{"threshold", "float", "0.5", "The score below which results are dropped."},
		{"tags", "list[str]", "None", "Labels to filter by."},
		{"options", "dict", "None", "Extra settings, passed through."},
		{"city", "str", "'Paris'", "The city to report on."},
		{"units", "Literal['metric', 'imperial']", "'metric'", "The unit system."},
		{"timeout", "Optional[int]", "30", "Seconds before giving up."},
		{"encoding", "str", "\"utf-8\"", "The text encoding."},
		{"tool_context", "", "None", ""},
	}
)

func pick[T any](r *rand.Rand, from []T) T { return from[r.IntN(len(from))] }

// toolFile is one generated tool library.
func toolFile(r *rand.Rand, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\"\"\"Tools for %s.\"\"\"\n\n", name)
	fmt.Fprintf(&b, "TOOL_LIBRARY_NAME = %q\nTOOL_LIBRARY_DESC = \"Work with %s from the assistant.\"\nTOOL_LIBRARY_ICON = \"🧰\"\n\n", strings.ReplaceAll(name, "_", " "), name)
	b.WriteString("import json\nimport os\nfrom typing import Any, Dict, List, Literal, Optional\n\n")
	fmt.Fprintf(&b, "_CACHE: Dict[str, Any] = {}\n\n\ndef _load(path: str) -> dict:\n    if path in _CACHE:\n        return _CACHE[path]\n    with open(path, encoding=\"utf-8\") as f:\n        data = json.load(f)\n    _CACHE[path] = data\n    return data\n")
	tools := 2 + r.IntN(5)
	for t := range tools {
		verb := pick(r, verbs)
		tool := fmt.Sprintf("tool_%s_%s_%d", verb, name, t)
		perm := r.Perm(len(params))[:1+r.IntN(4)]
		sort.Ints(perm) // required parameters before those with defaults
		var sig, doc []string
		seenDefault := false
		for _, k := range perm {
			p := params[k]
			if p.def == "" && seenDefault {
				continue
			}
			s := p.name
			if p.ann != "" {
				s += ": " + p.ann
			}
			if p.def != "" {
				s += " = " + p.def
				seenDefault = true
			}
			sig = append(sig, s)
			if p.doc != "" {
				doc = append(doc, fmt.Sprintf("        %s (%s): %s", p.name, p.ann, p.doc))
			}
		}
		fmt.Fprintf(&b, "\n\ndef %s(%s) -> dict:\n", tool, strings.Join(sig, ", "))
		fmt.Fprintf(&b, "    \"\"\"%s the %s entries of the workspace.\n\n    Returns a dictionary with the outcome.\n\n    Args:\n%s\n    \"\"\"\n",
			strings.ToUpper(verb[:1])+verb[1:], name, strings.Join(doc, "\n"))
		b.WriteString("    results = []\n    for entry in sorted(os.listdir(\".\")):\n        if entry.startswith(\".\"):\n            continue\n        results.append({\"name\": entry, \"size\": os.path.getsize(entry)})\n")
		b.WriteString("    if not results:\n        return {\"success\": False, \"error\": \"nothing found\"}\n    return {\"success\": True, \"results\": results[:10], \"count\": len(results)}\n")
		if r.IntN(4) == 0 {
			fmt.Fprintf(&b, "\n\ndef %s_prompt() -> str:\n    return \"Use %s when the user asks about %s.\"\n", tool, tool, name)
		}
	}
	return b.String()
}

// RepoRoot finds the module root from the working directory.
func RepoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// BuildLCP builds the lcp command into out the way a release is built
// (scripts/release.sh and the README's install line): static, without
// cgo, symbols stripped. The benchmarks measure that binary, the one
// users run; a default `go build` links libc's resolver and keeps the
// symbol tables, which costs each process start page faults.
func BuildLCP(out string) error {
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/lcp")
	build.Dir = RepoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building lcp: %w", err)
	}
	return nil
}
