package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// journalVersion is the format of the apply journal this lcp writes and
// reads; a journal of another version is left alone with an error.
const journalVersion = 1

// stagingPrefix starts the name of a transaction's staging folder at the
// workspace's top. Changes never reports such a folder.
const stagingPrefix = ".lcp-txn-"

// StateDir is lcp's state folder: $XDG_STATE_HOME/lcp, else
// ~/.local/state/lcp (the apply journals live in its txn folder).
func StateDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "lcp")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(os.TempDir(), "lcp-state")
	}
	return filepath.Join(home, ".local", "state", "lcp")
}

// journalDir is where the apply journals live; a package variable so
// that tests can point it elsewhere.
var journalDir = func() string { return filepath.Join(StateDir(), "txn") }

// opKind is one step of an apply transaction.
type opKind string

const (
	opMkdir opKind = "mkdir" // create a new folder
	opAdd   opKind = "add"   // move a staged entry to a path that is free
	opSwap  opKind = "swap"  // exchange a staged entry with the existing one
	opTrash opKind = "trash" // move an existing entry into the staging folder
	opChmod opKind = "chmod" // new permissions for an existing folder
	opTimes opKind = "times" // new times for an existing entry
)

// txnOp is one journaled step. Each step can tell from the workspace
// whether it was done, so that recovery completes exactly the rest.
type txnOp struct {
	Kind opKind `json:"kind"`
	Path string `json:"path"`
	// Stage names the staged entry in the staging folder (add, swap,
	// trash).
	Stage string `json:"stage,omitempty"`
	// Ino is the inode of the staged entry (add, swap) or of the entry to
	// trash.
	Ino uint64 `json:"ino,omitempty"`
	// Mode of a new folder or a chmod; times in nanoseconds.
	Mode  uint32 `json:"mode,omitempty"`
	Atime int64  `json:"atime,omitempty"`
	Mtime int64  `json:"mtime,omitempty"`

	change int // index of the change in the applied list (not journaled)
	undo   func() error
}

// journal is the record of one apply transaction, written and synced
// before its first change to the workspace and removed after its last.
type journal struct {
	Version   int     `json:"version"`
	Workspace string  `json:"workspace"`
	Staging   string  `json:"staging"`
	PID       int     `json:"pid"`
	Start     uint64  `json:"start"`
	Ops       []txnOp `json:"ops"`

	path string
}

// journalPath names the journal of a staging folder of a workspace.
func journalPath(ws, staging string) string {
	h := sha256.Sum256([]byte(ws))
	return filepath.Join(journalDir(), hex.EncodeToString(h[:8])+"-"+strings.TrimPrefix(staging, stagingPrefix)+".json")
}

// write stores the journal durably: a new file, synced, renamed into
// place, and its folder synced. When lcp's state folder cannot be
// written, the journal goes into the staging folder (at fallback), where
// recovery finds it as well.
func (j *journal) write(sync bool, fallback string) error {
	dir := journalDir()
	j.path = journalPath(j.Workspace, j.Staging)
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		err = j.writeAt(dir, sync)
	}
	if err == nil {
		return nil
	}
	j.path = filepath.Join(fallback, stagedJournal)
	if ferr := j.writeAt(fallback, sync); ferr != nil {
		j.path = ""
		return fmt.Errorf("apply journal: state folder %s: %w; staging folder: %w", dir, err, ferr)
	}
	return nil
}

// stagedJournal names the journal inside a staging folder, when lcp's
// state folder was not writable.
const stagedJournal = "journal.json"

func (j *journal) writeAt(dir string, sync bool) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	tmp := j.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, j.path)
	}
	if err == nil && sync {
		err = syncDir(dir)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// readJournal reads a journal file; one of another version or that does
// not parse is an error naming the file.
func readJournal(p string) (*journal, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("apply journal %s is corrupt: %w", p, err)
	}
	if j.Version != journalVersion {
		return nil, fmt.Errorf("apply journal %s has version %d; this lcp reads version %d", p, j.Version, journalVersion)
	}
	if !filepath.IsAbs(j.Workspace) || !strings.HasPrefix(j.Staging, stagingPrefix) || strings.Contains(j.Staging, "/") {
		return nil, fmt.Errorf("apply journal %s is corrupt: bad workspace or staging name", p)
	}
	for _, op := range j.Ops {
		if !validRel(op.Path) || strings.Contains(op.Stage, "/") || op.Stage == ".." || op.Stage == "." {
			return nil, fmt.Errorf("apply journal %s is corrupt: bad path %q", p, op.Path)
		}
	}
	j.path = p
	return &j, nil
}

// validRel reports whether p is a clean relative path inside a folder.
func validRel(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || filepath.Clean(p) != p {
		return false
	}
	return p != ".." && !strings.HasPrefix(p, "../")
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
