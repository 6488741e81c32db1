package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestPythonPathShadows(t *testing.T) {
	tests := []struct {
		name       string
		files      []string // a trailing slash makes an empty folder
		first      string
		pythonPath string
		want       []string
	}{
		{"nothing", []string{"main.py", "data.json", "notes/"}, ".", "", nil},
		{"module", []string{"json.py"}, ".", "", []string{"json.py"}},
		{"windows module", []string{"queue.pyw"}, ".", "", []string{"queue.pyw"}},
		{"sourceless", []string{"re.pyc"}, ".", "", []string{"re.pyc"}},
		{"extension", []string{"ssl.cpython-311-x86_64-linux-gnu.so", "zlib.abi3.so", "math.so", "select.pyd"}, ".", "",
			[]string{"math.so", "select.pyd", "ssl.cpython-311-x86_64-linux-gnu.so", "zlib.abi3.so"}},
		{"package", []string{"base64/__init__.py"}, ".", "", []string{"base64/"}},
		{"package of bytecode", []string{"select/__init__.pyc"}, ".", "", []string{"select/"}},
		{"namespace folder", []string{"json/tool.py", "os/"}, ".", "", nil},
		{"start-up hooks", []string{"sitecustomize.py", "usercustomize.pyc"}, ".", "", []string{"sitecustomize.py", "usercustomize.pyc"}},
		{"not importable names", []string{"json.txt", "re.py.bak", "os.tar.gz", "json.foo.py", ".json.py"}, ".", "", nil},
		{"cached bytecode only counts with its source", []string{"__pycache__/json.cpython-311.pyc"}, ".", "", nil},
		{"a script's folder", []string{"sub/main.py", "sub/queue.py", "re.py"}, "sub", "", []string{"sub/queue.py"}},
		{"PYTHONPATH entries", []string{"lib/re.py", "other/json.py", "x/"}, "x", "lib" + string(filepath.ListSeparator) + "nothere" + string(filepath.ListSeparator) + "other",
			[]string{"lib/re.py", "other/json.py"}},
		{"empty PYTHONPATH entry is the workspace", []string{"lib/", "json.py"}, "lib", string(filepath.ListSeparator) + "lib", []string{"json.py"}},
		{"repeats once", []string{"json.py"}, ".", ".", []string{"json.py"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(ws, filepath.FromSlash(f))
				if strings.HasSuffix(f, "/") {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := PythonPathShadows(ws, filepath.Join(ws, tc.first), tc.pythonPath)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPythonPathShadowsOutsideAndErrors(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "json.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A host folder on PYTHONPATH is the host's own.
	if got, err := PythonPathShadows(ws, ws, outside); err != nil || got != nil {
		t.Errorf("outside folder: %q %v", got, err)
	}
	// A link in the workspace to a folder outside it is judged where it
	// points: outside.
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if got, err := PythonPathShadows(ws, ws, "link"); err != nil || got != nil {
		t.Errorf("link outside: %q %v", got, err)
	}
	// A workspace reached through a link is judged as itself.
	if err := os.WriteFile(filepath.Join(outside, "re.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(ws, "link")
	if got, err := PythonPathShadows(linked, linked, ""); err != nil || !slices.Equal(got, []string{"json.py", "re.py"}) {
		t.Errorf("linked workspace: %q %v", got, err)
	}
	// Too large a folder is not judged.
	big := t.TempDir()
	for i := 0; i <= maxShadowEntries; i++ {
		f, err := os.Create(filepath.Join(big, "f"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if _, err := PythonPathShadows(big, big, ""); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("large folder: %v", err)
	}
	if _, err := PythonPathShadows(filepath.Join(ws, "nothere"), ws, ""); err == nil {
		t.Errorf("missing workspace: no error")
	}
}
