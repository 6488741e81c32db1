package pyval

import (
	"strings"
	"sync"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/token"
)

// Precedence levels of Python 3.12's ast._Precedence (BOR equals EXPR).
const (
	precNamedExpr = 1 + iota
	precTuple
	precYield
	precTest
	precOr
	precAnd
	precNot
	precCmp
	precExpr
	precBXor
	precBAnd
	precShift
	precArith
	precTerm
	precFactor
	precPower
	precAwait
	precAtom
)

const precBOr = precExpr

func next(p int) int {
	if p < precAtom {
		return p + 1
	}
	return p
}

// infStr is what ast.unparse writes for an infinite float.
const infStr = "1e309"

// Unparse returns the source text of e as Python 3.12's ast.unparse prints
// it.
func Unparse(e ast.Expr) string {
	if n, ok := e.(*ast.Name); ok {
		return n.Id
	}
	var u unparser
	u.expr(e, precTest)
	return u.b.String()
}

type unparser struct {
	b strings.Builder
}

func (u *unparser) w(s string) { u.b.WriteString(s) }

func (u *unparser) open(cond bool, s string) {
	if cond {
		u.w(s)
	}
}

var binopPrec = sync.OnceValue(func() map[token.Token]int {
	return map[token.Token]int{
		token.PLUS: precArith, token.MINUS: precArith, token.STAR: precTerm, token.AT: precTerm,
		token.SLASH: precTerm, token.PERCENT: precTerm, token.LEFTSHIFT: precShift, token.RIGHTSHIFT: precShift,
		token.VBAR: precBOr, token.CIRCUMFLEX: precBXor, token.AMPER: precBAnd, token.DOUBLESLASH: precTerm,
		token.DOUBLESTAR: precPower,
	}
})

