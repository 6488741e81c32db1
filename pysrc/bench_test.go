package pysrc

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// typicalFiles returns 100 tool files: the reader conformance files and
// generated ones (generated files are larger than most real tool files).
func typicalFiles(b *testing.B) [][]byte {
	b.Helper()
	var files [][]byte
	paths, _ := filepath.Glob(filepath.Join("testdata", "conformance", "adversarial", "*.py"))
	for _, p := range paths {
		if len(files) == 50 {
			break
		}
		src, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, src)
	}
	r := rand.New(rand.NewSource(7))
	for len(files) < 100 {
		files = append(files, []byte(genToolFile(r)))
	}
	return files
}

// BenchmarkReadFile100 extracts 100 typical tool files per operation
// (goal: well under 30 ms).
func BenchmarkReadFile100(b *testing.B) {
	files := typicalFiles(b)
	size := 0
	for _, f := range files {
		size += len(f)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, src := range files {
			if _, err := ReadFile("bench.py", src); err != nil && len(src) > 0 {
				_ = err // non-UTF-8 conformance files are skipped, as in discovery
			}
		}
	}
}

// BenchmarkReadCorpus extracts every .py file of the flat folder named by
// LCP_READ_CORPUS per operation (bench/list -keep DIR leaves the renamed
// standard library in DIR/stdlib); skipped without it.
func BenchmarkReadCorpus(b *testing.B) {
	dir := os.Getenv("LCP_READ_CORPUS")
	if dir == "" {
		b.Skip("LCP_READ_CORPUS not set")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.py"))
	var files [][]byte
	size := 0
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, src)
		size += len(src)
	}
	if len(files) == 0 {
		b.Skip("no .py files in", dir)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, src := range files {
			ReadFile("bench.py", src) // errors (non-UTF-8 files) are part of the work
		}
	}
}
