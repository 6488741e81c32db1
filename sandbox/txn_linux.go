package sandbox

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// crashPoint, when set (by tests only), is called at each numbered point
// of an apply transaction; a test stops the transaction there by
// panicking, as a crash would.
var crashPoint func(n int)

func crash(n int) {
	if crashPoint != nil {
		crashPoint(n)
	}
}

// Apply applies the changes for which which returns true as one
// transaction: all of them or none. Every new content is first staged
// (synced) in a staging folder at the workspace's top, the steps are
// journaled in lcp's state folder (StateDir), and only then are entries
// renamed into place: an existing entry is exchanged with its new
// version (renameat2 RENAME_EXCHANGE), so that it is never removed before
// its replacement is there. A conflict (a path that changed in the
// workspace since the run began, or an entry that appeared where the run
// made a new one) or an error before the first rename leaves the
// workspace as it was, with every selected change in the Outcome as
// conflicting, failed or withheld; an error during the renames undoes the
// ones done. A crash is completed by Recover, or by the next Apply in
// the workspace. Calls for one workspace
// never interleave. Files the changes create are recorded in l, when not
// nil. Special files and times of files with other links are never
// applied; they are reported as failed and do not stop the rest.
func (cs *ChangeSet) Apply(which func(*Change) bool, l *Ledger) *Outcome {
	out := &Outcome{}
	var sel []Change
	var deletions []Change
	for _, c := range cs.Changes {
		switch {
		case !which(&c):
		case c.Kind == Skipped:
			out.Failed = append(out.Failed, Failure{c, errors.New("special files are not applied")})
		case c.Kind == Touched && c.nlink > 1:
			out.Failed = append(out.Failed, Failure{c, errors.New("the file has other hard links; its times are kept")})
		case c.Kind == Deleted:
			deletions = append(deletions, c) // after the additions, deepest first
		default:
			sel = append(sel, c)
		}
	}
	slices.Reverse(deletions)
	sel = append(sel, deletions...)
	if len(sel) == 0 {
		return out
	}
	wsfd, err := unix.Open(cs.Workspace, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return out.withhold(sel, fmt.Errorf("workspace %s: %w", cs.Workspace, err))
	}
	defer unix.Close(wsfd)
	lockfd, err := unix.Open(cs.Workspace, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		defer unix.Close(lockfd)
		defer lockWorkspace(cs.Workspace, lockfd)()
	}
	// What a dead lcp left unfinished here is completed first; what
	// cannot be is an error before anything changes.
	if !recoveredHere(cs.Workspace) {
		var r Recovery
		if recoverLocked(&r, cs.Workspace, wsfd); len(r.Errors) > 0 {
			return out.withhold(sel, fmt.Errorf("an interrupted apply in this workspace awaits recovery: %w", errors.Join(r.Errors...)))
		}
		markRecovered(cs.Workspace)
	}
	a := &applier{cs: cs, ws: wsfd, since: cs.Began.Add(-conflictSlack), ledger: l}
	t, err := a.begin()
	if err != nil {
		return out.withhold(sel, err)
	}
	defer t.close()
	t.sel = sel
	// Stage everything; any conflict or error leaves the workspace alone.
	var conflicts []Change
	var failed []Failure
	for i, c := range sel {
		err := t.prepare(i, c)
		switch {
		case errors.Is(err, errConflict):
			conflicts = append(conflicts, c)
		case err != nil:
			failed = append(failed, Failure{c, err})
		}
		if len(failed) > 0 {
			break // the rest is withheld: a full disk stays full
		}
	}
	if len(conflicts) > 0 || len(failed) > 0 {
		t.discard()
		return out.abort(sel, conflicts, failed)
	}
	crash(0)
	// One step is atomic by itself (an exchange or a rename): it needs
	// no journal, unless the exchange falls back to two renames.
	if len(t.j.Ops) > 1 {
		if err := t.journal(); err != nil {
			t.discard()
			return out.withhold(sel, err)
		}
	}
	crash(1)
	for i := range t.j.Ops {
		op := &t.j.Ops[i]
		if err := t.do(op, true); err != nil {
			c := sel[op.change]
			t.rollback(i)
			if errors.Is(err, errConflict) {
				return out.abort(sel, []Change{c}, nil)
			}
			return out.abort(sel, nil, []Failure{{c, err}})
		}
		crash(2 + i)
	}
	n := 2 + len(t.j.Ops)
	if err := t.syncTouched(); err != nil {
		// Every step is done; only durability is in doubt. The journal
		// stays, so that recovery checks the set again.
		out.Applied = append(out.Applied, sel...)
		a.record(sel)
		return out
	}
	crash(n)
	_ = removeAllAt(t.ws, t.j.Staging)
	crash(n + 1)
	if t.j.path != "" {
		_ = os.Remove(t.j.path)
	}
	out.Applied = append(out.Applied, sel...)
	a.record(sel)
	return out
}

