package worker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestWorkspaceContentNeverRuns plants, for every way Python could pick up
// a file from its working folder or environment, a module that leaves a
// mark when it runs, and checks that a real worker starting in that
// workspace runs none of them while its tool still works: CWD is the
// workspace, standard modules are the real ones, sibling modules of the
// library and the user's PYTHONPATH outside the workspace still import.
func TestWorkspaceContentNeverRuns(t *testing.T) {
	requirePython(t)
	ext := t.TempDir()
	writeFile(t, filepath.Join(ext, "extmod.py"), "VALUE = 'ext'\n")
	lib := writeLib(t, "iso", `
import os, json, queue, select, base64, struct, zlib
import helper, extmod

def tool_check() -> dict:
    """Report what was imported."""
    return {
        "cwd": os.getcwd(),
        "json": json.dumps([1]),
        "queue": hasattr(queue, "SimpleQueue"),
        "select": hasattr(select, "select"),
        "base64": base64.b64encode(b"x").decode(),
        "helper": helper.VALUE,
        "ext": extmod.VALUE,
    }
`)
	writeFile(t, filepath.Join(filepath.Dir(lib.Path), "helper.py"), "VALUE = 'sibling'\n")

	mark := func(dir, kind string) string {
		return "open(" + pyQuote(filepath.Join(dir, "ran")) + ", 'a').write(" + pyQuote(kind+"\n") + ")\n"
	}
	cases := []struct {
		name  string
		plant func(t *testing.T, ws, marks string) []string // returns extra environment
	}{
		{"json.py", func(t *testing.T, ws, m string) []string {
			writeFile(t, filepath.Join(ws, "json.py"), mark(m, "json.py"))
			return nil
		}},
		{"queue.py", func(t *testing.T, ws, m string) []string {
			writeFile(t, filepath.Join(ws, "queue.py"), mark(m, "queue.py"))
			return nil
		}},
		{"select package", func(t *testing.T, ws, m string) []string {
			writeFile(t, filepath.Join(ws, "select", "__init__.py"), mark(m, "select/"))
			return nil
		}},
		{"base64 package", func(t *testing.T, ws, m string) []string {
			writeFile(t, filepath.Join(ws, "base64", "__init__.py"), mark(m, "base64/"))
			return nil
		}},
		{"sourceless pyc", func(t *testing.T, ws, m string) []string {
			src := filepath.Join(t.TempDir(), "json.py")
			writeFile(t, src, mark(m, "json.pyc"))
			compilePyc(t, src, filepath.Join(ws, "json.pyc"))
			compilePyc(t, src, filepath.Join(ws, "struct.pyc"))
			return nil
		}},
		{"__pycache__", func(t *testing.T, ws, m string) []string {
			src := filepath.Join(ws, "zlib.py")
			writeFile(t, src, mark(m, "__pycache__"))
			out, err := exec.Command("python3", "-I", "-c", "import sys, importlib.util; sys.stdout.write(importlib.util.cache_from_source(sys.argv[1]))", src).Output()
			if err != nil {
				t.Fatal(err)
			}
			compilePyc(t, src, string(out))
			return nil
		}},
		{"sitecustomize.py", func(t *testing.T, ws, m string) []string {
			writeFile(t, filepath.Join(ws, "sitecustomize.py"), mark(m, "sitecustomize.py"))
			return []string{"PYTHONPATH=" + ws + string(os.PathListSeparator) + ext}
		}},
		{"usercustomize.py", func(t *testing.T, ws, m string) []string {
			writeFile(t, filepath.Join(ws, "usercustomize.py"), mark(m, "usercustomize.py"))
			return []string{"PYTHONPATH=.:" + ext}
		}},
		{".pth in a user site inside the workspace", func(t *testing.T, ws, m string) []string {
			site := userSite(t, ws)
			writeFile(t, filepath.Join(site, "evil.pth"), "import os; "+strings.TrimSuffix(mark(m, ".pth"), "\n")+"\n")
			writeFile(t, filepath.Join(site, "usercustomize.py"), mark(m, "user site usercustomize.py"))
			writeFile(t, filepath.Join(ws, "evil.pth"), "import os; "+strings.TrimSuffix(mark(m, ".pth in workspace"), "\n")+"\n")
			return []string{"PYTHONUSERBASE=" + ws}
		}},
		{"PYTHONPATH into the workspace", func(t *testing.T, ws, m string) []string {
			writeFile(t, filepath.Join(ws, "lib", "json.py"), mark(m, "PYTHONPATH json.py"))
			writeFile(t, filepath.Join(ws, "lib", "select.py"), mark(m, "PYTHONPATH select.py"))
			return []string{"PYTHONPATH=" + filepath.Join(ws, "lib") + ":lib:" + ext}
		}},
		{"PYTHONSTARTUP", func(t *testing.T, ws, m string) []string {
			writeFile(t, filepath.Join(ws, "startup.py"), mark(m, "PYTHONSTARTUP"))
			return []string{"PYTHONSTARTUP=" + filepath.Join(ws, "startup.py"), "PYTHONINSPECT=1"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case cold-starts its own pool's worker
			ws, marks := t.TempDir(), t.TempDir()
			env := tc.plant(t, ws, marks)
			hasPath := false
			for _, e := range env {
				hasPath = hasPath || strings.HasPrefix(e, "PYTHONPATH=")
			}
			if !hasPath {
				env = append(env, "PYTHONPATH="+ext)
			}
			p, _ := testPool(t, &Options{Env: env})
			r := mustCall(t, p, ws, lib, "tool_check", "{}")
			if b, err := os.ReadFile(filepath.Join(marks, "ran")); err == nil {
				t.Fatalf("workspace content ran in the worker: %q", b)
			}
			wantValue(t, r, `{"cwd":`+jsonQuote(ws)+`,"json":"[1]","queue":true,"select":true,"base64":"eA==","helper":"sibling","ext":"ext"}`)
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func compilePyc(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("python3", "-I", "-c", "import sys, py_compile; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("compile %s: %v: %s", src, err, out)
	}
}

// userSite is the user site-packages folder Python uses when
// PYTHONUSERBASE is base.
func userSite(t *testing.T, base string) string {
	t.Helper()
	cmd := exec.Command("python3", "-c", "import site, sys; sys.stdout.write(site.getusersitepackages())")
	cmd.Env = append(os.Environ(), "PYTHONUSERBASE="+base)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// pyQuote and jsonQuote quote s for Python and JSON source (test paths
// are ASCII, where Go's quoting is valid in both).
func pyQuote(s string) string { return strconv.Quote(s) }

func jsonQuote(s string) string { return strconv.Quote(s) }
