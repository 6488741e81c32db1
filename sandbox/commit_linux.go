package sandbox

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// conflictSlack widens the window in which a change of the real file
// counts as made during the run: file times come from a coarse clock that
// may lag the time the run began by a tick.
const conflictSlack = 20 * time.Millisecond

// workspace locks: one per workspace in this process, plus flock on the
// workspace folder for other lcp processes.
var (
	wsLocksMu sync.Mutex
	wsLocks   = map[string]*sync.Mutex{}
)

func lockWorkspace(ws string, fd int) func() {
	wsLocksMu.Lock()
	mu := wsLocks[ws]
	if mu == nil {
		mu = &sync.Mutex{}
		wsLocks[ws] = mu
	}
	wsLocksMu.Unlock()
	mu.Lock()
	_ = unix.Flock(fd, unix.LOCK_EX)
	return func() {
		_ = unix.Flock(fd, unix.LOCK_UN)
		mu.Unlock()
	}
}

// Apply applies the changes for which which returns true, in path order,
// each atomically: a file gets a new inode renamed into place (never a
// write through an existing inode, which may have hard links outside),
// a new path never replaces one that appeared meanwhile, and a path that
// changed in the workspace since the run began is a conflict. Calls for
// one workspace never interleave. Files the changes create are recorded
// in l, when not nil.
func (cs *ChangeSet) Apply(which func(*Change) bool, l *Ledger) *Outcome {
	out := &Outcome{}
	wsfd, err := unix.Open(cs.Workspace, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		for _, c := range cs.Changes {
			if which(&c) {
				out.Failed = append(out.Failed, Failure{c, err})
			}
		}
		return out
	}
	defer unix.Close(wsfd)
	lockfd, err := unix.Open(cs.Workspace, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		defer unix.Close(lockfd)
		defer lockWorkspace(cs.Workspace, lockfd)()
	}
	a := &applier{cs: cs, ws: wsfd, since: cs.Began.Add(-conflictSlack), ledger: l}
	var deletions []Change
	for _, c := range cs.Changes {
		if !which(&c) {
			continue
		}
		if c.Kind == Deleted {
			deletions = append(deletions, c) // after the additions, deepest first
			continue
		}
		a.apply(c, out)
	}
	for i := len(deletions) - 1; i >= 0; i-- {
		a.apply(deletions[i], out)
	}
	return out
}

type applier struct {
	cs     *ChangeSet
	ws     int
	since  time.Time
	ledger *Ledger
}

var errConflict = errors.New("conflict")

func (a *applier) apply(c Change, out *Outcome) {
	var err error
	switch c.Kind {
	case Added:
		err = a.add(c)
	case Modified, ModeChanged:
		if c.Type == "folder" {
			err = a.chmodDir(c)
		} else {
			err = a.replace(c)
		}
	case Replaced:
		if err = a.remove(c); err == nil {
			err = a.add(c)
		}
	case Deleted:
		err = a.remove(c)
	case Touched:
		err = a.touch(c)
	case Skipped:
		err = errors.New("special files are not applied")
	default:
		err = fmt.Errorf("unknown change %q", c.Kind)
	}
	switch {
	case errors.Is(err, errConflict):
		out.Conflicts = append(out.Conflicts, c)
	case err != nil:
		out.Failed = append(out.Failed, Failure{c, err})
	default:
		out.Applied = append(out.Applied, c)
		full := a.cs.Workspace + "/" + c.Path
		if a.ledger != nil && c.Kind != Deleted && c.Type == "file" && (c.Kind == Added || c.Owned) {
			a.ledger.Record(full)
		} else if a.ledger != nil && c.Kind == Deleted {
			a.ledger.Forget(full)
		}
	}
}

