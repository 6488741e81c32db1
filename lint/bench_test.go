package lint

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCheckCorpus checks the files of $LCP_LINT_CORPUS (a folder of
// .py files, e.g. the renamed standard library of bench/check).
func BenchmarkCheckCorpus(b *testing.B) {
	dir := os.Getenv("LCP_LINT_CORPUS")
	if dir == "" {
		b.Skip("LCP_LINT_CORPUS is not set")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.py"))
	var srcs [][]byte
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	b.ResetTimer()
	for range b.N {
		for i, src := range srcs {
			Check(paths[i], src, nil)
		}
	}
}
