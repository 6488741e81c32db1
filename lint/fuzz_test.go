package lint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lcptools/lcp/pysrc"
	"github.com/lcptools/lcp/pysrc/parser"
)

// FuzzCheck: the analysis never panics or hangs, on any source, and also
// when it is run on the partial tree the parser returns for an invalid
// file (Check itself skips those; the fuzz target forces them through).
func FuzzCheck(f *testing.F) {
	for _, glob := range []string{"testdata/rules/*/*.py", "testdata/seeds/*/*.py", "../pysrc/testdata/conformance/adversarial/*.py"} {
		paths, _ := filepath.Glob(glob)
		for _, p := range paths {
			if src, err := os.ReadFile(p); err == nil && len(src) < 1<<12 {
				f.Add(src)
			}
		}
	}
	f.Add([]byte("def tool_x(a=1, *, b: 'int' = True):\n    while a: a -= 1\n    else: return\n"))
	f.Add([]byte("def tool_x(p):\n    match p:\n        case {'k': v, **rest} if v: return v\n        case [*xs]: return xs\n"))
	f.Add([]byte("def tool_x(p):\n    try:\n        pass\n    finally:\n        return p\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, fd := range Check("f.py", src, nil) {
			if fd.Code == "" || fd.Severity.rank() == 0 || fd.Line < 0 || fd.Column < 0 {
				t.Fatalf("malformed finding %+v", fd)
			}
		}
		reader, err := pysrc.ReadFile("f.py", src)
		if err != nil {
			return
		}
		mod, file, _ := parser.Parse("f.py", src)
		if mod == nil {
			return
		}
		c := newChecker("f.py", src, file, mod, reader)
		c.run()
	})
}
