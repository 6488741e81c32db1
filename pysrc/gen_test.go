package pysrc

import (
	"fmt"
	"math/rand"
	"strings"
)

// genToolFile writes a random but plausible tool file: parameters of every
// kind, annotations, literal and non-literal defaults, docstrings with
// parameter lines, decorators, nesting, classes, and now and then a syntax
// error. The same seed gives the same file.
func genToolFile(r *rand.Rand) string {
	var b strings.Builder
	if r.Intn(3) == 0 {
		fmt.Fprintf(&b, "TOOL_LIBRARY_NAME = %s\n", pick(r, `"Lib"`, `'Other lib'`, `f"x{1}"`))
	}
	b.WriteString("import os\nfrom typing import List, Dict, Optional\n\n")
	n := 1 + r.Intn(5)
	for i := 0; i < n; i++ {
		genFunc(r, &b, "", i, 0)
		b.WriteString("\n\n")
	}
	if r.Intn(10) == 0 {
		b.WriteString(pick(r, "def broken(:\n    pass\n", "x = (\n", "def tool_bad(a, a=1, b):\n    pass\n", "print 'x'\n", "f(**k, *a)\n"))
	}
	return b.String()
}

func pick(r *rand.Rand, opts ...string) string { return opts[r.Intn(len(opts))] }

var annotations = []string{"int", "str", "float", "bool", "list", "dict", "List[int]", "Optional[str]", "'int'", `"Dict[str, int]"`,
	"bytes", "None", "Point", "x.y", "int | None", "list[dict[str, float]]", "Literal['a', 'b']", "ﬂoat", "'FLOAT'", "Any",
	"typing.Sequence[bool]", "Callable[[int], str]", "tuple[int, ...]", "NUMBER", "'İnt'", "array", "object", "set[int]"}

var defaults = []string{"0", "1", "-1", "+7", "10**3", "2 ** 100", "123456789012345678901234567890", "0x_FF", "0o17", "0b1",
	"1.5", "-0.0", "1e22", "1e-07", "1e16", "1234567890123456.0", "0.1", "3.14159", "1e999", "-1e999", "1_000.000_1", ".5", "5.",
	"1j", "None", "True", "False", "...", "''", `"x"`, `'it''s'`, `"q\"uote"`, `'\u00e9'`, `r'\d+'`, `"\n\t"`, `b'x'`, `u'u'`,
	`'"both"'`, `"'"`, `'\\'`, "[]", "()", "{}", "[1, 2]", "(1, 'a')", "{'a': 1, 'b': [None, True]}", "{'a': 1, 'a': 2}",
	"{1: 2}", "{1, 2}", "set()", "frozenset()", "[1, b'x']", "{**x}", "x", "a.b", "f(1, k=2)", "lambda: 0", "lambda x, *y, **z: x",
	"[i for i in r]", "{k: v for k, v in d}", "(a for a in b)", "x if y else z", "not x", "a or b and c", "(w := 1)", "-x",
	"~5", "--1", "-True", "a < b <= c", "x[1:2, ::3]", "x[::2]", "{**a, 'b': 1}", "f(*a, **k)", "obj.attr['k']", "print",
	`f"{x!r:>{w}}"`, `f"a{{b}}"`, `f"{x=}"`, "(1,)", "((1, 2), [3])", "[[], {}]", "'a' 'b'", "os.path.join('a', 'b')",
	"await_", "-(1) ** 2", "(-1) ** 2", "1 if 2 else 3", "{'k': (1, 2)}", "[1e999]", "{'a': {'b': -0.5}}"}

var docLines = []string{"Do the thing.", "Summary line.", "", "Args:", "    {p} (int): the {p}.", "    {p}: described.",
	"- {p}: dash bullet", "* {p} (str) - star", "1. {p}: numbered", "{p} -- double dash", "Returns:", "    dict: result",
	"\t{p}:\ttabbed", "{p}(int):tight", "   ", "Line with\\ttab escape.", "Ünïcödé line.", "{p} : spaced"}

func genFunc(r *rand.Rand, b *strings.Builder, indent string, i, depth int) {
	if r.Intn(4) == 0 {
		fmt.Fprintf(b, "%s@%s\n", indent, pick(r, "deco", "functools.wraps(f)", "property", "a.b(c=1)"))
	}
	async := ""
	if r.Intn(5) == 0 {
		async = "async "
	}
	name := pick(r, "tool_a", "tool_b", "tool_search", "tool_x_prompt", "helper", "tool_dup", "tool_ﬁle", "tool_"+fmt.Sprint(i))
	var params []string
	np := r.Intn(6)
	pnames := []string{}
	sawDefault := false
	for k := 0; k < np; k++ {
		p := pick(r, "a", "b", "count", "path", "tool_context", "args", "kwargs", "x1", "naïve", "ｆｕｌｌ", "q")
		pnames = append(pnames, p)
		s := p
		if r.Intn(2) == 0 {
			s += ": " + annotations[r.Intn(len(annotations))]
		}
		if sawDefault || r.Intn(2) == 0 {
			s += " = " + defaults[r.Intn(len(defaults))]
			sawDefault = true
		}
		params = append(params, s)
	}
	switch r.Intn(6) {
	case 0:
		params = append(params, "*args", "**kwargs")
	case 1:
		params = append(params, "*", "k: int = "+defaults[r.Intn(len(defaults))], "req")
	case 2:
		if len(params) > 0 {
			params = append(params[:1], append([]string{"/"}, params[1:]...)...)
		}
	case 3:
		params = append(params, "**options")
	}
	fmt.Fprintf(b, "%s%sdef %s(%s)%s:\n", indent, async, name, strings.Join(params, ", "), pick(r, "", " -> dict", " -> 'str'"))
	in := indent + pick(r, "    ", "\t", "  ")
	switch r.Intn(6) {
	case 0: // no docstring
	case 1:
		fmt.Fprintf(b, "%s%s\n", in, pick(r, `"One line."`, `'single'`, `""`, `b"bytes"`, `f"f{1}"`, `"a" "b"`, `("paren")`))
	default:
		q := pick(r, `"""`, `'''`, `r"""`)
		fmt.Fprintf(b, "%s%s", in, q)
		nl := 1 + r.Intn(7)
		for k := 0; k < nl; k++ {
			line := docLines[r.Intn(len(docLines))]
			p := "zz"
			if len(pnames) > 0 {
				p = pnames[r.Intn(len(pnames))]
			}
			line = strings.ReplaceAll(line, "{p}", p)
			if k == 0 {
				b.WriteString(line + "\n")
			} else {
				fmt.Fprintf(b, "%s%s%s\n", in, pick(r, "", "  ", "    "), line)
			}
		}
		fmt.Fprintf(b, "%s%s\n", in, q[len(q)-3:])
	}
	if depth < 2 && r.Intn(4) == 0 {
		genFunc(r, b, in, i+100, depth+1)
	}
	if depth < 2 && r.Intn(6) == 0 {
		fmt.Fprintf(b, "%sclass K:\n", in)
		genFunc(r, b, in+"    ", i+200, depth+1)
	}
	fmt.Fprintf(b, "%sreturn %s\n", in, pick(r, "None", "1", "{'ok': True}", "a if True else b"))
}
