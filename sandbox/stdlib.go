package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// StdlibModule reports whether name is a public top-level module of
// Python's standard library (sys.stdlib_module_names of 3.11): a file or
// package of that name in a folder on sys.path shadows it.
func StdlibModule(name string) bool {
	_, found := slices.BinarySearch(stdlibNames, name)
	return found
}

// maxShadowEntries is the largest folder PythonShadows reads; a larger one
// is an error (the caller asks).
const maxShadowEntries = 20000

// PythonShadows returns the entries of dir that Python would import in
// place of a standard-library module, or run at start-up, if dir came
// before the standard library on sys.path (as the working folder of
// python -c and python -, a script's folder and PYTHONPATH entries do):
// modules (name.py, name.pyc, name.pyw, extension modules name.*.so and
// name.*.pyd) and regular packages (a folder with an __init__ module)
// named like a standard module, and sitecustomize or usercustomize in
// any of those forms. A folder without an __init__ is a namespace portion,
// which never wins over a regular package found later, so it is not
// listed. An error (a folder that cannot be read, or holds more than
// 20,000 entries) means the folder was not judged.
func PythonShadows(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("python shadow check: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(maxShadowEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("python shadow check: %s: %w", dir, err)
	}
	if len(names) > maxShadowEntries {
		return nil, fmt.Errorf("python shadow check: %s holds more than %d entries", dir, maxShadowEntries)
	}
	var out []string
	for _, name := range names {
		base, isModule := pythonModuleName(name)
		if !isModule {
			base = name
		}
		if !StdlibModule(base) && base != "sitecustomize" && base != "usercustomize" {
			continue
		}
		if !isModule {
			// A folder is a regular package when it has an __init__.
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err != nil || !fi.IsDir() || !hasInit(p) {
				continue
			}
			name += string(filepath.Separator)
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// pythonModuleName returns the module a file name is importable as, as
// the path finder's suffixes go (source, bytecode, extension module).
func pythonModuleName(name string) (string, bool) {
	base, rest, ok := strings.Cut(name, ".")
	if !ok || base == "" {
		return "", false
	}
	switch {
	case rest == "py" || rest == "pyc" || rest == "pyw":
		return base, true
	case strings.HasSuffix(rest, "so") && (rest == "so" || strings.HasSuffix(rest, ".so")),
		strings.HasSuffix(rest, "pyd") && (rest == "pyd" || strings.HasSuffix(rest, ".pyd")):
		return base, true
	}
	return "", false
}

// hasInit reports whether the folder holds an __init__ module; a folder
// that cannot be read counts as a package.
func hasInit(dir string) bool {
	d, err := os.Open(dir)
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(maxShadowEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) || len(names) > maxShadowEntries {
		return true
	}
	for _, n := range names {
		if base, ok := pythonModuleName(n); ok && base == "__init__" {
			return true
		}
	}
	return false
}

// PythonPathShadows returns the shadows (as PythonShadows finds them) in
// the folders Python searches before the standard library that lie in the
// workspace: first (the working folder of python -c and python -, or a
// script's folder), then each entry of pythonPath (the value of
// PYTHONPATH; an empty or relative entry is taken from the workspace,
// the working folder of every run). Each shadow is named by its path
// relative to the workspace, with a slash, sorted and without repeats.
// Entries outside the workspace are the host's own and are not judged. An
// error means a folder could not be judged; the caller asks.
func PythonPathShadows(workspace, first, pythonPath string) ([]string, error) {
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return nil, fmt.Errorf("python shadow check: %w", err)
	}
	dirs := []string{first}
	if pythonPath != "" {
		dirs = append(dirs, filepath.SplitList(pythonPath)...)
	}
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(workspace, d)
		}
		real, err := filepath.EvalSymlinks(d)
		if errors.Is(err, os.ErrNotExist) {
			continue // Python skips a missing folder; one made later is a new file, judged then
		}
		if err != nil {
			return nil, fmt.Errorf("python shadow check: %w", err)
		}
		rel, err := filepath.Rel(root, real)
		if err != nil || rel != "." && !filepath.IsLocal(rel) {
			continue
		}
		found, err := PythonShadows(real)
		if err != nil {
			return nil, err
		}
		for _, name := range found {
			shown := filepath.ToSlash(filepath.Join(rel, name))
			if strings.HasSuffix(name, string(filepath.Separator)) {
				shown += "/" // a package
			}
			out = append(out, shown)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
