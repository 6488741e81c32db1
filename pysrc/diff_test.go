package pysrc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The differential tests compare ReadFile with testdata/reference_extract.py,
// which implements SPEC §5 with Python's own ast module. They need a
// python3 (LCP_PYTHON, else python3.12, else python3); without one they
// are skipped. LCP_PYSRC_FULL=1 compares every file of the standard
// library instead of a sample; LCP_PYSRC_STDLIB names another library
// directory.

func findPython(t testing.TB) (string, string) {
	t.Helper()
	var candidates []string
	if p := os.Getenv("LCP_PYTHON"); p != "" {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, "python3.12", "/root/.pyenv/versions/3.12.1/bin/python3.12", "python3")
	for _, c := range candidates {
		path, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		out, err := exec.Command(path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(out))
		if v >= "3.9" || len(v) > 3 {
			return path, v
		}
	}
	t.Skip("no python3 found: differential test skipped")
	return "", ""
}

type refResult struct {
	File   string            `json:"file"`
	Python string            `json:"python"`
	Status string            `json:"status"`
	Tools  []json.RawMessage `json:"tools"`
}

// runReference runs the reference extractor on files, in one process.
func runReference(t testing.TB, python string, files []string) map[string]refResult {
	t.Helper()
	cmd := exec.Command(python, filepath.Join("testdata", "reference_extract.py"), "-")
	cmd.Stdin = strings.NewReader(strings.Join(files, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference extractor: %v\n%s", err, stderr.String())
	}
	res := map[string]refResult{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		var r refResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("reference output: %v", err)
		}
		res[r.File] = r
	}
	return res
}

type diffStats struct {
	files, tools, identical, invalidFiles, gap, skipped int
	failures                                            []string
}

func (s *diffStats) String() string {
	return fmt.Sprintf("files compared %d (invalid %d), tools compared %d, identical %d, 3.11-only gap files %d, skipped %d",
		s.files, s.invalidFiles, s.tools, s.identical, s.gap, s.skipped)
}

// compareFiles extracts every file with ReadFile and compares with the
// reference: tools identical on valid files, names and marks on invalid
// ones.
func compareFiles(t testing.TB, python, version string, files []string) *diffStats {
	t.Helper()
	ref := runReference(t, python, files)
	st := &diffStats{}
	for _, path := range files {
		r, ok := ref[path]
		if !ok {
			t.Fatalf("no reference result for %s", path)
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ReadFile(path, src)
		if r.Status == "skip" || err != nil {
			if (r.Status == "skip") != (err != nil) {
				st.failures = append(st.failures, fmt.Sprintf("%s: reference %s, reader error %v", path, r.Status, err))
			}
			st.skipped++
			continue
		}
		invalid := f.SyntaxErrors != nil
		if (r.Status == "syntax") != invalid {
			if r.Status == "syntax" && !invalid && version < "3.12" {
				st.gap++ // valid 3.12 the reference's 3.11 cannot parse
				continue
			}
			msg := "no syntax error"
			if invalid {
				msg = f.SyntaxErrors[0].Error()
			}
			st.failures = append(st.failures, fmt.Sprintf("%s: reference status %s, reader: %s", path, r.Status, msg))
			continue
		}
		st.files++
		if invalid {
			st.invalidFiles++
		}
		if len(f.Tools) != len(r.Tools) {
			st.failures = append(st.failures, fmt.Sprintf("%s: %d tools, reference %d", path, len(f.Tools), len(r.Tools)))
			continue
		}
		for i, tool := range f.Tools {
			st.tools++
			got, _ := tool.MarshalJSON()
			if err := compareTool(r.Tools[i], got); err != nil {
				st.failures = append(st.failures, fmt.Sprintf("%s: tool %d: %v", path, i, err))
				continue
			}
			st.identical++
		}
	}
	return st
}

func report(t *testing.T, st *diffStats) {
	t.Helper()
	t.Log(st.String())
	for i, f := range st.failures {
		if i == 20 {
			t.Errorf("... and %d more", len(st.failures)-20)
			break
		}
		t.Error(f)
	}
}

func TestDifferentialGenerated(t *testing.T) {
	python, version := findPython(t)
	dir := t.TempDir()
	n := 300
	switch {
	case os.Getenv("LCP_PYSRC_FULL") != "":
		n = 5000
	case testing.Short():
		n = 60
	}
	r := rand.New(rand.NewSource(1))
	var files []string
	for i := 0; i < n; i++ {
		path := filepath.Join(dir, fmt.Sprintf("gen_%03d.py", i))
		src := genToolFile(r)
		switch r.Intn(20) {
		case 0:
			src = strings.ReplaceAll(src, "\n", "\r\n")
		case 1:
			src = strings.ReplaceAll(src, "\n", "\r")
		case 2:
			src = "\ufeff" + strings.ReplaceAll(src, "\n\n", "\n\f\n")
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	st := compareFiles(t, python, version, files)
	report(t, st)
	if st.tools < n {
		t.Errorf("only %d tools compared", st.tools)
	}
}

var defNameRE = regexp.MustCompile(`(?m)^([ \t]*(?:async[ \t]+)?def[ \t]+)([A-Za-z_]\w*)`)

// renameDefs turns every `def name` into `def tool_name`.
func renameDefs(src []byte) []byte { return defNameRE.ReplaceAll(src, []byte("${1}tool_${2}")) }

func TestDifferentialStdlib(t *testing.T) {
	python, version := findPython(t)
	out, err := exec.Command(python, "-c", `import sysconfig; print(sysconfig.get_paths()["stdlib"])`).Output()
	if err != nil {
		t.Skip("cannot locate the standard library:", err)
	}
	root := strings.TrimSpace(string(out))
	if dir := os.Getenv("LCP_PYSRC_STDLIB"); dir != "" {
		root = dir // e.g. the 3.12 library read by a 3.11 reference
	}
	var all []string
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".py") && !strings.Contains(path, "site-packages") {
			all = append(all, path)
		}
		return nil
	})
	sort.Strings(all)
	if len(all) == 0 {
		t.Skip("no standard library files under", root)
	}
	sample := all
	if os.Getenv("LCP_PYSRC_FULL") == "" {
		// a fixed sample keeps the test short
		step := len(all)/150 + 1
		sample = nil
		for i := 0; i < len(all); i += step {
			sample = append(sample, all[i])
		}
	}
	dir := t.TempDir()
	var files []string
	for i, path := range sample {
		src, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		dst := filepath.Join(dir, fmt.Sprintf("%05d_%s", i, filepath.Base(path)))
		if err := os.WriteFile(dst, renameDefs(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, dst)
	}
	st := compareFiles(t, python, version, files)
	report(t, st)
}
