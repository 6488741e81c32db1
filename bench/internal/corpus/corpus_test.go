package corpus

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lcptools/lcp/pysrc"
)

func TestRename(t *testing.T) {
	src := "def f(x):\n    pass\n\nclass C:\n    async def m(self):\n        def inner(): pass\n\nx = 'def g'\n"
	want := "def tool_f(x):\n    pass\n\nclass C:\n    async def tool_m(self):\n        def tool_inner(): pass\n\nx = 'def g'\n"
	if got := string(Rename([]byte(src))); got != want {
		t.Errorf("Rename:\n got %q\nwant %q", got, want)
	}
}

// TestToolFiles: the generated files are the same each time, valid Python
// and full of documented tools.
func TestToolFiles(t *testing.T) {
	a, err := ToolFiles(t.TempDir(), 20)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ToolFiles(t.TempDir(), 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Files) != 20 || a.Size != b.Size {
		t.Fatalf("%d files, sizes %d and %d", len(a.Files), a.Size, b.Size)
	}
	for i, p := range a.Files {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := os.ReadFile(b.Files[i])
		if string(src) != string(again) || filepath.Base(p) != filepath.Base(b.Files[i]) {
			t.Fatalf("%s differs between two generations", p)
		}
		f, err := pysrc.ReadFile(p, src)
		if err != nil || f.SyntaxErrors != nil || len(f.Tools) < 2 {
			t.Fatalf("%s: %v, syntax errors %v, %d tools", p, err, f.SyntaxErrors, len(f.Tools))
		}
		for _, tl := range f.Tools {
			if tl.Description == "No description provided." || f.Library.Description == "" {
				t.Errorf("%s: %s is not documented", p, tl.Name)
			}
		}
	}
}