// expr writes e, which its parent gave precedence prec.
func (u *unparser) expr(e ast.Expr, prec int) {
	switch e := e.(type) {
	case *ast.NamedExpr:
		u.open(prec > precNamedExpr, "(")
		u.expr(e.Target, precAtom)
		u.w(" := ")
		u.expr(e.Value, precAtom)
		u.open(prec > precNamedExpr, ")")
	case *ast.Await:
		u.open(prec > precAwait, "(")
		u.w("await")
		if e.Value != nil {
			u.w(" ")
			u.expr(e.Value, precAtom)
		}
		u.open(prec > precAwait, ")")
	case *ast.Yield:
		u.open(prec > precYield, "(")
		u.w("yield")
		if e.Value != nil {
			u.w(" ")
			u.expr(e.Value, precAtom)
		}
		u.open(prec > precYield, ")")
	case *ast.YieldFrom:
		u.open(prec > precYield, "(")
		u.w("yield from ")
		u.expr(e.Value, precAtom)
		u.open(prec > precYield, ")")
	case *ast.JoinedStr:
		u.joinedStr(e)
	case *ast.FormattedValue:
		u.formattedValue(e)
	case *ast.Name:
		u.w(e.Id)
	case *ast.Constant:
		u.constant(e)
	case *ast.List:
		u.w("[")
		u.list(e.Elts, precTest)
		u.w("]")
	case *ast.ListComp:
		u.w("[")
		u.expr(e.Elt, precTest)
		u.comprehensions(e.Generators)
		u.w("]")
	case *ast.GeneratorExp:
		u.w("(")
		u.expr(e.Elt, precTest)
		u.comprehensions(e.Generators)
		u.w(")")
	case *ast.SetComp:
		u.w("{")
		u.expr(e.Elt, precTest)
		u.comprehensions(e.Generators)
		u.w("}")
	case *ast.DictComp:
		u.w("{")
		u.expr(e.Key, precTest)
		u.w(": ")
		u.expr(e.Value, precTest)
		u.comprehensions(e.Generators)
		u.w("}")
	case *ast.IfExp:
		u.open(prec > precTest, "(")
		u.expr(e.Body, next(precTest))
		u.w(" if ")
		u.expr(e.Test, next(precTest))
		u.w(" else ")
		u.expr(e.OrElse, precTest)
		u.open(prec > precTest, ")")
	case *ast.Set:
		if len(e.Elts) == 0 {
			u.w("{*()}")
			return
		}
		u.w("{")
		u.list(e.Elts, precTest)
		u.w("}")
	case *ast.Dict:
		u.w("{")
		for i, v := range e.Values {
			if i > 0 {
				u.w(", ")
			}
			var k ast.Expr
			if i < len(e.Keys) {
				k = e.Keys[i]
			}
			if k == nil {
				u.w("**")
				u.expr(v, precExpr)
			} else {
				u.expr(k, precTest)
				u.w(": ")
				u.expr(v, precTest)
			}
		}
		u.w("}")
	case *ast.Tuple:
		paren := len(e.Elts) == 0 || prec > precTuple
		u.open(paren, "(")
		u.items(e.Elts)
		u.open(paren, ")")
	case *ast.UnaryOp:
		op, p := "", precFactor
		switch e.Op {
		case token.NOT:
			op, p = "not", precNot
		case token.TILDE:
			op = "~"
		case token.PLUS:
			op = "+"
		case token.MINUS:
			op = "-"
		}
		u.open(prec > p, "(")
		u.w(op)
		if p != precFactor {
			u.w(" ")
		}
		u.expr(e.Operand, p)
		u.open(prec > p, ")")
	case *ast.BinOp:
		p := binopPrec()[e.Op]
		left, right := p, next(p)
		if e.Op == token.DOUBLESTAR {
			left, right = next(p), p
		}
		u.open(prec > p, "(")
		u.expr(e.Left, left)
		u.w(" " + e.Op.String() + " ")
		u.expr(e.Right, right)
		u.open(prec > p, ")")
	case *ast.Compare:
		u.open(prec > precCmp, "(")
		u.expr(e.Left, next(precCmp))
		for i, op := range e.Ops {
			u.w(" " + op.String() + " ")
			if i < len(e.Comparators) {
				u.expr(e.Comparators[i], next(precCmp))
			}
		}
		u.open(prec > precCmp, ")")
	case *ast.BoolOp:
		p := precOr
		op := " or "
		if e.Op == token.AND {
			p, op = precAnd, " and "
		}
		u.open(prec > p, "(")
		lvl := p
		for i, v := range e.Values {
			if i > 0 {
				u.w(op)
			}
			lvl = next(lvl)
			u.expr(v, lvl)
		}
		u.open(prec > p, ")")
	case *ast.Attribute:
		u.expr(e.Value, precAtom)
		if c, ok := e.Value.(*ast.Constant); ok && (c.Kind == ast.Int || c.Kind == ast.True || c.Kind == ast.False) {
			u.w(" ")
		}
		u.w(".")
		u.w(e.Attr)
	case *ast.Call:
		u.expr(e.Func, precAtom)
		u.w("(")
		comma := false
		for _, a := range e.Args {
			if comma {
				u.w(", ")
			}
			comma = true
			u.expr(a, precTest)
		}
		for _, k := range e.Keywords {
			if comma {
				u.w(", ")
			}
			comma = true
			if k.Arg == "" {
				u.w("**")
			} else {
				u.w(k.Arg + "=")
			}
			u.expr(k.Value, precTest)
		}
		u.w(")")
	case *ast.Subscript:
		u.expr(e.Value, precAtom)
		u.w("[")
		if t, ok := e.Slice.(*ast.Tuple); ok && len(t.Elts) > 0 {
			u.items(t.Elts)
		} else {
			u.expr(e.Slice, precTest)
		}
		u.w("]")
	case *ast.Starred:
		u.w("*")
		u.expr(e.Value, precExpr)
	case *ast.Slice:
		if e.Lower != nil {
			u.expr(e.Lower, precTest)
		}
		u.w(":")
		if e.Upper != nil {
			u.expr(e.Upper, precTest)
		}
		if e.Step != nil {
			u.w(":")
			u.expr(e.Step, precTest)
		}
	case *ast.Lambda:
		u.open(prec > precTest, "(")
		u.w("lambda")
		var args unparser
		args.arguments(e.Args)
		if args.b.Len() > 0 {
			u.w(" ")
			u.w(args.b.String())
		}
		u.w(": ")
		u.expr(e.Body, precTest)
		u.open(prec > precTest, ")")
	case *ast.BadExpr, nil:
		u.w("<bad expression>")
	}
}