// withhold reports every change of sel as not applied for err.
func (o *Outcome) withhold(sel []Change, err error) *Outcome {
	for _, c := range sel {
		o.Failed = append(o.Failed, Failure{c, err})
	}
	return o
}

// abort reports a transaction stopped by conflicts or failures: the
// other changes of the set are withheld.
func (o *Outcome) abort(sel, conflicts []Change, failed []Failure) *Outcome {
	o.Conflicts = append(o.Conflicts, conflicts...)
	o.Failed = append(o.Failed, failed...)
	for _, c := range sel {
		if !slices.ContainsFunc(conflicts, func(x Change) bool { return x.Path == c.Path }) &&
			!slices.ContainsFunc(failed, func(x Failure) bool { return x.Change.Path == c.Path }) {
			o.Withheld = append(o.Withheld, c)
		}
	}
	return o
}

// record updates the ledger with what the set created and deleted.
func (a *applier) record(sel []Change) {
	if a.ledger == nil {
		return
	}
	for _, c := range sel {
		full := a.cs.Workspace + "/" + c.Path
		switch {
		case c.Kind == Deleted:
			a.ledger.Forget(full)
		case c.Type == "file" && (c.Kind == Added || c.Owned):
			a.ledger.Record(full)
		}
	}
}

// txn is an apply transaction under way.
type txn struct {
	a       *applier
	ws      int // the workspace
	stage   int // the staging folder
	staging string
	j       journal
	sel     []Change        // the changes, by step's change index
	touched map[string]bool // folders (relative; "" the top) to sync
	nosync  bool
}

// journal writes the transaction's journal, once.
func (t *txn) journal() error {
	if t.j.path != "" {
		return nil
	}
	if err := t.sync(t.staging); err != nil {
		return fmt.Errorf("sync the staged changes: %w", err)
	}
	return t.j.write(!t.nosync, t.a.cs.Workspace+"/"+t.staging)
}

// recovered are the workspaces this process recovered (once is enough:
// what a process that dies later leaves is the next process's to do).
var (
	recoveredMu sync.Mutex
	recovered   = map[string]bool{}
)

func recoveredHere(ws string) bool {
	recoveredMu.Lock()
	defer recoveredMu.Unlock()
	return recovered[ws]
}

func markRecovered(ws string) {
	recoveredMu.Lock()
	defer recoveredMu.Unlock()
	recovered[ws] = true
}

// selfStart is this process's start time, read once.
var selfStart = sync.OnceValues(func() (uint64, error) { return procStart(os.Getpid()) })

// begin creates the transaction's staging folder.
func (a *applier) begin() (*txn, error) {
	start, err := selfStart()
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("%s%d-%d-%x", stagingPrefix, os.Getpid(), start, b)
	if err := unix.Mkdirat(a.ws, name, 0o700); err != nil {
		return nil, fmt.Errorf("staging folder %s in the workspace: %w", name, err)
	}
	fd, err := unix.Openat(a.ws, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Unlinkat(a.ws, name, unix.AT_REMOVEDIR)
		return nil, fmt.Errorf("staging folder %s: %w", name, err)
	}
	t := &txn{a: a, ws: a.ws, stage: fd, staging: name, touched: map[string]bool{}, nosync: a.cs.NoSync}
	t.j = journal{Version: journalVersion, Workspace: a.cs.Workspace, Staging: name, PID: os.Getpid(), Start: start}
	return t, nil
}

func (t *txn) close() { unix.Close(t.stage) }

// discard removes the staging folder of a transaction that changed
// nothing.
func (t *txn) discard() { _ = removeAllAt(t.ws, t.staging) }

