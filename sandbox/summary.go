package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"
)

// Limits of what Summary shows: the operator reads it in a terminal.
const (
	maxDiffFile  = 256 << 10 // larger files get no diff
	maxDiffLines = 60        // per file
	maxAllLines  = 300       // per summary
	maxListed    = 50        // changes listed one per line
)

// String describes a change in one line: "modified data.csv (1.2 kB →
// 845 B)".
func (c Change) String() string {
	switch c.Kind {
	case Added:
		if c.Type == "link" {
			return fmt.Sprintf("new link %s → %s", c.Path, c.Target)
		}
		if c.Type == "folder" {
			return "new folder " + c.Path
		}
		return fmt.Sprintf("new file %s (%s)", c.Path, size(c.Size))
	case Modified:
		if c.Type == "link" {
			return fmt.Sprintf("changed link %s → %s", c.Path, c.Target)
		}
		return fmt.Sprintf("modified %s (%s → %s)", c.Path, size(c.OldSize), size(c.Size))
	case Deleted:
		if c.Type == "file" {
			return fmt.Sprintf("deleted %s (%s)", c.Path, size(c.OldSize))
		}
		return fmt.Sprintf("deleted %s %s", c.Type, c.Path)
	case ModeChanged:
		return fmt.Sprintf("permissions of %s %s → %s", c.Path, c.OldMode.Perm(), c.Mode.Perm())
	case Replaced:
		return fmt.Sprintf("replaced %s (%s → %s)", c.Path, typeName(c.OldMode), c.Type)
	case Touched:
		return "new times for " + c.Path
	case AttrChanged:
		return "new extended attributes for " + c.Path
	}
	return fmt.Sprintf("%s %s %s (not applied)", c.Kind, c.Type, c.Path)
}

func size(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}

// Summary describes changes for the operator: one line per change (the
// objects of a git repository counted, not listed), then short unified
// diffs of the text files they change or add under version control
// folders (hooks, configuration).
func (cs *ChangeSet) Summary(changes []Change) string {
	var b strings.Builder
	objects := map[string]int{}
	listed := 0
	for _, c := range changes {
		if dir, ok := gitObject(c.Path); ok {
			objects[dir]++
			continue
		}
		if listed == maxListed {
			fmt.Fprintf(&b, "  ... and %d more\n", len(changes)-listed)
			break
		}
		listed++
		fmt.Fprintf(&b, "  %s", c)
		if c.Why != "" {
			fmt.Fprintf(&b, ": %s", c.Why)
		}
		b.WriteByte('\n')
	}
	for dir, n := range objects {
		fmt.Fprintf(&b, "  %d new or changed objects in %s\n", n, dir)
	}
	budget := maxAllLines
	for _, c := range changes {
		if budget <= 0 {
			break
		}
		if _, ok := gitObject(c.Path); ok {
			continue
		}
		d := cs.diff(c)
		if d == "" {
			continue
		}
		lines := strings.SplitAfter(d, "\n")
		if len(lines) > maxDiffLines {
			lines = append(lines[:maxDiffLines], fmt.Sprintf("... (%d more lines)\n", len(lines)-maxDiffLines))
		}
		if len(lines) > budget {
			lines = lines[:budget]
		}
		budget -= len(lines)
		b.WriteByte('\n')
		b.WriteString(strings.Join(lines, ""))
	}
	return strings.TrimRight(b.String(), "\n")
}

// gitObject reports whether p is in a git object store, returning it.
func gitObject(p string) (string, bool) {
	i := strings.Index(p, ".git/objects/")
	if i < 0 || (i > 0 && p[i-1] != '/') {
		return "", false
	}
	return p[:i+len(".git/objects")], true
}

// diff returns a unified diff of a modified text file, or the head of a
// text file added under a version control folder; "" otherwise.
func (cs *ChangeSet) diff(c Change) string {
	if c.Type != "file" || c.upper == "" {
		return ""
	}
	var old []byte
	switch {
	case c.Kind == Modified:
		var ok bool
		if old, ok = readText(filepath.Join(cs.Workspace, filepath.FromSlash(c.Path))); !ok {
			return ""
		}
	case c.Kind == Added && inVCS(c.Path):
	default:
		return ""
	}
	cur, ok := readText(c.upper)
	if !ok {
		return ""
	}
	from := "a/" + c.Path
	if c.Kind == Added {
		from = "/dev/null"
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(old)), B: difflib.SplitLines(string(cur)),
		FromFile: from, ToFile: "b/" + c.Path, Context: 2})
	if err != nil {
		return ""
	}
	return d
}

// readText reads a file that is small text (valid UTF-8, no NUL).
func readText(p string) ([]byte, bool) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxDiffFile {
		return nil, false
	}
	raw, err := os.ReadFile(p)
	if err != nil || bytes.IndexByte(raw, 0) >= 0 || !utf8.Valid(raw) {
		return nil, false
	}
	return raw, true
}
