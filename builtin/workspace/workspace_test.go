package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func openTemp(t *testing.T) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	w, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, dir
}

func TestWriteReadAppend(t *testing.T) {
	w, dir := openTemp(t)
	if err := w.WriteFile("a/b/c.txt", []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendFile("a/b/c.txt", []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendFile("new/d.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	got, err := w.ReadFile(filepath.Join(dir, "a/b/c.txt"), -1) // absolute inside
	if err != nil || string(got) != "one\ntwo\n" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new/d.txt")); string(b) != "x" {
		t.Errorf("AppendFile did not create new/d.txt: %q", b)
	}
	if _, err := w.ReadFile("a/b/c.txt", 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile over the limit = %v, want ErrTooLarge", err)
	}
	if _, err := w.ReadFile("a/b/missing", -1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want fs.ErrNotExist", err)
	}
	if _, err := w.ReadFile("a", -1); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile(dir) = %v, want ErrNotRegular", err)
	}
	if err := w.WriteFile("a", []byte("x")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("WriteFile(dir) = %v, want ErrNotRegular", err)
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(filepath.Join(dir, "a/b"))
	if len(entries) != 1 {
		t.Errorf("a/b holds %d entries, want only c.txt", len(entries))
	}
}

func TestWriteKeepsModeAndFollowsInsideLinks(t *testing.T) {
	w, dir := openTemp(t)
	p := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(p, []byte("old"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run.sh", filepath.Join(dir, "alias.sh")); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("alias.sh", []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o750 {
		t.Errorf("mode = %v, want 0750 kept", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("run.sh = %q, want the write to go through the link", b)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "alias.sh")); fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("alias.sh is no longer a link")
	}
}

func TestRel(t *testing.T) {
	w, dir := openTemp(t)
	tests := []struct {
		name, want string
		err        error
	}{
		{"a.txt", "a.txt", nil},
		{"./a/../b", "./a/../b", nil},
		{dir, ".", nil},
		{dir + "/x/y", "x/y", nil},
		{"../x", "", ErrOutside},
		{"/elsewhere", "", ErrOutside},
		{"~/x", "", ErrOutside},
		{"", "", ErrBadName},
		{"a\x00b", "", ErrBadName},
	}
	for _, tt := range tests {
		got, err := w.Rel(tt.name)
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("Rel(%q) = %q, %v; want %q, %v", tt.name, got, err, tt.want, tt.err)
		}
	}
	if got := w.Display("./a/../b/"); got != "b" {
		t.Errorf("Display = %q, want b", got)
	}
}

func TestReadDirAndWalk(t *testing.T) {
	w, dir := openTemp(t)
	for _, f := range []string{"b.txt", "a.txt", "src/main.go", "src/util/u.go", ".git/config", "node_modules/m/i.js", "src/__pycache__/x.pyc"} {
		if err := w.WriteFile(f, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("..", filepath.Join(dir, "src", "up")); err != nil {
		t.Fatal(err)
	}
	entries, err := w.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != ".git a.txt b.txt node_modules src" {
		t.Errorf("ReadDir = %s", got)
	}
	var seen []string
	err = w.Walk(".", func(rel string, d fs.DirEntry) error {
		seen = append(seen, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, " "); got != "a.txt b.txt src src/main.go src/up src/util src/util/u.go" {
		t.Errorf("Walk = %s", got)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, rel string
		want         bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true},
		{"*.go", "main.py", false},
		{"src/*.go", "src/main.go", true},
		{"src/*.go", "src/a/main.go", false},
		{"src/**/*.go", "src/main.go", true},
		{"src/**/*.go", "src/a/b/main.go", true},
		{"**/test_*.py", "tests/unit/test_x.py", true},
		{"**/test_*.py", "test_x.py", true},
		{"**", "anything/at/all", true},
		{"a/**", "a/b", true},
		{"a/**", "b/a", false},
		{"./src/*.go", "src/main.go", true},
		{"**/*/**/*/**/*/**/x", strings.Repeat("d/", 60) + "x", true},
		{"**/*/**/*/**/*/**/y", strings.Repeat("d/", 60) + "x", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.rel); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.rel, got, tt.want)
		}
	}
	if ValidPattern("[a-") || !ValidPattern("**/*.go") || ValidPattern("") {
		t.Errorf("ValidPattern misjudges")
	}
}

func ExampleWorkspace_ReadFile() {
	dir, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(dir)
	w, _ := Open(dir)
	defer w.Close()

	_ = w.WriteFile("notes/todo.md", []byte("- write tests\n"))
	data, _ := w.ReadFile("notes/todo.md", 1<<20)
	fmt.Printf("%q\n", data)

	_, err := w.ReadFile("../../etc/passwd", 1<<20)
	fmt.Println(errors.Is(err, ErrOutside))
	// Output:
	// "- write tests\n"
	// true
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{".git/hooks", "src"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"hooks": ".git/hooks", "src/up": "..", "gitdir": filepath.Join(dir, ".git"),
		"out": "/etc", "loop": "loop"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, tt := range []struct{ name, want string }{
		{"hooks/pre-commit", ".git/hooks/pre-commit"},
		{"src/up/hooks/x", ".git/hooks/x"},
		{"gitdir/config", ".git/config"},
		{"src/new/file.txt", "src/new/file.txt"},
		{"./a/../b", "b"},
		{"out/passwd", "error"},
		{"loop/x", "error"},
		{"../x", "error"},
	} {
		got, err := ws.Resolve(tt.name)
		if err != nil {
			got = "error"
		}
		if filepath.ToSlash(got) != tt.want {
			t.Errorf("Resolve(%q) = %q (%v), want %q", tt.name, got, err, tt.want)
		}
	}
}
