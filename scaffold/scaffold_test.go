package scaffold

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/lint"
	"github.com/lcptools/lcp/pysrc"
)

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"my_notes", true}, {"_private", true}, {"notes2", true}, {"Notes", true}, {"café", true},
		{"match", true}, // a soft keyword is an identifier
		{"", false}, {"2notes", false}, {"my-notes", false}, {"my notes", false}, {"a.b", false},
		{"class", false}, {"None", false}, {"__init__", false}, {"../x", false}, {"x/y", false},
		{"ﬁle", false}, // not NFKC: Python would read it as "file"
		{string(make([]byte, 101)), false},
	} {
		err := CheckName(c.name)
		if (err == nil) != c.ok {
			t.Errorf("CheckName(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrName) {
			t.Errorf("CheckName(%q): %v does not wrap ErrName", c.name, err)
		}
	}
}

// TestSourcePassesCheck: a new library has no finding at all, and the
// reader sees its metadata and its one tool with every parameter
// documented.
func TestSourcePassesCheck(t *testing.T) {
	for _, name := range []string{"my_notes", "x", "café_tools"} {
		src, err := Source(name)
		if err != nil {
			t.Fatal(err)
		}
		file := name + ".py"
		for _, f := range lint.Check(file, src, nil) {
			t.Errorf("%s: %s", name, f)
		}
		pf, err := pysrc.ReadFile(file, src)
		if err != nil || pf.SyntaxErrors != nil {
			t.Fatalf("%s: %v %v", name, err, pf.SyntaxErrors)
		}
		if pf.Library.Name != Title(name) || pf.Library.Description == "" || pf.Library.Icon == "" {
			t.Errorf("%s: metadata %+v", name, pf.Library)
		}
		if len(pf.Tools) != 1 || pf.Tools[0].Name != ToolName(name) || len(pf.Tools[0].Params) != 3 {
			t.Fatalf("%s: tools %+v", name, pf.Tools)
		}
	}
}

func TestLibraryRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	path, err := Library(dir, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, "notes", "notes.py") {
		t.Fatalf("path %s", path)
	}
	before, _ := os.ReadFile(path)
	os.WriteFile(path, append(before, "# edited\n"...), 0o644)
	if _, err := Library(dir, "notes"); !errors.Is(err, ErrExists) {
		t.Fatalf("second Library: %v, want ErrExists", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before)+"# edited\n" {
		t.Fatal("the existing library was changed")
	}
	// a file library of the same name blocks too, and nothing is created
	if err := os.WriteFile(filepath.Join(dir, "solo.py"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Library(dir, "solo"); !errors.Is(err, ErrExists) {
		t.Fatalf("Library over solo.py: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "solo")); !os.IsNotExist(err) {
		t.Fatal("a folder was created next to solo.py")
	}
	// a missing folder is created
	deep := filepath.Join(dir, "a", "b")
	if _, err := Library(deep, "deep"); err != nil {
		t.Fatal(err)
	}
	// an invalid name writes nothing
	if _, err := Library(filepath.Join(dir, "c"), "2bad"); !errors.Is(err, ErrName) {
		t.Fatalf("invalid name: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c")); !os.IsNotExist(err) {
		t.Fatal("an invalid name created the folder")
	}
}

// TestLibraryCleansUpOnFailure: when the library cannot be written, the
// folders Library created are removed again, and only those.
func TestLibraryCleansUpOnFailure(t *testing.T) {
	dir := t.TempDir()
	saved := createFile
	defer func() { createFile = saved }()
	createFile = func(string) (*os.File, error) { return nil, errors.New("disk full") }
	if _, err := Library(filepath.Join(dir, "a", "b"), "x"); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Library: %v, want the write error", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
	if err := os.Mkdir(filepath.Join(dir, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Library(filepath.Join(dir, "tools"), "x"); err == nil {
		t.Fatal("Library succeeded")
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "tools")); len(entries) != 0 {
		t.Fatalf("left behind in an existing folder: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(dir, "tools")); err != nil {
		t.Fatal("the existing folder was removed")
	}
}