// parent opens the folder of p inside the workspace without following
// any symbolic link, creating missing folders (as the layer has them)
// when create is set. It returns the folder and the last name.
func (a *applier) parent(p string, create bool) (int, string, error) {
	dir, name := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		fd, err := unix.Dup(a.ws)
		return fd, name, err
	}
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(a.ws, dir, how)
	if err == nil || !create || !errors.Is(err, unix.ENOENT) {
		if err != nil {
			err = fmt.Errorf("folder %s: %w", dir, err)
		}
		return fd, name, err
	}
	// Create the missing folders one by one, each beneath the last.
	cur, err := unix.Dup(a.ws)
	if err != nil {
		return -1, "", err
	}
	for _, part := range strings.Split(dir, "/") {
		mode := uint32(0o755)
		if fi, err := os.Lstat(a.cs.upperOf(p, part)); err == nil {
			mode = uint32(fi.Mode().Perm())
		}
		if err := unix.Mkdirat(cur, part, mode); err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(cur)
			return -1, "", fmt.Errorf("mkdir %s: %w", part, err)
		}
		next, err := unix.Openat2(cur, part, how)
		unix.Close(cur)
		if err != nil {
			return -1, "", fmt.Errorf("folder %s: %w", part, err)
		}
		cur = next
	}
	return cur, name, nil
}

// upperOf is a best effort at the upper layer's copy of a folder on the
// way to p (for its permissions).
func (cs *ChangeSet) upperOf(p, part string) string {
	for _, c := range cs.Changes {
		if c.Type == "folder" && path.Base(c.Path) == part && strings.HasPrefix(p, c.Path+"/") {
			return c.upper
		}
	}
	return ""
}

// unchanged opens the folder of c's entry in the workspace and returns
// it with the entry's name, or errConflict when the entry changed after
// the run began.
func (a *applier) unchanged(c Change) (dir int, name string, err error) {
	dir, name, err = a.parent(c.Path, false)
	if err != nil {
		return -1, "", err
	}
	changed, err := a.changedSince(dir, name, c)
	if err == nil && changed {
		err = errConflict
	}
	if err != nil {
		unix.Close(dir)
		return -1, "", err
	}
	return dir, name, nil
}

// changedSince reports whether the entry name in dir changed after the
// run began (or is not the type the run saw).
func (a *applier) changedSince(dir int, name string, c Change) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return true, nil // gone meanwhile
		}
		return false, err
	}
	if typeName(fileMode(st.Mode)) != typeName(c.OldMode) {
		return true, nil
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		// A folder's own times change with every entry added or removed,
		// lcp's own included; what a deletion would lose is checked entry
		// by entry (removeTree).
		return false, nil
	}
	ctime := time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	if !ctime.After(a.since) {
		return false, nil
	}
	// Within the slack before the run began, or after it: changed, unless
	// the session's own previous run left it so before this run began (a
	// quick run after another that wrote the file).
	id := fileID{dev: st.Dev, ino: st.Ino, size: st.Size, ctime: st.Ctim.Nano()}
	return !a.ledger.settled(a.cs.Workspace+"/"+c.Path, id, a.cs.Began), nil
}

// add creates a new file, folder or link; it never replaces what exists.
func (a *applier) add(c Change) error {
	dir, name, err := a.parent(c.Path, true)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	switch c.Type {
	case "folder":
		err := unix.Mkdirat(dir, name, uint32(c.Mode.Perm()))
		if errors.Is(err, unix.EEXIST) {
			var st unix.Stat_t
			if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				return nil // made meanwhile: the new entries go inside
			}
			return errConflict
		}
		if err == nil {
			_ = unix.Fchmodat(dir, name, uint32(c.Mode.Perm()), 0)
			a.chown(dir, name, -1, -1)
		}
		return err
	case "link":
		tmp := tempName()
		if err := unix.Symlinkat(c.Target, dir, tmp); err != nil {
			return err
		}
		a.chown(dir, tmp, -1, -1)
		return a.place(dir, tmp, name, true)
	}
	tmp, err := a.copyIn(dir, c, -1, -1)
	if err != nil {
		return err
	}
	return a.place(dir, tmp, name, true)
}

// replace gives an existing file its new content and mode as a new inode.
func (a *applier) replace(c Change) error {
	dir, name, err := a.unchanged(c)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	tmp, err := a.copyIn(dir, c, int(st.Uid), int(st.Gid))
	if err != nil {
		return err
	}
	return a.place(dir, tmp, name, false)
}

