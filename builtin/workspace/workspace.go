// Package workspace confines file access to one directory, the workspace
// of a tool call. Every operation goes through Go's os.Root, so no name —
// relative, absolute, with "..", through symbolic links or link chains —
// reaches a file outside; on top of that, names with NUL bytes or a
// leading "~" are refused, regular files with several hard links are
// neither read nor appended to (the other link may be outside), and only
// regular files are read.
//
//	ws, err := workspace.Open(dir)
//	if err != nil { ... }
//	defer ws.Close()
//	data, err := ws.ReadFile("notes/todo.md", 1<<20)
//	if errors.Is(err, workspace.ErrOutside) { ... }
//
// Errors are *fs.PathError values whose Path is the name as given and
// whose Err is one of the sentinel errors below or the system's error
// (fs.ErrNotExist, ...).
package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

var (
	// ErrOutside: the name leads outside the workspace.
	ErrOutside = errors.New("path is outside the workspace")
	// ErrBadName: the name is empty or contains a NUL byte.
	ErrBadName = errors.New("invalid file name")
	// ErrNotRegular: the operation needs a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrHardLinked: a regular file with several hard links is not read or
	// appended to, since another of its names may be outside.
	ErrHardLinked = errors.New("file has several hard links and may be shared with a file outside the workspace")
	// ErrTooLarge: the file is larger than the limit given.
	ErrTooLarge = errors.New("file is too large")
)

// Workspace is an open workspace directory. Its methods are safe for
// concurrent use.
type Workspace struct {
	dir  string // absolute, cleaned, as given
	real string // dir with symbolic links resolved
	root *os.Root
}

// Open opens the workspace directory dir.
func Open(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	return &Workspace{dir: abs, real: real, root: root}, nil
}

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error { return w.root.Close() }

// Dir returns the workspace directory as given to Open, made absolute.
func (w *Workspace) Dir() string { return w.dir }

// Root returns the os.Root all access goes through.
func (w *Workspace) Root() *os.Root { return w.root }

// Rel turns a name given by a caller into a name relative to the
// workspace. Relative names are kept as they are (".." and symbolic links
// are resolved by os.Root when the name is used, the way the kernel does);
// absolute names are accepted when they lie under the workspace. It does
// not touch the file system.
func (w *Workspace) Rel(name string) (string, error) {
	if name == "" {
		return "", &fs.PathError{Op: "resolve", Path: name, Err: fmt.Errorf("%w: empty name", ErrBadName)}
	}
	if strings.IndexByte(name, 0) >= 0 {
		return "", &fs.PathError{Op: "resolve", Path: name, Err: fmt.Errorf("%w: contains a NUL byte", ErrBadName)}
	}
	if name == "~" || strings.HasPrefix(name, "~/") || strings.HasPrefix(name, "~"+string(filepath.Separator)) {
		return "", &fs.PathError{Op: "resolve", Path: name, Err: fmt.Errorf("%w: ~ is the home directory; give a path relative to the workspace", ErrOutside)}
	}
	rel := name
	if filepath.IsAbs(name) || filepath.VolumeName(name) != "" {
		var ok bool
		rel, ok = w.under(name)
		if !ok {
			return "", &fs.PathError{Op: "resolve", Path: name, Err: ErrOutside}
		}
	}
	if c := filepath.Clean(rel); c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)) {
		return "", &fs.PathError{Op: "resolve", Path: name, Err: ErrOutside}
	}
	return rel, nil
}

// under returns the part of the absolute name p below the workspace.
func (w *Workspace) under(p string) (string, bool) {
	for _, base := range []string{w.dir, w.real} {
		if p == base || filepath.Clean(p) == base {
			return ".", true
		}
		prefix := base
		if !strings.HasSuffix(prefix, string(filepath.Separator)) {
			prefix += string(filepath.Separator)
		}
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			if rest == "" {
				rest = "."
			}
			return rest, true
		}
	}
	return "", false
}