// prepare checks change i and stages what it needs.
func (t *txn) prepare(i int, c Change) error {
	a := t.a
	stage := strconv.Itoa(i)
	op := txnOp{Path: c.Path, Stage: stage, change: i}
	switch {
	case c.Kind == Added:
		if err := t.free(c); err != nil {
			return err
		}
		if c.Type == "folder" {
			op.Kind, op.Stage, op.Mode = opMkdir, "", newMode(c.Mode)
			break
		}
		ino, err := t.stageNew(c, stage, -1, -1)
		if err != nil {
			return err
		}
		op.Kind, op.Ino = opAdd, ino
	case c.Kind == Deleted:
		dir, st, err := t.existing(c)
		if errors.Is(err, unix.ENOENT) {
			return nil // its folder is gone already
		}
		if err != nil {
			return err
		}
		unix.Close(dir)
		op.Kind, op.Ino = opTrash, st.Ino
	case c.Type == "folder" && (c.Kind == Modified || c.Kind == ModeChanged):
		dir, _, err := a.unchanged(c)
		if err != nil {
			return err
		}
		unix.Close(dir)
		op.Kind, op.Stage, op.Mode = opChmod, "", uint32(c.Mode.Perm())
	case c.Kind == Touched:
		var st unix.Stat_t
		if err := unix.Lstat(c.upper, &st); err != nil {
			return err
		}
		op.Kind, op.Stage, op.Atime, op.Mtime = opTimes, "", st.Atim.Nano(), st.Mtim.Nano()
	case c.Kind == Modified || c.Kind == ModeChanged || c.Kind == Replaced || c.Kind == AttrChanged:
		dir, st, err := t.existing(c)
		if err != nil {
			return err
		}
		unix.Close(dir)
		ino, err := t.stageNew(c, stage, int(st.Uid), int(st.Gid))
		if err != nil {
			return err
		}
		op.Kind, op.Ino = opSwap, ino
	default:
		return fmt.Errorf("unknown change %q", c.Kind)
	}
	t.j.Ops = append(t.j.Ops, op)
	return nil
}

// existing opens the folder of the entry c changes or deletes, checks that
// nobody changed the entry since the run began (its whole tree, for a
// folder) and that it is on the staging filesystem, and returns the folder
// (for the caller to close) and the entry's status.
func (t *txn) existing(c Change) (dir int, st unix.Stat_t, err error) {
	dir, name, err := t.a.unchanged(c)
	if err != nil {
		return -1, st, err
	}
	err = unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		err = checkTree(dir, name, t.a.since)
	}
	if err == nil {
		err = t.sameFS(&st, c.Path)
	}
	if err != nil {
		unix.Close(dir)
		return -1, st, err
	}
	return dir, st, nil
}

// free checks that the path of a new entry is still free (or, for a
// folder, a folder made meanwhile).
func (t *txn) free(c Change) error {
	dir, name, err := t.a.parent(c.Path, false)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil // its folder is new too
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	err = unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return err
	case c.Type == "folder" && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return nil
	}
	return errConflict
}

// sameFS refuses an entry on another filesystem than the staging folder:
// it could not be renamed atomically.
func (t *txn) sameFS(st *unix.Stat_t, p string) error {
	var sst unix.Stat_t
	if err := unix.Fstat(t.stage, &sst); err != nil {
		return err
	}
	if sst.Dev != st.Dev {
		return fmt.Errorf("%s is on another filesystem than the workspace's top; lcp applies changes there only by atomic rename", p)
	}
	return nil
}

