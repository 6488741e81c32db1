package pyval

import (
	"math"
	"testing"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/parser"
)

func parseExpr(t *testing.T, src string) ast.Expr {
	t.Helper()
	mod, err := parser.ParseFile("e.py", []byte(src+"\n"))
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	if len(mod.Body) != 1 {
		t.Fatalf("%q: %d statements", src, len(mod.Body))
	}
	es, ok := mod.Body[0].(*ast.ExprStmt)
	if !ok {
		t.Fatalf("%q: not an expression", src)
	}
	return es.Value
}

// expectUnparse is one line of the unparse table: source -> ast.unparse.
func expectUnparse(t *testing.T, src, want string) {
	t.Helper()
	if got := Unparse(parseExpr(t, src)); got != want {
		t.Errorf("Unparse(%s) = %s, want %s", src, got, want)
	}
}

func TestUnparse(t *testing.T) {
	expectUnparse(t, "-(1)**2", "-1 ** 2")
	expectUnparse(t, "(-1)**2", "(-1) ** 2")
	expectUnparse(t, "2**-1", "2 ** (-1)")
	expectUnparse(t, "2**3**4", "2 ** 3 ** 4")
	expectUnparse(t, "(2**3)**4", "(2 ** 3) ** 4")
	expectUnparse(t, "a - (b - c)", "a - (b - c)")
	expectUnparse(t, "(a - b) - c", "a - b - c")
	expectUnparse(t, "not (a and b)", "not (a and b)")
	expectUnparse(t, "(a or b) and c", "(a or b) and c")
	expectUnparse(t, "a or (b or c)", "a or (b or c)")
	expectUnparse(t, "(w := 1)", "(w := 1)")
	expectUnparse(t, "(x := a + 1)", "(x := (a + 1))")
	expectUnparse(t, "(1, 2)", "(1, 2)")
	expectUnparse(t, "(1,)", "(1,)")
	expectUnparse(t, "()", "()")
	expectUnparse(t, "x[1:2, ::3]", "x[1:2, ::3]")
	expectUnparse(t, "x[(1, 2)]", "x[1, 2]")
	expectUnparse(t, "x[()]", "x[()]")
	expectUnparse(t, "f(*a, k=1, **kw)", "f(*a, k=1, **kw)")
	expectUnparse(t, "f(x for x in y)", "f((x for x in y))")
	expectUnparse(t, "[x async for x in y if x if not x]", "[x async for x in y if x if not x]")
	expectUnparse(t, "{**a, 'b': 1}", "{**a, 'b': 1}")
	expectUnparse(t, "{1, 2}", "{1, 2}")
	expectUnparse(t, "lambda: 0", "lambda: 0")
	expectUnparse(t, "lambda a, /, b=1, *c, d, e=2, **f: a", "lambda a, /, b=1, *c, d, e=2, **f: a")
	expectUnparse(t, "lambda *, k: k", "lambda *, k: k")
	expectUnparse(t, "x if y else z", "x if y else z")
	expectUnparse(t, "(x if y else z) if w else v", "(x if y else z) if w else v")
	expectUnparse(t, "a < b <= c", "a < b <= c")
	expectUnparse(t, "(a < b) < c", "(a < b) < c")
	expectUnparse(t, "a is not b not in c", "a is not b not in c")
	expectUnparse(t, "1 .real", "1 .real")
	expectUnparse(t, "1.5.real", "1.5.real")
	expectUnparse(t, "0xFF", "255")
	expectUnparse(t, "1_000", "1000")
	expectUnparse(t, "1e999", "1e309")
	expectUnparse(t, "1e999j", "1e309j")
	expectUnparse(t, "1e22", "1e+22")
	expectUnparse(t, "0.0000001", "1e-07")
	expectUnparse(t, "2j", "2j")
	expectUnparse(t, "'it''s'", "'its'")
	expectUnparse(t, `"it's"`, `"it's"`)
	expectUnparse(t, `'both \' and "'`, `'both \' and "'`)
	expectUnparse(t, `"\N{BULLET}\x00\t\u2028"`, `'•\x00\t\u2028'`)
	expectUnparse(t, `b'\x00\xff"'`, `b'\x00\xff"'`)
	expectUnparse(t, `u'x'`, `u'x'`)
	expectUnparse(t, `"\ud800"`, `'\ud800'`)
	expectUnparse(t, "...", "...")
	expectUnparse(t, "*a, b", "(*a, b)")
	expectUnparse(t, "await x", "await x")
	expectUnparse(t, "(yield x)", "(yield x)")
	expectUnparse(t, "f'{x!r:>{w}}'", "f'{x!r:>{w}}'")
	expectUnparse(t, `f"{x=}"`, "f'x={x!r}'")
	expectUnparse(t, `f"{ {1} }"`, "f'{ {1}}'")
	expectUnparse(t, `f"a'b{x}"`, `f"a'b{x}"`)
	expectUnparse(t, `f"a'b\"{x}"`, `f'''a'b"{x}'''`)
	expectUnparse(t, `f"{x:\n}"`, "f'{x:\\n}'")
	expectUnparse(t, "set()", "set()")
	expectUnparse(t, "a.b[c](d)", "a.b[c](d)")
	expectUnparse(t, "-x ** 2", "-x ** 2")
	expectUnparse(t, "~-+x", "~-+x")
	expectUnparse(t, "a @ b // c % d", "a @ b // c % d")
	expectUnparse(t, "a | b ^ c & d << e", "a | b ^ c & d << e")
	expectUnparse(t, "(a | b) ^ c", "(a | b) ^ c")
}

