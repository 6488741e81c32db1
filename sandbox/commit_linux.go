package sandbox

import (
	"errors"
	"fmt"
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

// applier is one Apply call's view of the workspace.
type applier struct {
	cs     *ChangeSet
	ws     int
	since  time.Time
	ledger *Ledger
}

var errConflict = errors.New("conflict")

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
	ctime := time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
	if !ctime.After(a.since) {
		return false, nil
	}
	// Within the slack before the run began, or after it: changed, unless
	// the session's own previous run left it so before this run began (a
	// quick run after another that wrote the file).
	id := fileID{dev: st.Dev, ino: st.Ino, size: st.Size, ctime: st.Ctim.Nano()}
	return !a.ledger.settled(a.cs.Workspace+"/"+c.Path, id, a.cs.Began), nil
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

func statID(path string) (fileID, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fileID{}, false
	}
	return fileID{dev: st.Dev, ino: st.Ino, size: st.Size, ctime: st.Ctim.Nano()}, true
}
