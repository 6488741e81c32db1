package discover

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFileLikeOS checks that readFile (system calls on Linux and
// macOS) gives what reading through an *os.File gives: the same bytes,
// and errors that read the same once their path is stripped.
func TestReadFileLikeOS(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := bytes.Repeat([]byte("def tool_x(a: int):\n    return a\n"), 10000)
	tests := []struct {
		name string
		path string
		buf  []byte // the buffer a previous file left
	}{
		{"small", write("small.py", []byte("def tool_a():\n    pass\n")), nil},
		{"empty", write("empty.py", nil), nil},
		{"bigger than the buffer", write("big.py", big), make([]byte, 10, 64)},
		{"smaller than the buffer", write("tiny.py", []byte("x = 1\n")), bytes.Repeat([]byte("z"), 4096)},
		{"missing", filepath.Join(dir, "missing.py"), nil},
		{"a directory", dir, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b1, b2 := bytes.Clone(tt.buf), bytes.Clone(tt.buf)
			got, err := readFile(tt.path, &b1)
			want, wantErr := readFileOS(tt.path, &b2)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("readFile error %v, through os.File %v", err, wantErr)
			}
			if err != nil {
				if g, w := pathErr(err).Error(), pathErr(wantErr).Error(); g != w {
					t.Errorf("error %q, want %q", g, w)
				}
				if !strings.Contains(err.Error(), tt.path) {
					t.Errorf("error %q does not name %s", err, tt.path)
				}
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("read %d bytes, want %d (the same bytes)", len(got), len(want))
			}
		})
	}
}
