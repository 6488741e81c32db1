package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Changes reads what the run changed in its copy-on-write workspace from
// the upper layer alone (the workspace is never walked: only the paths
// the layer names are looked up in it). l, when not nil, says which paths
// the session created itself. Call it after the command ended, before
// Close.
func (b *Box) Changes(l *Ledger) (*ChangeSet, error) {
	if b.tmp == "" {
		return nil, errors.New("sandbox: the run's workspace is not copy-on-write")
	}
	if _, err := b.receivedLayer(); err != nil {
		return nil, fmt.Errorf("sandbox: the copy-on-write layer: %w", err)
	}
	owner := [2]int{-1, -1}
	if b.id.root {
		owner = [2]int{b.id.ownUID, b.id.ownGID}
	}
	shown := append(slices.Clone(systemDirs), b.policy.ReadPaths...)
	return readChanges(b.Upper(), b.policy.Workspace, b.start, owner, shown, l)
}

// readChanges reads the change set of an upper layer over the workspace
// ws, for a run that began at began and was shown the host folders shown
// read-only.
func readChanges(upper, ws string, began time.Time, owner [2]int, shown []string, l *Ledger) (*ChangeSet, error) {
	cs := &ChangeSet{Workspace: ws, Began: began, owner: owner, shown: shown}
	err := filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == upper {
			return nil
		}
		rel, err := filepath.Rel(upper, p)
		if err != nil {
			return err
		}
		if strings.HasPrefix(rel, stagingPrefix) && !strings.Contains(rel, "/") {
			if d.IsDir() {
				return filepath.SkipDir // another apply's staging folder
			}
			return nil
		}
		return cs.read(p, filepath.ToSlash(rel), filepath.Join(cs.Workspace, rel))
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox: read the run's changes: %w", err)
	}
	slices.SortStableFunc(cs.Changes, func(a, b Change) int { return comparePaths(a.Path, b.Path) })
	if l != nil {
		for i := range cs.Changes {
			cs.Changes[i].Owned = l.owns(filepath.Join(cs.Workspace, filepath.FromSlash(cs.Changes[i].Path)))
		}
	}
	cs.classify()
	return cs, nil
}

// read turns one entry of the upper layer into changes.
func (cs *ChangeSet) read(up, rel, real string) error {
	var st unix.Stat_t
	if err := unix.Lstat(up, &st); err != nil {
		return err
	}
	var rst unix.Stat_t
	rerr := unix.Lstat(real, &rst)
	exists := rerr == nil
	if rerr != nil && !errors.Is(rerr, unix.ENOENT) && !errors.Is(rerr, unix.ENOTDIR) {
		return rerr
	}
	mode := fileMode(st.Mode)
	c := Change{Path: rel, Type: typeName(mode), Size: st.Size, Mode: mode, upper: up}
	if exists {
		c.OldSize, c.OldMode, c.nlink = rst.Size, fileMode(rst.Mode), uint64(rst.Nlink)
	}
	if isWhiteout(up, &st) {
		if !exists {
			return nil // created and deleted within the run
		}
		c.Kind, c.Type, c.Size, c.Mode = Deleted, typeName(c.OldMode), 0, 0
		cs.Changes = append(cs.Changes, c)
		return nil
	}
	switch {
	case mode.IsDir():
		return cs.readDir(c, up, real, exists, rst)
	case mode.IsRegular(), mode&fs.ModeSymlink != 0:
	default:
		c.Kind = Skipped
		cs.Changes = append(cs.Changes, c)
		return nil
	}
	if mode&fs.ModeSymlink != 0 {
		t, err := os.Readlink(up)
		if err != nil {
			return err
		}
		c.Target = t
	}
	switch {
	case !exists:
		c.Kind = Added
	case typeName(c.OldMode) != c.Type:
		c.Kind = Replaced
	case c.Type == "link":
		if old, err := os.Readlink(real); err == nil && old == c.Target {
			return nil
		}
		c.Kind = Modified
	default:
		same, err := sameContent(up, real, st.Size, rst.Size)
		if err != nil {
			return err
		}
		switch {
		case !same:
			c.Kind = Modified
		case c.Mode.Perm() != c.OldMode.Perm():
			c.Kind = ModeChanged
		case st.Mtim != rst.Mtim:
			c.Kind = Touched
		case !maps.EqualFunc(userXattrs(up), userXattrs(real), bytes.Equal):
			c.Kind = AttrChanged
		default:
			return nil // copied up, unchanged
		}
	}
	cs.Changes = append(cs.Changes, c)
	return nil
}

// readDir handles a folder of the upper layer: new, re-moded, replacing
// something else, or opaque (the run removed the folder and made it
// again: what it held in the workspace is deleted).
func (cs *ChangeSet) readDir(c Change, up, real string, exists bool, rst unix.Stat_t) error {
	opaque := xattr(up, "user.overlay.opaque") == "y"
	switch {
	case !exists:
		c.Kind = Added
		cs.Changes = append(cs.Changes, c)
		return nil
	case typeName(c.OldMode) != "folder":
		c.Kind = Replaced
		cs.Changes = append(cs.Changes, c)
		return nil
	case c.Mode.Perm() != c.OldMode.Perm():
		c.Kind = ModeChanged
		cs.Changes = append(cs.Changes, c)
	}
	if !opaque {
		return nil
	}
	// Everything the folder held that the layer does not have again is
	// gone.
	entries, err := os.ReadDir(real)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, err := os.Lstat(filepath.Join(up, e.Name())); err == nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		cs.Changes = append(cs.Changes, Change{Path: c.Path + "/" + e.Name(), Kind: Deleted,
			Type: typeName(info.Mode()), OldSize: info.Size(), OldMode: info.Mode()})
	}
	return nil
}

// isWhiteout reports whether an upper entry marks a deletion: a character
// device 0:0, or (for overlays that cannot make devices) an empty file
// with the whiteout attribute.
func isWhiteout(p string, st *unix.Stat_t) bool {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		return st.Rdev == 0
	case unix.S_IFREG:
		return st.Size == 0 && xattr(p, "user.overlay.whiteout") != ""
	}
	return false
}

func xattr(p, name string) string {
	buf := make([]byte, 64)
	n, err := unix.Lgetxattr(p, name, buf)
	if err != nil || n < 0 {
		return ""
	}
	if n == 0 {
		return "\x00" // present and empty
	}
	return string(buf[:n])
}

// sameContent compares two regular files byte for byte.
func sameContent(a, b string, sizeA, sizeB int64) (bool, error) {
	if sizeA != sizeB {
		return false, nil
	}
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea == io.EOF || ea == io.ErrUnexpectedEOF {
			return eb == ea, nil
		}
		if ea != nil {
			return false, ea
		}
		if eb != nil {
			return false, eb
		}
	}
}

// fileMode converts a stat mode into an fs.FileMode.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// userXattrs returns a file's user extended attributes, less the
// overlay's own.
func userXattrs(p string) map[string][]byte {
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(p, buf)
	if err != nil || n <= 0 {
		return nil
	}
	out := map[string][]byte{}
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if !strings.HasPrefix(name, "user.") || strings.HasPrefix(name, "user.overlay.") {
			continue
		}
		val := make([]byte, 64<<10)
		m, err := unix.Lgetxattr(p, name, val)
		if err != nil || m < 0 {
			continue
		}
		out[name] = val[:m]
	}
	return out
}