// list writes elements separated by ", ".
func (u *unparser) list(elts []ast.Expr, prec int) {
	for i, x := range elts {
		if i > 0 {
			u.w(", ")
		}
		u.expr(x, prec)
	}
}

// items is ast._Unparser.items_view: a single item gets a trailing comma.
func (u *unparser) items(elts []ast.Expr) {
	if len(elts) == 1 {
		u.expr(elts[0], precTest)
		u.w(",")
		return
	}
	u.list(elts, precTest)
}

func (u *unparser) comprehensions(gens []*ast.Comprehension) {
	for _, g := range gens {
		if g.IsAsync {
			u.w(" async for ")
		} else {
			u.w(" for ")
		}
		u.expr(g.Target, precTuple)
		u.w(" in ")
		u.expr(g.Iter, next(precTest))
		for _, c := range g.Ifs {
			u.w(" if ")
			u.expr(c, next(precTest))
		}
	}
}

func (u *unparser) arg(a *ast.Arg) {
	u.w(a.Name)
	if a.Annotation != nil {
		u.w(": ")
		u.expr(a.Annotation, precTest)
	}
}

func (u *unparser) arguments(a *ast.Arguments) {
	if a == nil {
		return
	}
	first := true
	all := append(append([]*ast.Arg{}, a.PosOnly...), a.Args...)
	nd := len(all) - len(a.Defaults)
	for i, x := range all {
		if !first {
			u.w(", ")
		}
		first = false
		u.arg(x)
		if i >= nd && i-nd < len(a.Defaults) {
			u.w("=")
			u.expr(a.Defaults[i-nd], precTest)
		}
		if i+1 == len(a.PosOnly) {
			u.w(", /")
		}
	}
	if a.VarArg != nil || len(a.KwOnly) > 0 {
		if !first {
			u.w(", ")
		}
		first = false
		u.w("*")
		if a.VarArg != nil {
			u.w(a.VarArg.Name)
			if a.VarArg.Annotation != nil {
				u.w(": ")
				u.expr(a.VarArg.Annotation, precTest)
			}
		}
	}
	for i, k := range a.KwOnly {
		u.w(", ")
		u.arg(k)
		if i < len(a.KwDefaults) && a.KwDefaults[i] != nil {
			u.w("=")
			u.expr(a.KwDefaults[i], precTest)
		}
	}
	if a.KwArg != nil {
		if !first {
			u.w(", ")
		}
		u.w("**" + a.KwArg.Name)
		if a.KwArg.Annotation != nil {
			u.w(": ")
			u.expr(a.KwArg.Annotation, precTest)
		}
	}
}

func (u *unparser) constant(c *ast.Constant) {
	switch c.Kind {
	case ast.Ellipsis:
		u.w("...")
	case ast.True:
		u.w("True")
	case ast.False:
		u.w("False")
	case ast.None:
		u.w("None")
	case ast.Str:
		if c.U {
			u.w("u")
		}
		u.w(StrRepr(c.Str))
	case ast.Bytes:
		u.w(BytesRepr(c.Str))
	case ast.Int:
		u.w(IntDecimal(c.Raw))
	case ast.Float:
		u.w(floatText(FloatRepr(ParseFloat(c.Raw))))
	case ast.Complex:
		u.w(floatText(ComplexImagRepr(ParseFloat(c.Raw[:len(c.Raw)-1]))))
	}
}

// floatText substitutes an overflowing literal for infinities and
// inf - inf for NaNs, as ast.unparse does.
func floatText(s string) string {
	s = strings.ReplaceAll(s, "inf", infStr)
	return strings.ReplaceAll(s, "nan", "("+infStr+"-"+infStr+")")
}

var allQuotes = []string{"'", `"`, `"""`, "'''"}

