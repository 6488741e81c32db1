// Package scaffold writes new LCP tool libraries that follow the seeds'
// conventions: a folder library X/X.py with its metadata, the hooks that
// receive the host's confirmation and user interaction handlers, helpers to
// ask the user and the operator, a workspace path check, and one
// documented tool with canonical results on every branch. A new library
// passes `lcp check` with no finding at all.
//
//	path, err := scaffold.Library("tools", "my_notes")
//	// path == "tools/my_notes/my_notes.py"; its tool is tool_my_notes_save_note
package scaffold

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/template"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

//go:embed library.py.tmpl
var librarySource string

// libraryTemplate is parsed by lcp new, not at every start-up.
var libraryTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("library.py").Parse(librarySource))
})

// createFile creates a new file, failing if it exists (a variable so that
// tests can make writing fail).
var createFile = func(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// ErrExists is returned (wrapped) when the library's folder or a file
// library of the same name is already there; nothing is written then.
var ErrExists = errors.New("already exists")

// ErrName is returned (wrapped) for a name that cannot name a library.
var ErrName = errors.New("invalid library name")

// keywords are Python 3.12's reserved words: a module cannot be named so.
var keywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

// CheckName reports why name cannot name a library, or nil: it must be a
// Python identifier (letters, digits and underscores, not starting with a
// digit, in Unicode normal form NFKC as Python reads identifiers), not a
// keyword, not __init__ (never loaded) and at most 100 characters.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: the name is empty", ErrName)
	case len(name) > 100:
		return fmt.Errorf("%w: %q is longer than 100 bytes", ErrName, name)
	case keywords[name]:
		return fmt.Errorf("%w: %q is a Python keyword", ErrName, name)
	case name == "__init__":
		return fmt.Errorf("%w: __init__.py files are never loaded as libraries", ErrName)
	case norm.NFKC.String(name) != name:
		return fmt.Errorf("%w: %q is not in the form Python reads it (%q)", ErrName, name, norm.NFKC.String(name))
	}
	for i, r := range name {
		ok := r == '_' || unicode.IsLetter(r) || (i > 0 && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)))
		if !ok {
			return fmt.Errorf("%w: %q is not a Python identifier (use letters, digits and _, not starting with a digit)", ErrName, name)
		}
	}
	return nil
}

// Title turns a library name into a display name: "my_notes" -> "My Notes".
func Title(name string) string {
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == '_' })
	for i, p := range parts {
		r := []rune(p)
		r[0] = unicode.ToUpper(r[0])
		parts[i] = string(r)
	}
	if len(parts) == 0 {
		return name
	}
	return strings.Join(parts, " ")
}

// ToolName is the name of the tool a new library has.
func ToolName(name string) string { return "tool_" + name + "_save_note" }

// Source returns the text of a new library's module.
func Source(name string) ([]byte, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := libraryTemplate().Execute(&b, struct{ Name, Title string }{name, Title(name)}); err != nil {
		return nil, fmt.Errorf("writing the library source: %w", err)
	}
	return b.Bytes(), nil
}

// Library writes the folder library dir/name/name.py and returns the path
// of the file. dir is created when missing. It refuses, writing nothing,
// when dir/name or dir/name.py exists (a library of that name is there),
// and removes what it created when writing fails.
func Library(dir, name string) (string, error) {
	src, err := Source(name)
	if err != nil {
		return "", err
	}
	if dir == "" {
		dir = "."
	}
	lib := filepath.Join(dir, name)
	for _, p := range []string{lib, lib + ".py"} {
		if _, err := os.Lstat(p); err == nil {
			return "", fmt.Errorf("%s %w: a library named %s is there; choose another name or folder", p, ErrExists, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("checking %s: %w", p, err)
		}
	}
	var created []string // to remove on failure, innermost first
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		// record the missing ancestors so that a failure leaves no trace
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
				break
			}
			created = append(created, d)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	cleanup := func() {
		for _, d := range created {
			os.Remove(d)
		}
	}
	// Mkdir, not MkdirAll: it fails if the folder appeared meanwhile, so an
	// existing library is never written into.
	if err := os.Mkdir(lib, 0o755); err != nil {
		cleanup()
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("%s %w", lib, ErrExists)
		}
		return "", fmt.Errorf("creating %s: %w", lib, err)
	}
	created = append([]string{lib}, created...)
	file := filepath.Join(lib, name+".py")
	f, err := createFile(file)
	if err != nil {
		cleanup()
		return "", fmt.Errorf("creating %s: %w", file, err)
	}
	if _, err := f.Write(src); err != nil {
		f.Close()
		os.Remove(file)
		cleanup()
		return "", fmt.Errorf("writing %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(file)
		cleanup()
		return "", fmt.Errorf("writing %s: %w", file, err)
	}
	return file, nil
}
