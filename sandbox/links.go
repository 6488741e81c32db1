package sandbox

import (
	"os"
	"path/filepath"
)

// shownProgram reports whether an absolute link target names a program
// the run was shown read-only from the host (an interpreter under /usr, a
// ReadPaths folder): what python3 -m venv links its bin/python3 to. Such a
// link leads nowhere the run could change, so a new one is applied like a
// link inside the workspace; a link to anything else out of the workspace
// (a folder, a configuration file) still asks.
func (cs *ChangeSet) shownProgram(target string) bool {
	if !filepath.IsAbs(target) || !cs.inShown(filepath.Clean(target)) {
		return false
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil || !cs.inShown(real) {
		return false
	}
	fi, err := os.Stat(real)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// inShown reports whether p lies in a folder the run saw read-only, and
// not in the workspace.
func (cs *ChangeSet) inShown(p string) bool {
	if pathWithin(p, cs.Workspace) {
		return false
	}
	for _, d := range cs.shown {
		if d = cleanRoot(d); d != "" && pathWithin(p, d) {
			return true
		}
	}
	return false
}

// cleanRoot cleans an absolute folder; "" for a relative one or "/".
func cleanRoot(d string) string {
	if !filepath.IsAbs(d) {
		return ""
	}
	if d = filepath.Clean(d); d == "/" {
		return ""
	}
	return d
}
