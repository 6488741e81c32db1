package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A journal from disk is untrusted: whatever it holds, reading it never
// panics, and what it accepts names only clean paths inside the
// workspace.
func FuzzReadJournal(f *testing.F) {
	for _, seed := range []string{
		`{"version":1,"workspace":"/w","staging":".lcp-txn-1-2-ab","pid":1,"start":2,"ops":[{"kind":"swap","path":"a/b","stage":"0","ino":5}]}`,
		`{"version":1,"workspace":"/w","staging":".lcp-txn-1-2-ab","ops":[{"kind":"add","path":"../etc/passwd","stage":"0"}]}`,
		`{"version":1,"workspace":"relative","staging":".lcp-txn-x"}`,
		`{"version":2}`,
		`{not json`,
		``,
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "j.json")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		j, err := readJournal(p)
		if err != nil {
			return
		}
		if !filepath.IsAbs(j.Workspace) || !strings.HasPrefix(j.Staging, stagingPrefix) || strings.Contains(j.Staging, "/") {
			t.Errorf("accepted workspace %q staging %q", j.Workspace, j.Staging)
		}
		for _, op := range j.Ops {
			if !validRel(op.Path) || strings.Contains(op.Stage, "/") || op.Stage == ".." || op.Stage == "." {
				t.Errorf("accepted step %+v", op)
			}
		}
	})
}
