package discover

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/lcptools/lcp/pysrc"
	"github.com/lcptools/lcp/tool"
)

// summary is what a discovery found, in order, in comparable form.
type summary struct {
	Tools       []string // name, file and line
	Files       []string // path, stem, group
	Diagnostics []tool.Diagnostic
}

func summarize(r *Result) summary {
	var s summary
	for _, t := range r.Tools {
		info := t.Info()
		s.Tools = append(s.Tools, fmt.Sprintf("%s %s:%d %s", t.Name, t.File.Path, t.Line, info.Spec(tool.FormatLCP)))
	}
	for _, f := range r.Files {
		s.Files = append(s.Files, fmt.Sprintf("%s %s %s %v %+v", f.Path, f.Stem, f.Group, f.LastGood, f.Meta))
	}
	s.Diagnostics = r.Diagnostics()
	return s
}

// TestConcurrentReadKeepsOrder: files are read on every CPU, and the
// result is the one of reading them one after the other (GOMAXPROCS=1):
// the same tools, files and diagnostics in the same order, across
// folders, library folders, missing paths, bad files and duplicates.
func TestConcurrentReadKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		// Every file redefines tool_shared; sizes vary so that reads end
		// out of order.
		src := fmt.Sprintf("def tool_shared(x):\n    \"\"\"From %d.\"\"\"\n\ndef tool_f%d(a: int, b=%d):\n    \"\"\"Tool %d.\n\n    a: the a\n    \"\"\"\n", i, i, i, i)
		for range i % 7 * 50 {
			src += "def helper(x):\n    return [y for y in x if y]\n"
		}
		write(fmt.Sprintf("tools/m%02d.py", i), src)
	}
	write("tools/lib/lib.py", "TOOL_LIBRARY_NAME = 'Lib'\ndef tool_lib(q: str):\n    \"\"\"Lib.\"\"\"\n")
	write("tools/lib/extra.py", "def tool_f3():\n    \"\"\"Duplicate of m03.\"\"\"\n")
	write("tools/broken.py", "def tool_broken(a:\n    pass\ndef tool_after():\n    pass\n")
	write("tools/latin1.py", "def tool_x():\n    \"\"\"Caf\xe9.\"\"\"\n")
	write("tools/nested.py", "class C:\n    def tool_method(self, z):\n        \"\"\"Nested.\"\"\"\n")
	write("more/m00.py", "def tool_f0():\n    \"\"\"Again.\"\"\"\n")
	opts := Options{
		Folders: []string{filepath.Join(dir, "tools"), filepath.Join(dir, "nope"), filepath.Join(dir, "more")},
		Files:   []string{filepath.Join(dir, "tools", "m05.py"), filepath.Join(dir, "missing.py"), dir},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	want := summarize(Run(opts))
	for _, procs := range []int{2, 4, 16} {
		runtime.GOMAXPROCS(procs)
		for range 5 {
			if got := summarize(Run(opts)); !reflect.DeepEqual(got, want) {
				t.Fatalf("GOMAXPROCS=%d: the result differs from a sequential read:\n got %+v\nwant %+v", procs, got, want)
			}
		}
	}
	codes := map[string]bool{}
	for _, d := range want.Diagnostics {
		codes[d.Code] = true
	}
	for _, c := range []string{"duplicate-tool", "syntax-error", "not-utf8", "missing-folder", "missing-file", "not-a-file", "nested-tool", "undocumented-parameter"} {
		if !codes[c] {
			t.Errorf("no %s diagnostic: the test covers less than it should (%v)", c, want.Diagnostics)
		}
	}
}

// TestReadBufferReuse: discovery reads every file into a buffer it uses
// again for the next file, which is only right if a parse keeps nothing
// of its source. Each file of the test data is read into a buffer that
// is then overwritten, and must equal a read from a buffer of its own.
func TestReadBufferReuse(t *testing.T) {
	var paths []string
	for _, root := range []string{"testdata", filepath.Join("..", "pysrc", "testdata"), filepath.Join("..", "lint", "testdata")} {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Ext(p) == ".py" {
				paths = append(paths, p)
			}
			return nil
		})
	}
	if len(paths) < 50 {
		t.Fatalf("only %d test files found", len(paths))
	}
	r := &Result{}
	var buf []byte
	for _, p := range paths {
		got := r.read(p, "", &buf)
		for i := range buf[:cap(buf)] {
			buf[:cap(buf)][i] = 'X'
		}
		want := r.read(p, "", new([]byte))
		if (got.file == nil) != (want.file == nil) || !reflect.DeepEqual(got.diags, want.diags) {
			t.Fatalf("%s: %+v, want %+v", p, got, want)
		}
		if got.file != nil && !reflect.DeepEqual(got.file.Source, want.file.Source) {
			t.Errorf("%s: the parse changed with its source's buffer:\n got %s\nwant %s", p, dump(got.file.Source), dump(want.file.Source))
		}
	}
}

func dump(f *pysrc.File) string {
	s := fmt.Sprintf("%+v", *f)
	for _, t := range f.Tools {
		s += fmt.Sprintf("\n%+v", *t)
	}
	return s
}
