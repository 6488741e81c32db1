package parser

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/scanner"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Snippets that ast.parse of Python 3.12 accepts, including ones that only
// later compiler passes reject.
var valid = []string{
	"x = 1",
	"x: int = 1",
	"(x): int",
	"a.b: int",
	"a = b = *c, d",
	"*a, = b",
	"x = *a",
	"for *x in y: pass",
	"del (a, b), [c]",
	"del x,",
	"def f(a, /, b=1, *c, d, e=2, **f) -> int: pass",
	"def f(a, a): pass",
	"def f(*, a): pass",
	"def f(*args: *Ts): pass",
	"lambda a, /, b=1, *, c: a",
	"f(a, *b, c=1, *d, **e)",
	"f(x for x in y)",
	"f(a := 1)",
	"a[b:c, *d]",
	"a[*b]",
	"x = [*a, *b]",
	"x = {**a, 'b': 1}",
	"x = {a: b for a, b in c}",
	"x = (yield)",
	"x = yield from y",
	"await x",
	"async def f():\n    async for a in b: pass\n    async with a as b: pass",
	"return",
	"nonlocal x",
	"f(a=1, a=2)",
	"class A[T, *Ts, **P](B, metaclass=M): pass",
	"type X[T: int] = list[T]",
	"type = 1",
	"match = 1",
	"match x:\n    case [1, *rest] | {'k': v, **kw} | P(x=0) | None: pass\n    case -1 + 2j: pass\n    case a.b if c: pass",
	"try:\n    pass\nexcept* ValueError as e:\n    pass",
	"with (a as b, c as d,): pass",
	"with (a, b) as c: pass",
	"@x := y\ndef f(): pass",
	"if (n := 10) > 5: pass",
	"x = f'{a!r:>{w}} {b=} {c:{d}.{e}}'",
	`x = f"{"nested"}" f'{f'{x}'}'`,
	"x = 1if y else 2",
	"x = 0x_FF + 0o17 + 0b1 + 1_000.5e-3j",
	"x = '\\N{BULLET} \\N{no-break space} \\N{LINE FEED} \\N{CJK UNIFIED IDEOGRAPH-4E00}'",
	"x = b'\\777' rb'\\d'",
	"if x:\n    pass\n      ",
	"\npass\n    \\\n\npass\n",
	"x = (1 +\n  2)  # comment\n",
	"def f():\n\t\"\"\"doc\"\"\"\n\treturn 1",
}

// Snippets that ast.parse rejects, with the error written inline.
var invalid = []struct{ src, err string }{
	{"def f(a=1, b): pass", "1:12: parameter without a default follows parameter with a default"},
	{"def f(*, **k): pass", "1:7: named arguments must follow bare *"},
	{"def f(*a, *b): pass", "1:11: * argument may appear only once"},
	{"def f(**k, a): pass", "1:12: arguments cannot follow var-keyword argument"},
	{"def f(*a=1): pass", "1:9: var-positional argument cannot have default value"},
	{"def f(a, /, b, /): pass", "1:16: / may appear only once"},
	{"f(**k, *a)", "1:8: iterable argument unpacking follows keyword argument unpacking"},
	{"f(a=1, b)", "1:8: positional argument follows keyword argument"},
	{"f(x for x in y, 1)", "1:3: Generator expression must be parenthesized"},
	{"del f()", "1:5: cannot delete function call"},
	{"f() = 1", "1:1: cannot assign to function call"},
	{"(a, b) += 1", "1:1: 'tuple' is an illegal expression for augmented assignment"},
	{"a, b: int", "1:1: only single target (not tuple) can be annotated"},
	{"(*a)", "1:2: cannot use starred expression here"},
	{"(a.b := 1)", "1:2: cannot use assignment expressions with attribute"},
	{"a := 1", "1:3: invalid syntax"},
	{"print 'x'", "1:7: invalid syntax"},
	{"x = a if b", "1:5: expected 'else' after 'if' expression"},
	{"if x:\npass", "2:1: expected an indented block after 'if' statement on line 1"},
	{" x", "1:2: unexpected indent"},
	{"try:\n    pass\n", "3:1: expected 'except' or 'finally' block"},
	{"try:\n pass\nexcept* ValueError:\n pass\nexcept ValueError:\n pass", "5:1: cannot have both 'except' and 'except*' on the same 'try'"},
	{"from x import a,", "1:16: trailing comma not allowed without surrounding parentheses"},
	{"x = {**a, b}", "1:12: ':' expected after dictionary key"},
	{"x = 'a' b'b'", "1:9: cannot mix bytes and nonbytes literals"},
	{"x = b'é'", "1:5: bytes can only contain ASCII literal characters"},
	{"x = '\\x4'", "1:5: (unicode error) 'unicodeescape' codec can't decode bytes: truncated \\xXX escape"},
	{"x = '\\N{NO SUCH NAME}'", "1:5: (unicode error) 'unicodeescape' codec can't decode bytes: unknown Unicode character name"},
	{"x = f'{}'", "1:8: f-string: valid expression required before '}'"},
	{"x = f'{x!z}'", "1:10: f-string: invalid conversion character \"z\": expected 's', 'r', or 'a'"},
	{"x = f'{lambda x: 1}'", "1:8: f-string: lambda expressions are not allowed without parentheses"},
	{"x = f'{x:{y:{z:{w}}}}'", "1:16: f-string: expressions nested too deeply"},
	{"match x:\n case 1+2: pass", "2:9: imaginary number required in complex literal"},
	{"match x:\n case a as _: pass", "2:12: cannot use '_' as a target"},
	{"def f[*T: int](): pass", "1:9: cannot use bound with TypeVarTuple"},
	{"[x for x in *a]", "1:13: invalid syntax"},
	{"x = (1]", "1:7: closing parenthesis ']' does not match opening parenthesis '('"},
	{"x = 1\x00", "1:6: source code cannot contain null bytes"},
}

