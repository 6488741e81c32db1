package mcpinstall

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// PathsFromEnv returns the Paths of this system, read from getenv (HOME,
// or USERPROFILE on Windows; APPDATA; XDG_CONFIG_HOME) with dir as the
// current directory.
func PathsFromEnv(getenv func(string) string, dir string) Paths {
	p := Paths{GOOS: runtime.GOOS, Home: getenv("HOME"), AppData: getenv("APPDATA"), ConfigHome: getenv("XDG_CONFIG_HOME"), Dir: dir}
	if p.GOOS == "windows" && getenv("USERPROFILE") != "" {
		p.Home = getenv("USERPROFILE")
	}
	return p
}

// Result says what Install did.
type Result struct {
	// Path is the file written (a symbolic link's target).
	Path string
	// Created: there was no file before.
	Created bool
	// Replaced: the file had an entry of that name, which was replaced.
	Replaced bool
	// Unchanged: the file already had exactly this entry; nothing was
	// written.
	Unchanged bool
	// Backup is the copy of the file as it was, "" when there was none.
	Backup string
}

// Install sets the server name to entry in the client configuration file
// path (under key), keeping everything else: it refuses a file that is
// not a JSON object, changing nothing; it copies the file to a backup
// beside it (name.YYYYMMDD-HHMMSS.bak, from now) before writing; and it
// writes a temporary file and renames it over the old one, so that the
// file is never half written. A symbolic link is followed: its target is
// written. A new file (and its folder) is created readable by the user
// only; an existing one keeps its permissions.
func Install(path, key, name string, entry json.RawMessage, now time.Time) (*Result, error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	res := &Result{Path: path}
	old, err := os.ReadFile(path)
	mode := fs.FileMode(0o600)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Created = true
	case err != nil:
		return nil, err
	default:
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
	}
	out, replaced, err := SetMember(old, key, name, entry)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; nothing was changed", path, err)
	}
	res.Replaced = replaced
	if !res.Created && string(out) == string(old) {
		res.Unchanged = true
		return res, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if !res.Created {
		res.Backup = backupName(path, now)
		if err := writeFile(res.Backup, old, mode); err != nil {
			return nil, fmt.Errorf("backing up %s: %w; nothing was changed", path, err)
		}
	}
	if err := writeFile(path, out, mode); err != nil {
		return nil, err
	}
	return res, nil
}

// backupName is a free name for the backup of path made at now.
func backupName(path string, now time.Time) string {
	base := path + "." + now.Format("20060102-150405")
	name := base + ".bak"
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s-%d.bak", base, i)
	}
}

// writeFile writes data to path through a temporary file in the same
// folder, synced, then renamed over path.
func writeFile(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, nothing is left to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
