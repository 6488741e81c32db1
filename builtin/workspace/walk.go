package workspace

import (
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Ignored are directory names that listings, searches and walks skip:
// version-control metadata, dependency trees and caches.
var Ignored = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "node_modules": true, "__pycache__": true,
	".venv": true, ".mypy_cache": true, ".pytest_cache": true, ".tox": true,
}

func sortEntries(es []fs.DirEntry) {
	slices.SortFunc(es, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}

// Walk visits the files and directories below the named directory in
// lexical order, skipping Ignored directories (unless they are the start)
// and never following symbolic links. fn gets the path relative to the
// start, with forward slashes; it returns fs.SkipDir to skip a directory,
// fs.SkipAll to stop.
func (w *Workspace) Walk(dir string, fn func(rel string, d fs.DirEntry) error) error {
	fsys, closeFn, err := w.Sub(dir)
	if err != nil {
		return err
	}
	defer closeFn()
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return pathErr("walk", dir, err)
			}
			return nil // unreadable entries are skipped
		}
		if p == "." {
			return nil
		}
		if d.IsDir() && Ignored[d.Name()] {
			return fs.SkipDir
		}
		return fn(p, d)
	})
}

// Match reports whether the slash-separated path rel matches the glob
// pattern. A "**" segment matches any number of directories (zero
// included); other segments follow path.Match. A pattern without a slash
// matches the last element of rel, at any depth.
func Match(pattern, rel string) bool {
	pattern = strings.TrimPrefix(path.Clean("/"+pattern), "/")
	if !strings.Contains(pattern, "/") && pattern != "**" {
		ok, _ := path.Match(pattern, path.Base(rel))
		return ok
	}
	return matchSegs(strings.Split(pattern, "/"), strings.Split(rel, "/"))
}

// matchSegs matches segments with a table of sub-results, so that
// patterns with many "**" stay polynomial.
func matchSegs(pat, segs []string) bool {
	// ok[i][j]: pat[i:] matches segs[j:].
	ok := make([][]bool, len(pat)+1)
	for i := range ok {
		ok[i] = make([]bool, len(segs)+1)
	}
	ok[len(pat)][len(segs)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		for j := len(segs); j >= 0; j-- {
			if pat[i] == "**" {
				ok[i][j] = ok[i+1][j] || (j < len(segs) && ok[i][j+1])
				continue
			}
			if j < len(segs) {
				m, _ := path.Match(pat[i], segs[j])
				ok[i][j] = m && ok[i+1][j+1]
			}
		}
	}
	return ok[0][0]
}

// ValidPattern reports whether pattern is a well-formed glob for Match.
func ValidPattern(pattern string) bool {
	for _, seg := range strings.Split(pattern, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return false
		}
	}
	return pattern != ""
}
