// Package pylib ships the built-in Python default library inside the
// binary: the seeds' example libraries user_interactive_tools (configure
// and test a service connection: secret, select and text questions, a
// confirmation before the network test) and user_interaction_demo
// (tool_prepare_deployment), written for this project from the seeds'
// descriptions, and the optional library mcp_bridge (the seeds' MCP
// bridge: tools of MCP servers named in its host configuration), which is
// mounted by name only. They use only Python's standard library.
//
// Dir extracts them on demand to a cache directory and returns a tools
// folder that discovery reads like any other (the optional libraries are
// in OptionalDir, which discovery of Dir skips):
//
//	dir, err := pylib.Dir()
//	if err != nil { ... }
//	res := discover.Run(discover.Options{Folders: []string{dir}})
//
// The cache is content-addressed (a directory named after a hash of the
// files), so binaries of different versions never share one, and
// extraction is safe when several processes do it at once: each writes a
// private temporary directory and renames it into place.
package pylib

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

//go:embed lib optional
var files embed.FS

// Libraries are the names of the embedded default libraries, as
// mount_tool_library finds them.
var Libraries = []string{"user_interaction_demo", "user_interactive_tools"}

// Optional are the names of the embedded libraries that are not part of
// the default library: they are mounted by name (in OptionalDir).
var Optional = []string{"mcp_bridge"}

// optionalFolder is where the optional libraries are extracted, inside
// the default folder: discovery skips names that start with a dot.
const optionalFolder = ".optional"

// FS returns the embedded tools folder as a file system.
func FS() fs.FS {
	sub, _ := fs.Sub(files, "lib")
	return sub
}

var (
	mu      sync.Mutex // guards cached
	cached  string
	hashStr = sync.OnceValue(contentHash)
)

// Dir extracts the libraries below the user's cache directory (the system
// temporary directory when there is none) and returns the tools folder. It
// extracts once per process and reuses an extraction that is complete and
// intact.
func Dir() (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if cached != "" {
		return cached, nil
	}
	base, err := os.UserCacheDir()
	if err != nil || base == "" {
		base = os.TempDir()
	}
	dir, err := ExtractTo(filepath.Join(base, "lcp", "pylib"))
	if err != nil {
		return "", err
	}
	cached = dir
	return dir, nil
}

// OptionalDir extracts the libraries as Dir does and returns the folder of
// the optional ones.
func OptionalDir() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, optionalFolder), nil
}

// ExtractTo extracts the libraries into a content-addressed directory
// below parent (created if needed) and returns it. An existing directory
// for the same content is reused when its files match; a damaged one is
// replaced.
func ExtractTo(parent string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("pylib: %w", err)
	}
	final := filepath.Join(parent, hashStr())
	for attempt := 0; attempt < 3; attempt++ {
		if intact(final) {
			return final, nil
		}
		tmp, err := os.MkdirTemp(parent, ".extract-")
		if err != nil {
			return "", fmt.Errorf("pylib: %w", err)
		}
		if err := write(tmp); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("pylib: %w", err)
		}
		err = os.Rename(tmp, final)
		if err == nil {
			return final, nil
		}
		os.RemoveAll(tmp)
		// Another process won the race (the target exists now), or the
		// target is damaged: check it again, and move a damaged one away.
		if _, serr := os.Stat(final); serr == nil && !intact(final) {
			if trash, terr := os.MkdirTemp(parent, ".damaged-"); terr == nil {
				_ = os.Rename(final, filepath.Join(trash, "old"))
				os.RemoveAll(trash)
			}
		}
	}
	if intact(final) {
		return final, nil
	}
	return "", fmt.Errorf("pylib: cannot extract to %s", final)
}

// walk calls fn for every embedded file, in a stable order, with its path
// in the extraction: the default libraries at the top, the optional ones
// below optionalFolder.
func walk(fn func(name string, data []byte) error) error {
	var names []string
	for _, root := range []string{"lib", "optional"} {
		err := fs.WalkDir(files, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				names = append(names, p)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	sort.Strings(names)
	for _, n := range names {
		data, err := files.ReadFile(n)
		if err != nil {
			return err
		}
		root, rest, _ := strings.Cut(n, "/")
		rel := filepath.FromSlash(rest)
		if root == "optional" {
			rel = filepath.Join(optionalFolder, rel)
		}
		if err := fn(rel, data); err != nil {
			return err
		}
	}
	return nil
}

func contentHash() string {
	h := sha256.New()
	_ = walk(func(name string, data []byte) error {
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(name), len(data))
		h.Write(data)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func write(dir string) error {
	return walk(func(name string, data []byte) error {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	})
}

// intact reports whether dir holds exactly the embedded files.
func intact(dir string) bool {
	want := 0
	err := walk(func(name string, data []byte) error {
		want++
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, data) {
			return errors.New("differs")
		}
		return nil
	})
	if err != nil {
		return false
	}
	have := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Ext(p) == ".py" {
			have++
		}
		return nil
	})
	return have == want
}