// pathErr rewrites an error of os.Root for the caller's name: escapes
// become ErrOutside, and the system error is kept for errors.Is.
func pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	if isEscape(err) {
		err = fmt.Errorf("%w (symbolic links must be relative and stay inside it)", ErrOutside)
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// isEscape reports whether err is os.Root's refusal of a path that leaves
// the root. os.Root does not export that error; its text is stable.
func isEscape(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// Stat returns information about the named file, following symbolic links
// that stay inside the workspace.
func (w *Workspace) Stat(name string) (fs.FileInfo, error) {
	rel, err := w.Rel(name)
	if err != nil {
		return nil, err
	}
	fi, err := w.root.Stat(rel)
	return fi, pathErr("stat", name, err)
}

// Lstat returns information about the named file without following a final
// symbolic link.
func (w *Workspace) Lstat(name string) (fs.FileInfo, error) {
	rel, err := w.Rel(name)
	if err != nil {
		return nil, err
	}
	fi, err := w.root.Lstat(rel)
	return fi, pathErr("lstat", name, err)
}

// openRegular opens a regular file that has a single hard link.
func (w *Workspace) openRegular(op, name string, flag int) (*os.File, error) {
	rel, err := w.Rel(name)
	if err != nil {
		return nil, err
	}
	fi, err := w.root.Stat(rel)
	if err != nil {
		return nil, pathErr(op, name, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(fi))}
	}
	// O_NONBLOCK: if the file was swapped for a FIFO since the Stat, the
	// open does not hang; the checks below then refuse it.
	f, err := w.root.OpenFile(rel, flag|nonblock, 0)
	if err != nil {
		return nil, pathErr(op, name, err)
	}
	fi, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, pathErr(op, name, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(fi))}
	}
	if linkCount(fi) > 1 {
		f.Close()
		return nil, &fs.PathError{Op: op, Path: name, Err: ErrHardLinked}
	}
	return f, nil
}

func kind(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// Open opens a regular file for reading. The caller closes it.
func (w *Workspace) Open(name string) (*os.File, error) {
	return w.openRegular("open", name, os.O_RDONLY)
}

// ReadFile reads a regular file of at most limit bytes (no limit if limit
// is negative).
func (w *Workspace) ReadFile(name string, limit int64) ([]byte, error) {
	f, err := w.openRegular("read", name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, pathErr("read", name, err)
	}
	if limit >= 0 && fi.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, fi.Size(), limit)}
	}
	r := io.Reader(f)
	if limit >= 0 {
		r = io.LimitReader(f, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, pathErr("read", name, err)
	}
	if limit >= 0 && int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: limit %d", ErrTooLarge, limit)}
	}
	return data, nil
}

// WriteFile replaces the named file with data, creating missing parent
// directories. A symbolic link at the name is followed when it stays inside
// the workspace and refused otherwise. The new content is written to a
// temporary file that is then renamed over the target, so a file with
// several hard links gets a new identity instead of changing the other
// names. An existing file keeps its permissions.
func (w *Workspace) WriteFile(name string, data []byte) error {
	rel, err := w.Rel(name)
	if err != nil {
		return err
	}
	rel, err = w.followLinks(name, rel)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(rel)
	if base == "" || base == "." || base == ".." {
		return &fs.PathError{Op: "write", Path: name, Err: fmt.Errorf("%w: names a directory", ErrBadName)}
	}
	if dir != "" {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return pathErr("write", name, err)
		}
	}
	perm := fs.FileMode(0o644)
	if fi, err := w.root.Lstat(rel); err == nil {
		if fi.IsDir() {
			return &fs.PathError{Op: "write", Path: name, Err: fmt.Errorf("%w (a directory)", ErrNotRegular)}
		}
		if fi.Mode().IsRegular() {
			perm = fi.Mode().Perm()
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, ".lcp-write-"+hex.EncodeToString(rnd[:]))
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return pathErr("write", name, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = w.root.Rename(tmp, rel)
	}
	if werr != nil {
		_ = w.root.Remove(tmp)
		return pathErr("write", name, werr)
	}
	return nil
}