func TestValid(t *testing.T) {
	for _, src := range valid {
		if _, err := ParseFile("t.py", []byte(src)); err != nil {
			t.Errorf("%q: unexpected error:\n%v", src, err)
		}
	}
}

func TestInvalid(t *testing.T) {
	for _, tt := range invalid {
		_, err := ParseFile("t.py", []byte(tt.src))
		var list scanner.ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Errorf("%q: no error, want %s", tt.src, tt.err)
			continue
		}
		if got := strings.TrimPrefix(list[0].Error(), "t.py:"); got != tt.err {
			t.Errorf("%q:\n got %s\nwant %s", tt.src, got, tt.err)
		}
	}
}

func TestNotUTF8(t *testing.T) {
	_, err := ParseFile("t.py", []byte("x = 'caf\xe9'\n"))
	if !errors.Is(err, ErrNotUTF8) {
		t.Fatalf("err = %v, want ErrNotUTF8", err)
	}
}

// TestAdversarial feeds inputs that are deep, long or broken: the parser
// must return (with or without errors) and never panic.
func TestAdversarial(t *testing.T) {
	big := func(s string, n int) string { return strings.Repeat(s, n) }
	inputs := map[string]struct {
		src     string
		wantErr bool
	}{
		"deep parens":       {"x = " + big("(", 100000) + big(")", 100000), true},
		"deep brackets":     {"x = " + big("[", 100000), true},
		"unary chain":       {"x = " + big("-", 1000000) + "1", true},
		"power chain":       {"x = " + big("2**", 100000) + "2", true},
		"sum chain":         {"x = 1" + big("+1", 200000), true},
		"attribute chain":   {"x = a" + big(".b", 200000), true},
		"call chain":        {"x = f" + big("()", 200000), true},
		"not chain":         {"x = " + big("not ", 100000) + "x", true},
		"lambda chain":      {"x = " + big("lambda: ", 100000) + "1", true},
		"if-else chain":     {"x = 1" + big(" if 1 else 1", 100000), true},
		"nested f-strings":  {big("f'{", 5000) + big("}'", 5000), true},
		"deep blocks":       {deepBlocks(5000), true},
		"megabyte line":     {"x = " + big("a + ", 250000) + "a\n", true},
		"megabyte string":   {"x = '" + big("a", 1<<20) + "'\n", false},
		"megabyte comment":  {"#" + big("c", 1<<20) + "\nx = 1\n", false},
		"many statements":   {big("x = 1\n", 200000), false},
		"many errors":       {big("def broken(:\n", 100000), true},
		"null bytes":        {big("\x00", 1000), true},
		"only indentation":  {big(" ", 100000), false},
		"unclosed f-string": {"f'{" + big("x", 100000), true},
		"long sum ok":       {"x = 1" + big("+1", 500), false},
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			mod, err := ParseFile("t.py", []byte(in.src))
			if mod == nil {
				t.Fatal("nil module")
			}
			if (err != nil) != in.wantErr {
				t.Errorf("error = %v, want error %v", firstLine(err), in.wantErr)
			}
		})
	}
}

func deepBlocks(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat(" ", i))
		b.WriteString("if x:\n")
	}
	b.WriteString(strings.Repeat(" ", n) + "pass\n")
	return b.String()
}

func firstLine(err error) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// TestPartialTree checks that a file with an error still yields the
// statements around it.
func TestPartialTree(t *testing.T) {
	src := "def tool_a():\n    pass\n\ndef broken() oops:\n    pass\n\ndef tool_b():\n    pass\n"
	mod, err := ParseFile("t.py", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	var names []string
	ast.Inspect(mod, func(n ast.Node) bool {
		if fn, ok := n.(*ast.FunctionDef); ok {
			names = append(names, fn.Name)
		}
		return true
	})
	if strings.Join(names, ",") != "tool_a,tool_b" {
		t.Errorf("functions in the partial tree: %v", names)
	}
}

// TestGolden parses testdata/golden/*.py and compares ast.Dump of every
// statement with testdata/golden/*.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.py"))
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := ParseFile(filepath.Base(path), src)
		var b strings.Builder
		if err != nil {
			b.WriteString("errors:\n" + err.Error() + "\n")
		}
		for _, st := range mod.Body {
			b.WriteString(ast.Dump(st) + "\n")
		}
		golden := strings.TrimSuffix(path, ".py") + ".golden"
		if *update {
			if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if string(want) != b.String() {
			t.Errorf("%s: mismatch (-want +got):\n-%s\n+%s", path, want, b.String())
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range valid {
		f.Add([]byte(s))
	}
	for _, s := range invalid {
		f.Add([]byte(s.src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		mod, _ := ParseFile("f.py", src)
		if mod == nil {
			t.Fatal("nil module")
		}
		n := 0
		ast.Inspect(mod, func(ast.Node) bool { n++; return true })
		if n > 4*len(src)+10 {
			t.Fatalf("%d nodes for %d bytes", n, len(src))
		}
	})
}

func TestDeepBrokenBlocks(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 4000; i++ {
		b.WriteString(strings.Repeat(" ", i) + "if x x:\n")
	}
	if _, err := ParseFile("t.py", []byte(b.String())); err == nil {
		t.Fatal("no error")
	}
}