// place renames tmp to name; noReplace refuses to replace an entry that
// appeared meanwhile.
func (a *applier) place(dir int, tmp, name string, noReplace bool) error {
	var flags uint
	if noReplace {
		flags = unix.RENAME_NOREPLACE
	}
	err := unix.Renameat2(dir, tmp, dir, name, flags)
	if err != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
		if errors.Is(err, unix.EEXIST) {
			return errConflict
		}
	}
	return err
}

// copyIn writes the layer's content of c to a new file in dir, with its
// mode and times, owned by uid:gid (-1: the workspace's owner for new
// files, when lcp may set it).
func (a *applier) copyIn(dir int, c Change, uid, gid int) (string, error) {
	src, err := os.Open(c.upper)
	if err != nil {
		return "", err
	}
	defer src.Close()
	tmp := tempName()
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return "", err
	}
	dst := os.NewFile(uintptr(fd), tmp)
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Chmod(c.Mode.Perm()) // never set-uid: the layer is the sandbox's
	}
	if err == nil {
		a.fchown(fd, uid, gid)
		var st unix.Stat_t
		if unix.Fstat(int(src.Fd()), &st) == nil {
			_ = unix.UtimesNanoAt(dir, tmp, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
		}
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
		return "", err
	}
	return tmp, nil
}

// remove deletes an existing file, link or folder (with its content).
func (a *applier) remove(c Change) error {
	dir, name, err := a.unchanged(c)
	if errors.Is(err, unix.ENOENT) {
		return nil // its folder is gone already
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if typeName(c.OldMode) != "folder" {
		return unix.Unlinkat(dir, name, 0)
	}
	return removeTree(dir, name, a.since)
}

// removeTree removes a folder and what it holds, beneath dir, following
// no link. Entries changed after since are kept (and the folders holding
// them): the result is then a conflict.
func removeTree(dir int, name string, since time.Time) error {
	how := &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(dir, name, how)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	names, err := f.Readdirnames(-1)
	conflict := false
	if err == nil {
		for _, n := range names {
			var st unix.Stat_t
			if err = unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				break
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				err = removeTree(fd, n, since)
			} else if time.Unix(st.Ctim.Sec, st.Ctim.Nsec).After(since) {
				err = errConflict
			} else {
				err = unix.Unlinkat(fd, n, 0)
			}
			if errors.Is(err, errConflict) {
				conflict, err = true, nil
			}
			if err != nil {
				break
			}
		}
	}
	f.Close()
	if err != nil {
		return err
	}
	if conflict {
		return errConflict
	}
	return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
}

func (a *applier) chmodDir(c Change) error {
	dir, name, err := a.unchanged(c)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	return unix.Fchmodat(dir, name, uint32(c.Mode.Perm()), 0)
}

// touch sets new times on a file with no other link (times of a file
// shared with a path outside the workspace are left alone).
func (a *applier) touch(c Change) error {
	if c.nlink > 1 {
		return errors.New("the file has other hard links; its times are kept")
	}
	dir, name, err := a.parent(c.Path, false)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	if err := unix.Lstat(c.upper, &st); err != nil {
		return err
	}
	return unix.UtimesNanoAt(dir, name, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
}

// chown gives a new entry the workspace owner's ids, when lcp is root.
func (a *applier) chown(dir int, name string, uid, gid int) {
	if uid < 0 {
		uid, gid = a.cs.owner[0], a.cs.owner[1]
	}
	if uid >= 0 {
		_ = unix.Fchownat(dir, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
	}
}

func (a *applier) fchown(fd, uid, gid int) {
	if uid < 0 {
		uid, gid = a.cs.owner[0], a.cs.owner[1]
	}
	if uid >= 0 {
		_ = unix.Fchown(fd, uid, gid)
	}
}

func tempName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf(".lcp-apply-%x", b)
}

func statID(path string) (fileID, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fileID{}, false
	}
	return fileID{dev: st.Dev, ino: st.Ino, size: st.Size, ctime: st.Ctim.Nano()}, true
}
