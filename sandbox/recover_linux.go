package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Recover completes what dead lcp processes left unfinished in a
// workspace: a change set whose apply was interrupted after its journal
// was written is completed (rolled forward: every change of it had been
// checked and staged, and the workspace then holds the whole set), a
// staging folder without a journal is removed (its set never touched the
// workspace), and the copy-on-write layers of dead processes' runs are
// removed from the temporary folder. Entries of live processes are never
// touched. A journal that is corrupt or of another lcp version is left
// alone and reported as an error in the Recovery. Engines call it when
// they open a workspace.
func Recover(workspace string) (*Recovery, error) {
	r := &Recovery{}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return r, fmt.Errorf("recover %s: %w", workspace, err)
	}
	wsfd, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return r, fmt.Errorf("recover %s: %w", ws, err)
	}
	defer unix.Close(wsfd)
	if lockfd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		defer unix.Close(lockfd)
		defer lockWorkspace(ws, lockfd)()
	}
	recoverLocked(r, ws, wsfd)
	if len(r.Errors) == 0 {
		markRecovered(ws)
	}
	r.Removed = append(r.Removed, sweepLayers(&r.Errors)...)
	r.Removed = append(r.Removed, sweepGroups(&r.Errors)...)
	return r, errors.Join(r.Errors...)
}

// recoverLocked does Recover's work in the workspace ws (open as wsfd),
// whose lock the caller holds.
func recoverLocked(r *Recovery, ws string, wsfd int) {
	a := &applier{cs: &ChangeSet{Workspace: ws, owner: [2]int{-1, -1}}, ws: wsfd}
	journals, _ := filepath.Glob(strings.TrimSuffix(journalPath(ws, stagingPrefix), ".json") + "*.json")
	for _, p := range journals {
		j, err := readJournal(p)
		if err != nil {
			r.Errors = append(r.Errors, err)
			continue
		}
		if j.Workspace != ws || alive(j.PID, j.Start) {
			continue
		}
		if err := a.rollForward(j); err != nil {
			r.Errors = append(r.Errors, fmt.Errorf("complete the interrupted apply of %s: %w", ws, err))
			continue
		}
		r.Completed = append(r.Completed, fmt.Sprintf("%s: completed an interrupted apply of %d steps (lcp process %d)", ws, len(j.Ops), j.PID))
	}
	// Staging folders without a journal: their sets changed nothing.
	names, _ := readNames(ws)
	for _, n := range names {
		pid, start, ok := stagingOwner(n)
		if !ok || alive(pid, start) {
			continue
		}
		if _, err := os.Stat(journalPath(ws, n)); err == nil {
			continue // a journal this lcp could not read: left for a person
		}
		if j, err := readJournal(filepath.Join(ws, n, stagedJournal)); err == nil {
			if err := a.rollForward(j); err != nil {
				r.Errors = append(r.Errors, fmt.Errorf("complete the interrupted apply of %s: %w", ws, err))
			} else {
				r.Completed = append(r.Completed, fmt.Sprintf("%s: completed an interrupted apply of %d steps (lcp process %d)", ws, len(j.Ops), j.PID))
			}
			continue
		} else if !errors.Is(err, os.ErrNotExist) {
			r.Errors = append(r.Errors, err)
			continue
		}
		if err := removeAllAt(wsfd, n); err != nil {
			r.Errors = append(r.Errors, fmt.Errorf("remove stale staging folder %s: %w", filepath.Join(ws, n), err))
			continue
		}
		r.Removed = append(r.Removed, filepath.Join(ws, n))
	}
}

// Recovery says what Recover did.
type Recovery struct {
	// Completed describes each interrupted apply that was completed.
	Completed []string
	// Removed lists the stale staging folders and layers removed.
	Removed []string
	// Errors are what could not be recovered (also returned joined).
	Errors []error
}

// Empty reports whether there was nothing to recover.
func (r *Recovery) Empty() bool {
	return r == nil || len(r.Completed)+len(r.Removed)+len(r.Errors) == 0
}

// rollForward completes the steps of j that are not done yet, syncs,
// then removes the staging folder and the journal.
func (a *applier) rollForward(j *journal) error {
	fd, err := unix.Openat(a.ws, j.Staging, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		// Removed after the set was complete; only the journal was left.
		return os.Remove(j.path)
	}
	if err != nil {
		return fmt.Errorf("staging folder %s: %w", j.Staging, err)
	}
	defer unix.Close(fd)
	t := &txn{a: a, ws: a.ws, stage: fd, staging: j.Staging, j: *j, touched: map[string]bool{}}
	for i := range t.j.Ops {
		if err := t.redo(&t.j.Ops[i]); err != nil {
			return fmt.Errorf("%s %s: %w", t.j.Ops[i].Kind, t.j.Ops[i].Path, err)
		}
	}
	if err := t.syncTouched(); err != nil {
		return err
	}
	if err := removeAllAt(a.ws, j.Staging); err != nil {
		return err
	}
	if err := os.Remove(j.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// redo carries out a journaled step unless it was done.
func (t *txn) redo(op *txnOp) error {
	dir, name, err := t.a.parent(op.Path, true)
	if err != nil {
		return err
	}
	var st unix.Stat_t
	serr := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	unix.Close(dir)
	if serr != nil && !errors.Is(serr, unix.ENOENT) {
		return serr
	}
	here := serr == nil
	var staged unix.Stat_t
	hasStaged := op.Stage != "" && unix.Fstatat(t.stage, op.Stage, &staged, unix.AT_SYMLINK_NOFOLLOW) == nil && staged.Ino == op.Ino
	switch op.Kind {
	case opMkdir:
		if here && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return nil
		}
	case opAdd, opSwap:
		if here && st.Ino == op.Ino {
			return nil
		}
		if !hasStaged {
			return fmt.Errorf("the staged entry %s is missing", op.Stage)
		}
		if op.Kind == opSwap && !here {
			op.Kind = opAdd // the fallback's old entry was moved aside
		}
	case opTrash:
		if !here || st.Ino != op.Ino {
			return nil
		}
	}
	return t.do(op, false)
}

// stagingOwner parses the process that owns a staging folder's name.
func stagingOwner(name string) (int, uint64, bool) {
	rest, ok := strings.CutPrefix(name, stagingPrefix)
	if !ok {
		return 0, 0, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 3 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	return pid, start, err1 == nil && err2 == nil
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// layerOwnerFile names, in a run's private folder, the lcp process that
// made it ("pid start").
const layerOwnerFile = "owner"

// writeLayerOwner records this process as the owner of a run's private
// folder.
func writeLayerOwner(dir string) error {
	start, err := selfStart()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, layerOwnerFile), []byte(fmt.Sprintf("%d %d\n", os.Getpid(), start)), 0o600)
}

// sweepLayers removes the private folders (copy-on-write layers) of runs
// whose lcp process is gone.
func sweepLayers(errs *[]error) []string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "lcp-sandbox-*"))
	var removed []string
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, layerOwnerFile))
		if err != nil {
			continue // not one of ours, or made by an lcp that did not say
		}
		var pid int
		var start uint64
		if _, err := fmt.Sscanf(string(data), "%d %d", &pid, &start); err != nil || alive(pid, start) {
			continue
		}
		if err := removeAll(d); err != nil {
			*errs = append(*errs, fmt.Errorf("remove stale layers %s: %w", d, err))
			continue
		}
		removed = append(removed, d)
	}
	return removed
}
