package sandbox

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// ChangeKind says what a run did to one path of the workspace.
type ChangeKind string

// The kinds of change a copy-on-write run can make.
const (
	// Added: a new file, folder or link.
	Added ChangeKind = "added"
	// Modified: new content for an existing file.
	Modified ChangeKind = "modified"
	// Deleted: an existing file, link or folder (with what it holds)
	// removed.
	Deleted ChangeKind = "deleted"
	// ModeChanged: new permissions for an existing file or folder.
	ModeChanged ChangeKind = "mode"
	// Replaced: an existing path that is now of another type (a link
	// that became a folder, a file that became a link, ...).
	Replaced ChangeKind = "replaced"
	// Touched: new times only for an existing file (asked for like a
	// content change).
	Touched ChangeKind = "touched"
	// AttrChanged: new extended attributes (user.*) for an existing
	// file.
	AttrChanged ChangeKind = "xattr"
	// Skipped: something that is never applied (a FIFO, a socket, a
	// device node).
	Skipped ChangeKind = "skipped"
)

// Change is one change of a copy-on-write run.
type Change struct {
	// Path is relative to the workspace, with forward slashes.
	Path string     `json:"path"`
	Kind ChangeKind `json:"kind"`
	// Type is "file", "folder" or "link" (what the path is after the
	// run; for a deletion, what it was).
	Type string `json:"type"`
	// Size and Mode after the run; OldSize and OldMode before it.
	Size    int64       `json:"size,omitempty"`
	OldSize int64       `json:"old_size,omitempty"`
	Mode    fs.FileMode `json:"-"`
	OldMode fs.FileMode `json:"-"`
	// Target is a link's target.
	Target string `json:"target,omitempty"`
	// Risky changes are applied only after the operator's approval; Why
	// says why one is risky.
	Risky bool   `json:"-"`
	Why   string `json:"-"`
	// Owned: the path was created by an earlier call of this session
	// (Ledger) and is still as that call left it.
	Owned bool `json:"-"`

	upper string // the new content, in the upper layer
	nlink uint64 // links to the existing file (times are kept when > 1)
}

// ChangeSet is what a copy-on-write run changed in its workspace, read
// from its upper layer alone.
type ChangeSet struct {
	// Workspace is the real workspace the changes apply to.
	Workspace string
	// Changes in path order: a folder before what is below it.
	Changes []Change
	// Began is when the run was prepared: a file changed in the
	// workspace after it is a conflict.
	Began time.Time

	// NoSync skips the syncs of Apply: the set stays all or nothing
	// through a crash of lcp, but not through a power loss. For
	// measurements.
	NoSync bool

	owner [2]int   // uid, gid of new files (-1: leave as created)
	shown []string // host folders the run saw read-only (see shownProgram)
}

// Empty reports whether the run changed nothing.
func (cs *ChangeSet) Empty() bool { return cs == nil || len(cs.Changes) == 0 }

// Risky returns the changes that need the operator's approval.
func (cs *ChangeSet) Risky() []Change {
	if cs == nil {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(cs.Changes), func(c Change) bool { return !c.Risky })
}

// classify marks the changes that need approval: anything but new files,
// folders and links inside the workspace, unless the path belongs to the
// session (created by an earlier call and untouched since); anything
// under a version control folder, in what git runs or loads later, or
// that a common tool runs later (runLaterRules), always.
func (cs *ChangeSet) classify() {
	later := cs.laterCheck()
	for i := range cs.Changes {
		c := &cs.Changes[i]
		switch {
		case c.Kind == Skipped:
		case inVCS(c.Path):
			c.Risky, c.Why = true, "under "+firstVCS(c.Path)+", which version control runs hooks and configuration from"
		case c.Kind != Deleted && later(c.Path) != "":
			c.Risky, c.Why = true, later(c.Path)
		case c.Kind == Added && c.Type == "link" && linkEscapes(cs.Workspace, c.Path, c.Target) && !cs.shownProgram(c.Target):
			c.Risky, c.Why = true, "a link that points outside the workspace"
		case c.Kind == Added:
		case c.Owned:
		case c.Kind == Modified:
			c.Risky, c.Why = true, "changes an existing file"
		case c.Kind == Deleted:
			c.Risky, c.Why = true, "deletes an existing "+c.Type
		case c.Kind == ModeChanged:
			c.Risky, c.Why = true, "changes the permissions of an existing "+c.Type
		case c.Kind == Replaced:
			c.Risky, c.Why = true, "replaces an existing path by a "+c.Type
		case c.Kind == Touched:
			c.Risky, c.Why = true, "changes the times of an existing "+c.Type
		case c.Kind == AttrChanged:
			c.Risky, c.Why = true, "changes the extended attributes of an existing "+c.Type
		}
	}
}

// inVCS reports whether a workspace path is inside a version control
// folder, at any depth (nested repositories too).
func inVCS(p string) bool { return firstVCS(p) != "" }

func firstVCS(p string) string {
	for _, part := range strings.Split(p, "/") {
		if slices.Contains(VCSDirs, part) {
			return part
		}
	}
	return ""
}

// linkEscapes reports whether a link at p (relative to the workspace ws)
// with the given target leads out of the workspace or into a version
// control folder. Links to other links are judged by their own target
// only: each link is a change of its own.
func linkEscapes(ws, p, target string) bool {
	var joined string
	if strings.HasPrefix(target, "/") {
		rel, ok := strings.CutPrefix(path.Clean(target), strings.TrimSuffix(ws, "/")+"/")
		if !ok {
			return true
		}
		joined = rel
	} else {
		joined = path.Clean(path.Join(path.Dir(p), target))
	}
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return true
	}
	return inVCS(joined)
}

// VCSDirs are the version control folders of a workspace kept read-only
// in Write mode: git and its peers run hooks and configuration from them
// outside the sandbox later. Husky keeps git hooks in .husky.
var VCSDirs = []string{".git", ".hg", ".svn", ".bzr", ".jj", "_darcs", ".pijul", ".husky"}

// Outcome says what applying changes did.
type Outcome struct {
	// Applied changes are in the workspace now.
	Applied []Change
	// Conflicts were not applied: the path changed in the workspace
	// while the run went on (or is not what the run saw), and is never
	// overwritten silently.
	Conflicts []Change
	// Failed were not applied because of an error, with the reason.
	Failed []Failure
	// Withheld were not applied because another change of the same set
	// conflicted or failed: a set is applied whole or not at all, and
	// may be offered again.
	Withheld []Change
}

// Failure is a change that could not be applied.
type Failure struct {
	Change Change
	Err    error
}

// typeName names the type of a mode for people.
func typeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "folder"
	case m&fs.ModeSymlink != 0:
		return "link"
	case m.IsRegular():
		return "file"
	}
	return "special file"
}

// comparePaths orders paths so that a folder comes before what is below
// it.
func comparePaths(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := strings.Compare(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}
