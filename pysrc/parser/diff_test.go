package parser

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestSyntaxDifferential mutates snippets (lines of the standard library,
// the valid and invalid lists above) by deleting, inserting and
// duplicating text, and checks that ParseFile reports an error exactly when
// Python 3.12's ast.parse does. It needs python3.12 (LCP_PYTHON); 3,000
// snippets by default, 100,000 with LCP_PYSRC_FULL=1; LCP_PYSRC_SEED picks
// another random sample.
func TestSyntaxDifferential(t *testing.T) {
	python := ""
	for _, c := range []string{os.Getenv("LCP_PYTHON"), "python3.12", "/root/.pyenv/versions/3.12.1/bin/python3.12"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			if out, err := exec.Command(p, "-c", "import sys; print(sys.version_info >= (3, 12))").Output(); err == nil && strings.TrimSpace(string(out)) == "True" {
				python = p
				break
			}
		}
	}
	if python == "" {
		t.Skip("no python3.12: syntax differential test skipped")
	}
	n := 3000
	if os.Getenv("LCP_PYSRC_FULL") != "" {
		n = 100000
	}
	out, err := exec.Command(python, "-c", `import sysconfig; print(sysconfig.get_paths()["stdlib"])`).Output()
	if err != nil {
		t.Skip(err)
	}
	var files []string
	filepath.WalkDir(strings.TrimSpace(string(out)), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".py") && !strings.Contains(path, "site-packages") {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	seed := int64(42)
	if v, err := strconv.ParseInt(os.Getenv("LCP_PYSRC_SEED"), 10, 64); err == nil {
		seed = v
	}
	r := rand.New(rand.NewSource(seed))
	bases := append([]string(nil), valid...)
	for _, s := range invalid {
		bases = append(bases, s.src)
	}
	for i := 0; i < 300 && len(files) > 0; i++ {
		src, err := os.ReadFile(files[r.Intn(len(files))])
		if err != nil {
			continue
		}
		lines := strings.Split(string(src), "\n")
		k := r.Intn(len(lines))
		end := min(len(lines), k+1+r.Intn(10))
		bases = append(bases, dedent(strings.Join(lines[k:end], "\n")))
	}
	pieces := []string{"(", ")", "[", "]", "{", "}", ":", ",", ";", "=", ":=", "*", "**", "/", ".", "@", "->", "if", "else",
		"for", "in", "not", "lambda", "yield", "await", "async", "def", "class", "return", "del", "import", "from", "as",
		"with", "try", "except", "match", "case", "type", "_", "x", "1", "1.5", "0x1", `"s"`, "f'{x}'", "f'{", "\n", "\n    ",
		"\\\n", "#", "global", "pass", "!", "|", "-", "'", `"`, `"""`, "b'x'", "\t", " "}
	var srcs []string
	for len(srcs) < n {
		s := bases[r.Intn(len(bases))]
		for m := r.Intn(4); m > 0 && len(s) > 0; m-- {
			k := r.Intn(len(s))
			switch r.Intn(4) {
			case 0:
				s = s[:k] + s[k+1:]
			case 1:
				s = s[:k] + pieces[r.Intn(len(pieces))] + s[k:]
			case 2:
				s = s[:k] + " " + pieces[r.Intn(len(pieces))] + " " + s[k:]
			default:
				j := r.Intn(len(s))
				s = s[:k] + s[j:min(len(s), j+1+r.Intn(5))] + s[k:]
			}
		}
		if !strings.HasPrefix(s, "\ufeff") && strings.ToValidUTF8(s, "") == s {
			srcs = append(srcs, s)
		}
	}
	in, _ := json.Marshal(srcs)
	cmd := exec.Command(python, filepath.Join("testdata", "syntax_oracle.py"))
	cmd.Stdin = bytes.NewReader(in)
	res, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var verdicts []*string
	if err := json.Unmarshal(res, &verdicts); err != nil || len(verdicts) != len(srcs) {
		t.Fatalf("oracle output: %v (%d verdicts)", err, len(verdicts))
	}
	bad, valid := 0, 0
	for i, src := range srcs {
		_, err := ParseFile("m.py", []byte(src))
		if verdicts[i] == nil {
			valid++
		}
		if (err == nil) != (verdicts[i] == nil) {
			bad++
			if bad <= 10 {
				want := "ok"
				if verdicts[i] != nil {
					want = *verdicts[i]
				}
				t.Errorf("%q: Python: %s; Go: %v", src, want, firstLine(err))
			}
		}
	}
	t.Logf("%d snippets (%d valid for Python), %d disagreements", len(srcs), valid, bad)
}

func dedent(s string) string {
	lines := strings.Split(s, "\n")
	margin := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := len(l) - len(strings.TrimLeft(l, " \t"))
		if margin < 0 || ind < margin {
			margin = ind
		}
	}
	for i, l := range lines {
		if len(l) >= margin && margin > 0 {
			lines[i] = l[margin:]
		}
	}
	return strings.Join(lines, "\n")
}