// stageNew creates the new version of c in the staging folder: a copy of
// the layer's file (synced), a link or an empty folder. It returns the
// staged entry's inode.
func (t *txn) stageNew(c Change, stage string, uid, gid int) (uint64, error) {
	a := t.a
	mode := uint32(c.Mode.Perm())
	if c.Kind == Added {
		mode = newMode(c.Mode)
	}
	switch c.Type {
	case "folder":
		if err := unix.Mkdirat(t.stage, stage, mode); err != nil {
			return 0, err
		}
		_ = unix.Fchmodat(t.stage, stage, mode, 0)
		a.chown(t.stage, stage, uid, gid)
	case "link":
		if err := unix.Symlinkat(c.Target, t.stage, stage); err != nil {
			return 0, err
		}
		a.chown(t.stage, stage, uid, gid)
	default:
		if err := t.copyIn(c, stage, mode, uid, gid); err != nil {
			return 0, err
		}
	}
	var st unix.Stat_t
	if err := unix.Fstatat(t.stage, stage, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// copyIn writes the layer's content of c to stage, with mode and the
// layer's times, owned by uid:gid (-1: the workspace's owner for new
// files, when lcp may set it), and syncs it.
func (t *txn) copyIn(c Change, stage string, mode uint32, uid, gid int) error {
	src, err := os.Open(c.upper)
	if err != nil {
		return err
	}
	defer src.Close()
	fd, err := unix.Openat(t.stage, stage, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	dst := os.NewFile(uintptr(fd), stage)
	_, err = io.Copy(dst, src)
	if err == nil {
		err = unix.Fchmod(fd, mode) // never set-uid: the layer is the sandbox's
	}
	if err == nil {
		for k, v := range userXattrs(c.upper) {
			if err = unix.Fsetxattr(fd, k, v, 0); err != nil {
				err = fmt.Errorf("extended attribute %s: %w", k, err)
				break
			}
		}
	}
	if err == nil {
		t.a.fchown(fd, uid, gid)
		var st unix.Stat_t
		if unix.Fstat(int(src.Fd()), &st) == nil {
			err = unix.UtimesNanoAt(t.stage, stage, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
		}
	}
	if err == nil && !t.nosync {
		err = unix.Fdatasync(fd)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}

// do carries out one step; live steps (not recovery's) check again that
// the entry did not change since the run began, and keep how to undo
// themselves.
func (t *txn) do(op *txnOp, live bool) error {
	dir, name, err := t.a.parent(op.Path, op.Kind == opAdd || op.Kind == opMkdir)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	t.touched[path.Dir(op.Path)] = true
	if live && (op.Kind == opSwap || op.Kind == opTrash) {
		changed, err := t.a.changedSince(dir, name, t.sel[op.change])
		if err != nil {
			return err
		}
		if changed {
			return errConflict
		}
	}
	switch op.Kind {
	case opMkdir:
		err := unix.Mkdirat(dir, name, op.Mode)
		if errors.Is(err, unix.EEXIST) {
			var st unix.Stat_t
			if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				return nil // made meanwhile: the new entries go inside
			}
			return errConflict
		}
		if err != nil {
			return err
		}
		_ = unix.Fchmodat(dir, name, op.Mode, 0)
		t.a.chown(dir, name, -1, -1)
		t.touched[op.Path] = true
		op.undo = func() error {
			return t.at(op.Path, func(d int, n string) error { return unix.Unlinkat(d, n, unix.AT_REMOVEDIR) })
		}
	case opAdd:
		err := unix.Renameat2(t.stage, op.Stage, dir, name, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EEXIST) {
			return errConflict
		}
		if err != nil {
			return err
		}
		op.undo = func() error {
			return t.at(op.Path, func(d int, n string) error { return unix.Renameat2(d, n, t.stage, op.Stage, unix.RENAME_NOREPLACE) })
		}
	case opSwap:
		if err := t.swap(dir, name, op.Stage); err != nil {
			return err
		}
		op.undo = func() error {
			return t.at(op.Path, func(d int, n string) error { return t.swap(d, n, op.Stage) })
		}
	case opTrash:
		if err := unix.Renameat2(dir, name, t.stage, op.Stage, unix.RENAME_NOREPLACE); err != nil {
			return err
		}
		op.undo = func() error {
			return t.at(op.Path, func(d int, n string) error { return unix.Renameat2(t.stage, op.Stage, d, n, unix.RENAME_NOREPLACE) })
		}
	case opChmod:
		var st unix.Stat_t
		if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
		if err := unix.Fchmodat(dir, name, op.Mode, 0); err != nil {
			return err
		}
		old := st.Mode & 0o7777
		op.undo = func() error { return t.at(op.Path, func(d int, n string) error { return unix.Fchmodat(d, n, old, 0) }) }
	case opTimes:
		var st unix.Stat_t
		if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
		ts := []unix.Timespec{unix.NsecToTimespec(op.Atime), unix.NsecToTimespec(op.Mtime)}
		if err := unix.UtimesNanoAt(dir, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
		old := []unix.Timespec{st.Atim, st.Mtim}
		op.undo = func() error {
			return t.at(op.Path, func(d int, n string) error { return unix.UtimesNanoAt(d, n, old, unix.AT_SYMLINK_NOFOLLOW) })
		}
	default:
		return fmt.Errorf("unknown step %q", op.Kind)
	}
	return nil
}

// at runs f on the folder and name of p.
func (t *txn) at(p string, f func(dir int, name string) error) error {
	dir, name, err := t.a.parent(p, false)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	return f(dir, name)
}

// swap exchanges name in dir with the staged entry stage. Without
// RENAME_EXCHANGE (EINVAL), the old entry is first moved into the staging
// folder as stage.old and the new one renamed into the free name: the
// journal covers the moment between.
func (t *txn) swap(dir int, name, stage string) error {
	err := unix.Renameat2(t.stage, stage, dir, name, unix.RENAME_EXCHANGE)
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	if err := t.journal(); err != nil {
		return err
	}
	if err := unix.Renameat2(dir, name, t.stage, stage+".old", unix.RENAME_NOREPLACE); err != nil {
		return err
	}
	if err := unix.Renameat2(t.stage, stage, dir, name, unix.RENAME_NOREPLACE); err != nil {
		_ = unix.Renameat2(t.stage, stage+".old", dir, name, unix.RENAME_NOREPLACE)
		return err
	}
	return unix.Renameat2(t.stage, stage+".old", t.stage, stage, unix.RENAME_NOREPLACE)
}

// rollback undoes steps [0, n) in reverse, then removes the staging
// folder and the journal.
func (t *txn) rollback(n int) {
	for i := n - 1; i >= 0; i-- {
		if u := t.j.Ops[i].undo; u != nil {
			_ = u()
		}
	}
	_ = t.syncTouched()
	t.discard()
	if t.j.path != "" {
		_ = os.Remove(t.j.path)
	}
}

// sync syncs a folder of the workspace (relative; "" the top, else a
// staging folder name).
func (t *txn) sync(rel string) error {
	if t.nosync {
		return nil
	}
	fd, err := unix.Openat2(t.ws, orDot(rel), &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}

// syncTouched syncs every folder the steps changed (the staging
// folder's side of a rename is in the same filesystem transaction; what
// it holds then is only thrown away).
func (t *txn) syncTouched() error {
	var dirs []string
	for d := range t.touched {
		if d == "." {
			d = ""
		}
		dirs = append(dirs, d)
	}
	var first error
	for _, d := range dirs {
		if err := t.sync(d); err != nil && !errors.Is(err, unix.ENOENT) && first == nil {
			first = err
		}
	}
	return first
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// checkTree reports errConflict when an entry of the folder name in dir
// changed after since (a deletion would lose it), following no link.
func checkTree(dir int, name string, since time.Time) error {
	how := &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(dir, name, how)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if err := checkTree(fd, n, since); err != nil {
				return err
			}
		} else if time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)).After(since) {
			return errConflict
		}
	}
	return nil
}

// removeAllAt removes name in dir with all it holds, following no link.
func removeAllAt(dir int, name string) error {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		return unix.Unlinkat(dir, name, 0)
	}
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	names, err := f.Readdirnames(-1)
	for _, n := range names {
		if rerr := removeAllAt(fd, n); rerr != nil && err == nil {
			err = rerr
		}
	}
	f.Close()
	if err != nil {
		return err
	}
	return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
}

// newMode is the mode a new entry gets: the run's mode less the bits the
// process's umask clears (a new 0777 folder becomes 0755 under umask 022).
func newMode(m os.FileMode) uint32 {
	return uint32(m.Perm()) &^ umask()
}

// umask reads the process's umask without changing it.
func umask() uint32 {
	data, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if u, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return uint32(u)
				}
			}
		}
	}
	return 0o022
}

// procStart returns the start time (clock ticks since boot) of a
// process: with its pid, it names the process for good.
func procStart(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// alive reports whether the process pid that started at start still
// runs; a variable so that tests can declare their own process dead.
var alive = func(pid int, start uint64) bool {
	s, err := procStart(pid)
	return err == nil && s == start
}
