package sandbox

import (
	"sync"
	"time"
)

// Ledger remembers the files a session's own runs created in their
// workspaces, as they left them: a later run may change or delete such a
// file without asking (a script that rewrites its results.csv), as long
// as nobody else changed it in between. The zero value is ready to use
// and safe for concurrent use.
type Ledger struct {
	mu    sync.Mutex
	files map[string]ledgerEntry
}

// ledgerEntry is a file's state as a run left it, and when it was
// recorded.
type ledgerEntry struct {
	id fileID
	at time.Time
}

// fileID identifies one state of a file: same inode, size and status
// change time.
type fileID struct {
	dev, ino uint64
	size     int64
	ctime    int64
}

// Record remembers the file at path (absolute) as created by the
// session, in its current state.
func (l *Ledger) Record(path string) {
	id, ok := statID(path)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.files == nil {
		l.files = map[string]ledgerEntry{}
	}
	l.files[path] = ledgerEntry{id: id, at: time.Now()}
}

// Forget drops path from the ledger.
func (l *Ledger) Forget(path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.files, path)
}

// owns reports whether path was created by the session and is still as
// it left it.
func (l *Ledger) owns(path string) bool {
	l.mu.Lock()
	e, ok := l.files[path]
	l.mu.Unlock()
	if !ok {
		return false
	}
	now, ok := statID(path)
	return ok && now == e.id
}

// settled reports whether the file at path is in state id, as a run of
// the session left it before t: then it did not change after t, however
// recent its times are.
func (l *Ledger) settled(path string, id fileID, t time.Time) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.files[path]
	return ok && e.id == id && e.at.Before(t)
}

// Owns reports whether path (absolute) was created by the session's runs
// and nobody changed it since.
func (l *Ledger) Owns(path string) bool { return l.owns(path) }