func isMulti(q string) bool { return len(q) == 3 }

// strLiteralHelper is ast._Unparser._str_literal_helper with
// escape_special_whitespace=True.
func strLiteralHelper(s string, quoteTypes []string) (string, []string) {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := DecodeChar(s[i:])
		i += n
		if r == '\\' || !isPrintable(r) || isSurrogate(r) {
			b.WriteString(unicodeEscape(r))
		} else {
			b.WriteRune(r)
		}
	}
	escaped := b.String()
	var possible []string
	for _, q := range quoteTypes {
		if strings.Contains(escaped, "\n") && !isMulti(q) {
			continue
		}
		if strings.Contains(escaped, q) {
			continue
		}
		possible = append(possible, q)
	}
	if len(possible) == 0 {
		r := StrRepr(s)
		quote := r[:1]
		for _, q := range quoteTypes {
			if strings.Contains(q, r[:1]) {
				quote = q
				break
			}
		}
		return r[1 : len(r)-1], []string{quote}
	}
	if escaped != "" {
		last := escaped[len(escaped)-1]
		// stable sort: quotes whose first char differs from the last
		// character of the string come first
		var a, z []string
		for _, q := range possible {
			if q[0] == last {
				z = append(z, q)
			} else {
				a = append(a, q)
			}
		}
		possible = append(a, z...)
		if possible[0][0] == last {
			escaped = escaped[:len(escaped)-1] + "\\" + escaped[len(escaped)-1:]
		}
	}
	return escaped, possible
}

func (u *unparser) fstringInner(e ast.Expr, escapeNewlines bool) {
	switch e := e.(type) {
	case *ast.JoinedStr:
		for _, v := range e.Values {
			u.fstringInner(v, escapeNewlines)
		}
	case *ast.Constant:
		v := strings.ReplaceAll(strings.ReplaceAll(e.Str, "{", "{{"), "}", "}}")
		if escapeNewlines {
			v = strings.ReplaceAll(v, "\n", `\n`)
		}
		u.w(v)
	case *ast.FormattedValue:
		u.formattedValue(e)
	}
}

func (u *unparser) formattedValue(e *ast.FormattedValue) {
	u.w("{")
	var inner unparser
	inner.expr(e.Value, next(precTest))
	s := inner.b.String()
	if strings.HasPrefix(s, "{") {
		u.w(" ")
	}
	u.w(s)
	if e.Conversion != -1 {
		u.w("!" + string(rune(e.Conversion)))
	}
	if e.FormatSpec != nil {
		u.w(":")
		u.fstringInner(e.FormatSpec, true)
	}
	u.w("}")
}

func (u *unparser) joinedStr(e *ast.JoinedStr) {
	u.w("f")
	type part struct {
		text     string
		constant bool
	}
	parts := make([]part, 0, len(e.Values))
	for _, v := range e.Values {
		var b unparser
		b.fstringInner(v, false)
		_, isConst := v.(*ast.Constant)
		parts = append(parts, part{b.b.String(), isConst})
	}
	quoteTypes := allQuotes
	var out []string
	fallback := false
	for _, p := range parts {
		v := p.text
		if p.constant {
			var nq []string
			v, nq = strLiteralHelper(v, quoteTypes)
			if disjoint(nq, quoteTypes) {
				fallback = true
				break
			}
			quoteTypes = nq
		} else if strings.Contains(v, "\n") {
			var m []string
			for _, q := range quoteTypes {
				if isMulti(q) {
					m = append(m, q)
				}
			}
			quoteTypes = m
		}
		out = append(out, v)
	}
	if fallback {
		quoteTypes = []string{"'''"}
		out = out[:0]
		for _, p := range parts {
			v := p.text
			if p.constant {
				r := StrRepr(`"` + v)
				v = r[2 : len(r)-1]
			}
			out = append(out, v)
		}
	}
	q := "'"
	if len(quoteTypes) > 0 {
		q = quoteTypes[0]
	}
	u.w(q + strings.Join(out, "") + q)
}

func disjoint(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return false
			}
		}
	}
	return true
}
