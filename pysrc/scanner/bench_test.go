package scanner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lcptools/lcp/pysrc/token"
)

// BenchmarkScanStdlib tokenizes the standard library found in
// LCP_SCAN_CORPUS (a directory of .py files); skipped without it.
func BenchmarkScanStdlib(b *testing.B) {
	dir := os.Getenv("LCP_SCAN_CORPUS")
	if dir == "" {
		b.Skip("LCP_SCAN_CORPUS not set")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.py"))
	var srcs [][]byte
	size := 0
	for _, p := range paths {
		s, err := os.ReadFile(p)
		if err == nil {
			srcs = append(srcs, s)
			size += len(s)
		}
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, src := range srcs {
			var s Scanner
			s.Init(token.NewFile("x.py", src), src, nil)
			for {
				_, tok, _ := s.Scan()
				if tok == token.EOF {
					break
				}
			}
		}
	}
}