// followLinks resolves symbolic links at the last element of rel, refusing
// those that leave the workspace.
func (w *Workspace) followLinks(name, rel string) (string, error) {
	for range 8 {
		fi, err := w.root.Lstat(rel)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return rel, nil // missing or not a link; the write judges the rest
		}
		target, err := w.root.Readlink(rel)
		if err != nil {
			return "", pathErr("write", name, err)
		}
		if filepath.IsAbs(target) {
			return "", &fs.PathError{Op: "write", Path: name, Err: fmt.Errorf("%w (symbolic links must be relative and stay inside it)", ErrOutside)}
		}
		rel = filepath.Join(filepath.Dir(rel), target)
		if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", &fs.PathError{Op: "write", Path: name, Err: fmt.Errorf("%w (a symbolic link leads out)", ErrOutside)}
		}
	}
	return "", &fs.PathError{Op: "write", Path: name, Err: errors.New("too many levels of symbolic links")}
}

// AppendFile appends data to the named regular file, creating it (and its
// parent directories) when missing.
func (w *Workspace) AppendFile(name string, data []byte) error {
	rel, err := w.Rel(name)
	if err != nil {
		return err
	}
	if _, err := w.root.Lstat(rel); errors.Is(err, fs.ErrNotExist) {
		if dir := filepath.Dir(rel); dir != "." {
			if err := w.root.MkdirAll(dir, 0o755); err != nil {
				return pathErr("append", name, err)
			}
		}
		f, err := w.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return pathErr("append", name, err)
		}
		if !errors.Is(err, fs.ErrExist) {
			return pathErr("append", name, err)
		}
	}
	f, err := w.openRegular("append", name, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return pathErr("append", name, err)
}

// ReadDir lists the named directory, sorted by name.
func (w *Workspace) ReadDir(name string) ([]fs.DirEntry, error) {
	rel, err := w.Rel(name)
	if err != nil {
		return nil, err
	}
	f, err := w.root.Open(rel)
	if err != nil {
		return nil, pathErr("readdir", name, err)
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, pathErr("readdir", name, err)
	}
	sortEntries(entries)
	return entries, nil
}

// Sub opens the named directory as a file system confined to it, for
// walking. Symbolic links in it are not followed by fs.WalkDir.
func (w *Workspace) Sub(name string) (fs.FS, func() error, error) {
	rel, err := w.Rel(name)
	if err != nil {
		return nil, nil, err
	}
	sub, err := w.root.OpenRoot(rel)
	if err != nil {
		return nil, nil, pathErr("open", name, err)
	}
	return sub.FS(), sub.Close, nil
}

// Display returns name relative to the workspace, cleaned and with forward
// slashes, for messages and listings.
func (w *Workspace) Display(name string) string {
	rel, err := w.Rel(name)
	if err != nil {
		return name
	}
	return filepath.ToSlash(filepath.Clean(rel))
}

// Resolve returns the name's path relative to the workspace with every
// symbolic link on the way resolved, the way the kernel resolves it from
// inside the workspace; missing components are kept as given. It is for
// judging where a write lands (a link named "hooks" that points into
// .git/hooks lands in .git); a link that leads out is ErrOutside.
func (w *Workspace) Resolve(name string) (string, error) {
	rel, err := w.Rel(name)
	if err != nil {
		return "", err
	}
	parts := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	var done []string
	for hops := 0; len(parts) > 0; {
		part := parts[0]
		parts = parts[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", &fs.PathError{Op: "resolve", Path: name, Err: ErrOutside}
			}
			done = done[:len(done)-1]
			continue
		}
		cur := filepath.Join(append(done, part)...)
		fi, err := w.root.Lstat(cur)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, part)
			continue
		}
		if hops++; hops > 40 {
			return "", &fs.PathError{Op: "resolve", Path: name, Err: errors.New("too many levels of symbolic links")}
		}
		target, err := w.root.Readlink(cur)
		if err != nil {
			return "", pathErr("resolve", name, err)
		}
		if filepath.IsAbs(target) {
			inside, ok := w.under(target)
			if !ok {
				return "", &fs.PathError{Op: "resolve", Path: name, Err: fmt.Errorf("%w (a symbolic link leads out)", ErrOutside)}
			}
			done = nil
			target = inside
		}
		parts = append(strings.Split(filepath.ToSlash(target), "/"), parts...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return filepath.Join(done...), nil
}
