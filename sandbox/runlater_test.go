package sandbox

import (
	"path"
	"strings"
	"testing"
)

// TestRunLaterRules checks every entry of the list with a path it must
// match (at the top and deeper in the workspace) and the reason it gives.
func TestRunLaterRules(t *testing.T) {
	examples := map[string]string{
		"*.pth":            "lib/evil.pth",
		"*.code-workspace": "proj.code-workspace",
		".idea/**":         ".idea/runConfigurations/Run.xml",
	}
	for _, r := range runLaterRules {
		t.Run(r.Pattern, func(t *testing.T) {
			p, ok := examples[r.Pattern]
			if !ok {
				p = r.Pattern
			}
			for _, q := range []string{p, "deep/er/" + p} {
				if got := runsLater(q); got != r.Why {
					t.Errorf("runsLater(%q) = %q, want %q", q, got, r.Why)
				}
			}
			if r.Why == "" {
				t.Error("an entry without a reason")
			}
		})
	}
}

func TestRunsLater(t *testing.T) {
	tests := []struct {
		path string
		want string // a part of the reason; "" for none
	}{
		{"json.py", "standard module json"},
		{"queue.py", "standard module queue"},
		{"select/__init__.py", "standard module select"},
		{"src/base64/__init__.pyc", "standard module base64"},
		{"json.pyc", "standard module json"},
		{"__pycache__/json.cpython-311.pyc", ""},
		{"mylib.py", ""},
		{"select/helpers.py", ""},
		{"notes/Makefile.txt", ""},
		{".idea", ""},
		{"src/.envrc", "direnv"},
		{"main.go", ""},
		{"README.md", ""},
	}
	for _, tc := range tests {
		got := runsLater(tc.path)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("runsLater(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestClassifyRunLater: a new file that runs later asks in safe mode, with
// its reason, even when an earlier call of the session made it.
func TestClassifyRunLater(t *testing.T) {
	cs := &ChangeSet{Workspace: t.TempDir(), Changes: []Change{
		{Path: ".envrc", Kind: Added, Type: "file"},
		{Path: "pkg/sitecustomize.py", Kind: Added, Type: "file", Owned: true},
		{Path: "queue.py", Kind: Added, Type: "file"},
		{Path: "report.txt", Kind: Added, Type: "file"},
	}}
	cs.classify()
	for _, c := range cs.Changes {
		want := path.Base(c.Path) != "report.txt"
		if c.Risky != want || want && c.Why == "" {
			t.Errorf("%s: risky %v (%q), want %v", c.Path, c.Risky, c.Why, want)
		}
	}
}

// TestClassifyNewRepo: in a copy-on-write run, what a new repository
// holds (its hooks, its configuration, the ".git" file of a separate git
// dir) is asked about, like any change under a version control folder.
func TestClassifyNewRepo(t *testing.T) {
	cs := &ChangeSet{Workspace: t.TempDir(), Changes: []Change{
		{Path: "x/.git/hooks/pre-commit", Kind: Added, Type: "file"},
		{Path: "x/.git/config", Kind: Added, Type: "file"},
		{Path: "y/.git", Kind: Added, Type: "file"},
	}}
	cs.classify()
	for _, c := range cs.Changes {
		if !c.Risky || c.Why == "" {
			t.Errorf("%s: risky %v (%q), want asked", c.Path, c.Risky, c.Why)
		}
	}
}
