package pyval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/parser"
	"github.com/lcptools/lcp/pysrc/token"
)

func python312(t *testing.T) string {
	t.Helper()
	for _, c := range []string{os.Getenv("LCP_PYTHON"), "python3.12", "/root/.pyenv/versions/3.12.1/bin/python3.12"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			out, err := exec.Command(p, "-c", "import sys; print(sys.version_info >= (3, 12))").Output()
			if err == nil && strings.TrimSpace(string(out)) == "True" {
				return p
			}
		}
	}
	t.Skip("no python3.12: unparse differential test skipped (3.11's ast.unparse differs)")
	return ""
}

type item struct {
	line, col int
	text      string
}

func goItems(file *token.File, mod *ast.Module) []item {
	var out []item
	add := func(e ast.Expr, at ast.Node) {
		p := file.Position(at.Pos())
		out = append(out, item{p.Line, p.Column - 1, Unparse(e)})
	}
	ast.Inspect(mod, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ExprStmt:
			add(n.Value, n)
		case *ast.Assign:
			add(n.Value, n)
		case *ast.AnnAssign:
			if n.Value != nil {
				add(n.Value, n)
			}
		case *ast.AugAssign:
			add(n.Value, n)
		case *ast.Return:
			if n.Value != nil {
				add(n.Value, n)
			}
		case *ast.Arg:
			if n.Annotation != nil {
				add(n.Annotation, n.Annotation)
			}
		case *ast.Arguments:
			for _, d := range n.Defaults {
				add(d, d)
			}
			for _, d := range n.KwDefaults {
				if d != nil {
					add(d, d)
				}
			}
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.line != b.line {
			return a.line < b.line
		}
		if a.col != b.col {
			return a.col < b.col
		}
		return a.text < b.text
	})
	return out
}

// TestUnparseStdlib compares Unparse with Python 3.12's ast.unparse on the
// expressions of a sample of the standard library (every file with
// LCP_PYSRC_FULL=1).
func TestUnparseStdlib(t *testing.T) {
	py := python312(t)
	out, err := exec.Command(py, "-c", `import sysconfig; print(sysconfig.get_paths()["stdlib"])`).Output()
	if err != nil {
		t.Skip(err)
	}
	root := strings.TrimSpace(string(out))
	var files []string
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".py") && !strings.Contains(path, "site-packages") {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	if os.Getenv("LCP_PYSRC_FULL") == "" {
		var s []string
		for i := 0; i < len(files); i += len(files)/60 + 1 {
			s = append(s, files[i])
		}
		files = s
	}
	cmd := exec.Command(py, filepath.Join("testdata", "unparse_ref.py"))
	cmd.Stdin = strings.NewReader(strings.Join(files, "\n") + "\n")
	res, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(res))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	compared, failures := 0, 0
	for i := 0; sc.Scan(); i++ {
		var want [][3]any
		if err := json.Unmarshal(sc.Bytes(), &want); err != nil || want == nil {
			continue
		}
		src, err := os.ReadFile(files[i])
		if err != nil {
			continue
		}
		src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
		mod, file, err := parser.Parse(files[i], src)
		if err != nil {
			t.Errorf("%s: %v", files[i], err)
			continue
		}
		got := goItems(file, mod)
		wantItems := make([]item, len(want))
		for k, w := range want {
			wantItems[k] = item{int(w[0].(float64)), int(w[1].(float64)), w[2].(string)}
		}
		sort.Slice(wantItems, func(a, b int) bool {
			x, y := wantItems[a], wantItems[b]
			if x.line != y.line {
				return x.line < y.line
			}
			if x.col != y.col {
				return x.col < y.col
			}
			return x.text < y.text
		})
		if len(got) != len(wantItems) {
			t.Errorf("%s: %d expressions, Python %d", files[i], len(got), len(wantItems))
			continue
		}
		for k := range got {
			compared++
			if ValidUTF8(got[k].text) != ValidUTF8(wantItems[k].text) && failures < 30 {
				failures++
				t.Errorf("%s:%d:%d:\n  python %s\n  go     %s", files[i], wantItems[k].line, wantItems[k].col, wantItems[k].text, got[k].text)
			}
		}
	}
	t.Logf("%d files, %d expressions compared", len(files), compared)
}
