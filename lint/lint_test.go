package lint

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/builtin/pylib"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// checkDir checks every .py file below dir (sorted) and returns the text
// output, paths relative to dir.
func checkDir(t *testing.T, dir string) (string, map[string][]Finding) {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	abs, _ := filepath.Abs(dir)
	var out bytes.Buffer
	byFile := map[string][]Finding{}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ap, _ := filepath.Abs(p)
		fs := Check(ap, src, nil)
		rel, _ := filepath.Rel(dir, p)
		byFile[filepath.ToSlash(rel)] = fs
		if err := WriteText(&out, fs, abs); err != nil {
			t.Fatal(err)
		}
	}
	return out.String(), byFile
}

// golden compares got with the golden file (rewritten with -update).
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./lint -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// TestRules runs the rule corpus: testdata/rules/<rule-id>/ holds bad
// files, each with at least one finding of that rule, and good.py, the
// same tools written as the checklist says, with no finding at all. The
// findings of every file are in findings.golden.
func TestRules(t *testing.T) {
	dirs, err := os.ReadDir("testdata/rules")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		rule := d.Name()
		t.Run(rule, func(t *testing.T) {
			if _, ok := LookupRule(rule); !ok {
				t.Fatalf("testdata/rules/%s names no rule", rule)
			}
			dir := filepath.Join("testdata", "rules", rule)
			text, byFile := checkDir(t, dir)
			golden(t, filepath.Join(dir, "findings.golden"), text)
			if _, ok := byFile["good.py"]; !ok {
				t.Errorf("%s has no good.py", dir)
			}
			for file, fs := range byFile {
				if file == "good.py" {
					for _, f := range fs {
						t.Errorf("good.py: unexpected finding %s", f)
					}
					continue
				}
				found := false
				for _, f := range fs {
					found = found || f.Code == rule
					if f.Fix == "" || f.Line == 0 || f.Severity.rank() == 0 {
						t.Errorf("%s: finding without a fix, a line or a severity: %+v", file, f)
					}
				}
				if !found {
					t.Errorf("%s: no %s finding", file, rule)
				}
			}
			covered[rule] = true
		})
	}
	for _, r := range Rules {
		if r.Checklist != "" && !covered[r.ID] {
			t.Errorf("checklist rule %s has no corpus in testdata/rules", r.ID)
		}
	}
}

// TestSeedExamples checks the tool examples of the seed documents (the
// project's source documents, copied verbatim into testdata/seeds): the
// complete libraries have no finding; the fragments and the older
// edition's example have the findings in findings.golden, which are true.
func TestSeedExamples(t *testing.T) {
	text, byFile := checkDir(t, filepath.Join("testdata", "seeds"))
	golden(t, filepath.Join("testdata", "seeds", "findings.golden"), text)
	complete := []string{"000/database_ops.py", "000/mcp_bridge.py", "000/creative_studio.py",
		"001/greeting.py", "001/deploy_website.py", "003/greet.py", "003/deploy_helper.py"}
	for _, f := range complete {
		fs, ok := byFile[f]
		if !ok {
			t.Errorf("missing seed example %s", f)
		}
		for _, x := range fs {
			t.Errorf("%s: false positive on a seed example: %s", f, x)
		}
	}
}

// TestBuiltinLibraries: the built-in Python libraries, the seeds' worked
// examples written for this project, have no finding at all.
func TestBuiltinLibraries(t *testing.T) {
	n := 0
	err := fs.WalkDir(pylib.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".py") {
			return err
		}
		src, err := fs.ReadFile(pylib.FS(), p)
		if err != nil {
			return err
		}
		n++
		for _, f := range Check(p, src, nil) {
			t.Errorf("false positive on the built-in library: %s", f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Fatalf("only %d built-in library files", n)
	}
}