func TestLiteralJSON(t *testing.T) {
	tests := []struct {
		src, want string // want "" = not a JSON literal
	}{
		{"1", "1"},
		{"-0", "0"},
		{"+7", "7"},
		{"-0.0", "-0.0"},
		{"0x_FF", "255"},
		{"2**100", ""},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{"-9223372036854775809", "-9223372036854775809"},
		{"1.5", "1.5"},
		{"1e22", "1e+22"},
		{"1e16", "1e+16"},
		{"1234567890123456.0", "1234567890123456.0"},
		{"0.0001", "0.0001"},
		{"0.00001", "1e-05"},
		{"1e999", ""},
		{"-1e999", ""},
		{"1j", ""},
		{"1 + 2j", ""},
		{"'a' 'b'", `"ab"`},
		{`"q\"uote"`, `"q\"uote"`},
		{`'\x00'`, `"\u0000"`},
		{`"\ud800"`, "\"\uFFFD\""},
		{"b'x'", ""},
		{"None", "null"},
		{"True", "true"},
		{"...", ""},
		{"(1, (2, 3))", "[1, [2, 3]]"},
		{"[]", "[]"},
		{"{}", "{}"},
		{"{'a': 1, 'a': 2, 'b': 3}", `{"a": 2, "b": 3}`},
		{"{'a': 1, **x}", ""},
		{"{1: 2}", ""},
		{"{1, 2}", ""},
		{"set()", ""},
		{"[1, b'x']", ""},
		{"-True", ""},
		{"--1", ""},
		{"-(1)", "-1"},
		{"x", ""},
		{"f'x'", ""},
	}
	for _, tt := range tests {
		got, ok := LiteralJSON(parseExpr(t, tt.src))
		if !ok {
			got = ""
		}
		if got != tt.want {
			t.Errorf("LiteralJSON(%s) = %q, %v; want %q", tt.src, got, ok, tt.want)
		}
	}
}

func TestFloatRepr(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1, "1.0"}, {1.5, "1.5"}, {0.1, "0.1"},
		{1e16, "1e+16"}, {1e15, "1000000000000000.0"}, {123456789012345678, "1.2345678901234568e+17"},
		{1e-4, "0.0001"}, {1e-5, "1e-05"}, {1e22, "1e+22"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
		{5e-324, "5e-324"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"}, {-2.5e-7, "-2.5e-07"},
	}
	for _, tt := range tests {
		if got := FloatRepr(tt.f); got != tt.want {
			t.Errorf("FloatRepr(%v) = %s, want %s", tt.f, got, tt.want)
		}
	}
}

func TestStrRepr(t *testing.T) {
	tests := []struct{ s, want string }{
		{"", "''"}, {"a", "'a'"}, {"'", `"'"`}, {`"`, `'"'`}, {`'"`, `'\'"'`}, {"\\", `'\\'`},
		{"\n\r\t\x00\x7f", `'\n\r\t\x00\x7f'`}, {"é", "'é'"}, {"\u00a0", `'\xa0'`}, {"\u2028", `'\u2028'`},
		{"\U000e0001", `'\U000e0001'`}, {"😀", "'😀'"},
	}
	for _, tt := range tests {
		if got := StrRepr(tt.s); got != tt.want {
			t.Errorf("StrRepr(%q) = %s, want %s", tt.s, got, tt.want)
		}
	}
}

func FuzzUnparse(f *testing.F) {
	for _, s := range []string{"a + b", "f'{x!r:{y}}'", "lambda *a: 0", "{**a}", "'\\ud800'", "1e999j"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		mod, err := parser.ParseFile("f.py", []byte(src))
		if err != nil {
			return
		}
		ast.Inspect(mod, func(n ast.Node) bool {
			if _, ok := n.(*ast.FormattedValue); ok {
				return false // not an expression on its own
			}
			if e, ok := n.(ast.Expr); ok {
				text := Unparse(e)
				LiteralJSON(e)
				// Unparsed text parses again (Python guarantees it for
				// expressions it can print).
				if _, err := parser.ParseFile("u.py", []byte("("+text+")\n")); err != nil {
					if _, isStar := e.(*ast.Starred); !isStar {
						if _, isSlice := e.(*ast.Slice); !isSlice {
							t.Errorf("unparse of %q gives %q, which does not parse: %v", src, text, err)
						}
					}
				}
			}
			return true
		})
	})
}
