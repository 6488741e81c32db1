package parser

import (
	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/token"
)

func span(from token.Pos, to token.Pos) ast.Span { return ast.Span{From: from, To: to} }

// chain counts one more link of a left-deep chain (a + b + c, a.b.c,
// f()()) into the nesting depth: such chains make trees as deep as nested
// parentheses do.
func (p *parser) chain(n int) int {
	p.enter()
	return n + 1
}

// star_expressions: a tuple without parentheses when there is a comma.
func (p *parser) parseStarExpressions() ast.Expr {
	pos := p.pos
	first := p.parseStarExpression()
	if p.tok != token.COMMA {
		return first
	}
	emark := len(p.exprs)
	p.exprs = append(p.exprs, first)
	for p.tok == token.COMMA {
		p.next()
		if !p.startsExpr() {
			break
		}
		p.exprs = append(p.exprs, p.parseStarExpression())
	}
	return put(&p.ar.tuples, ast.Tuple{Span: span(pos, p.prevEnd()), Elts: popStack(&p.exprs, emark, &p.ar.exprLists)})
}

// startsExpr reports whether the current token can start an expression.
func (p *parser) startsExpr() bool {
	switch p.tok {
	case token.NAME, token.NUMBER, token.STRING, token.FSTRING_START, token.LPAR, token.LSQB, token.LBRACE,
		token.MINUS, token.PLUS, token.TILDE, token.NOT, token.LAMBDA, token.AWAIT, token.STAR,
		token.TRUE, token.FALSE, token.NONE, token.ELLIPSIS:
		return true
	}
	return false
}

func (p *parser) parseStarExpression() ast.Expr {
	if p.tok == token.STAR {
		pos := p.pos
		p.next()
		v := p.parseBitOr()
		return put(&p.ar.starred, ast.Starred{Span: span(pos, p.prevEnd()), Value: v})
	}
	return p.parseExpression()
}

func (p *parser) parseStarNamedExpression() ast.Expr {
	if p.tok == token.STAR {
		pos := p.pos
		p.next()
		v := p.parseBitOr()
		return put(&p.ar.starred, ast.Starred{Span: span(pos, p.prevEnd()), Value: v})
	}
	return p.parseNamedExpression()
}

func (p *parser) parseNamedExpression() ast.Expr {
	if p.tok == token.NAME && p.peek(1) == token.COLONEQUAL {
		pos := p.pos
		target := &ast.Name{Span: span(p.pos, p.end), Id: p.lit}
		p.next()
		p.next()
		v := p.parseExpression()
		return &ast.NamedExpr{Span: span(pos, p.prevEnd()), Target: target, Value: v}
	}
	e := p.parseExpression()
	if p.tok == token.COLONEQUAL {
		p.failAt(e.Pos(), "cannot use assignment expressions with "+exprName(e))
	}
	return e
}

func (p *parser) parseExpression() ast.Expr {
	p.enter()
	defer p.leave()
	switch p.tok {
	case token.NAME, token.NUMBER, token.TRUE, token.FALSE, token.NONE:
		// A lone operand (f(a, 1), x = y, d[k]): the levels below would
		// each find nothing to do and return the atom.
		if endsOperand(p.peek(1)) {
			return p.parseAtom()
		}
	case token.LAMBDA:
		return p.parseLambda()
	}
	pos := p.pos
	body := p.parseDisjunction()
	if p.tok != token.IF {
		return body
	}
	p.next()
	test := p.parseDisjunction()
	if p.tok != token.ELSE {
		p.failAt(body.Pos(), "expected 'else' after 'if' expression")
	}
	p.next()
	orelse := p.parseExpression()
	return &ast.IfExp{Span: span(pos, p.prevEnd()), Test: test, Body: body, OrElse: orelse}
}

// endsOperand reports whether tok, after a name, number or constant,
// ends the expression: no trailer (. ( [), operator, comparison, boolean
// operator or conditional can start with it.
func endsOperand(tok token.Token) bool {
	switch tok {
	case token.COMMA, token.RPAR, token.RSQB, token.RBRACE, token.COLON, token.NEWLINE, token.EQUAL, token.SEMI:
		return true
	}
	return false
}

func (p *parser) parseLambda() ast.Expr {
	pos := p.pos
	p.next()
	args := p.parseParams(token.COLON, false)
	p.expect(token.COLON)
	body := p.parseExpression()
	return &ast.Lambda{Span: span(pos, p.prevEnd()), Args: args, Body: body}
}

// parseDisjunction parses `a or b and not c < d`: disjunction,
// conjunction, inversion and comparison of the grammar, folded so that a
// plain operand costs few calls.
func (p *parser) parseDisjunction() ast.Expr {
	pos := p.pos
	x := p.parseInversion()
	if p.tok == token.AND {
		x = p.conjunctionRest(pos, x)
	}
	if p.tok != token.OR {
		return x
	}
	vmark := len(p.exprs)
	p.exprs = append(p.exprs, x)
	for p.got(token.OR) {
		ipos := p.pos
		y := p.parseInversion()
		if p.tok == token.AND {
			y = p.conjunctionRest(ipos, y)
		}
		p.exprs = append(p.exprs, y)
	}
	return put(&p.ar.boolops, ast.BoolOp{Span: span(pos, p.prevEnd()), Op: token.OR, Values: popStack(&p.exprs, vmark, &p.ar.exprLists)})
}

// conjunctionRest parses the `and ...` operands that follow x.
func (p *parser) conjunctionRest(pos token.Pos, x ast.Expr) ast.Expr {
	vmark := len(p.exprs)
	p.exprs = append(p.exprs, x)
	for p.got(token.AND) {
		p.exprs = append(p.exprs, p.parseInversion())
	}
	return put(&p.ar.boolops, ast.BoolOp{Span: span(pos, p.prevEnd()), Op: token.AND, Values: popStack(&p.exprs, vmark, &p.ar.exprLists)})
}

func (p *parser) parseInversion() ast.Expr {
	if p.tok == token.NOT {
		p.enter()
		defer p.leave()
		pos := p.pos
		p.next()
		x := p.parseInversion()
		return put(&p.ar.unary, ast.UnaryOp{Span: span(pos, p.prevEnd()), Op: token.NOT, Operand: x})
	}
	pos := p.pos
	x := p.parseBinary(1)
	switch p.tok {
	case token.EQEQUAL, token.NOTEQUAL, token.LESS, token.LESSEQUAL, token.GREATER, token.GREATEREQUAL,
		token.IN, token.NOT, token.IS:
		return p.comparisonRest(pos, x)
	}
	return x
}

func (p *parser) cmpOp() (ast.CmpOp, int) {
	switch p.tok {
	case token.EQEQUAL:
		return ast.Eq, 1
	case token.NOTEQUAL:
		return ast.NotEq, 1
	case token.LESS:
		return ast.Lt, 1
	case token.LESSEQUAL:
		return ast.LtE, 1
	case token.GREATER:
		return ast.Gt, 1
	case token.GREATEREQUAL:
		return ast.GtE, 1
	case token.IN:
		return ast.In, 1
	case token.NOT:
		if p.peek(1) == token.IN {
			return ast.NotIn, 2
		}
	case token.IS:
		if p.peek(1) == token.NOT {
			return ast.IsNot, 2
		}
		return ast.Is, 1
	}
	return 0, 0
}

// comparisonRest parses the comparison operators and operands after x.
func (p *parser) comparisonRest(pos token.Pos, x ast.Expr) ast.Expr {
	op, n := p.cmpOp()
	if n == 0 {
		return x
	}
	c := put(&p.ar.compares, ast.Compare{Left: x})
	// operators and operands wait on the stacks, then move to the arena
	omark, emark := len(p.cmpOps), len(p.exprs)
	for n > 0 {
		for ; n > 0; n-- {
			p.next()
		}
		p.cmpOps = append(p.cmpOps, op)
		y := p.parseBitOr()
		p.exprs = append(p.exprs, y)
		op, n = p.cmpOp()
	}
	c.Ops = popStack(&p.cmpOps, omark, &p.ar.opLists)
	c.Comparators = popStack(&p.exprs, emark, &p.ar.exprLists)
	c.Span = span(pos, p.prevEnd())
	return c
}

func (p *parser) binary(pos token.Pos, left ast.Expr, op token.Token, right ast.Expr) ast.Expr {
	b := p.ar.binops.take()
	b.Span, b.Left, b.Op, b.Right = span(pos, p.prevEnd()), left, op, right
	return b
}

// binaryPrec is the precedence of the binary operators between
// comparisons and unary operators (bitwise_or ... term in the grammar);
// 0 for other tokens.
func binaryPrec(tok token.Token) int {
	switch tok {
	case token.VBAR:
		return 1
	case token.CIRCUMFLEX:
		return 2
	case token.AMPER:
		return 3
	case token.LEFTSHIFT, token.RIGHTSHIFT:
		return 4
	case token.PLUS, token.MINUS:
		return 5
	case token.STAR, token.SLASH, token.DOUBLESLASH, token.PERCENT, token.AT:
		return 6
	}
	return 0
}

// parseBitOr parses bitwise_or: all the left-associative binary operators
// by precedence climbing, so that a plain operand costs one call instead of
// one per grammar level.
func (p *parser) parseBitOr() ast.Expr { return p.parseBinary(1) }

func (p *parser) parseBinary(minPrec int) ast.Expr {
	pos := p.pos
	x := p.parseFactor()
	n := 0
	for {
		prec := binaryPrec(p.tok)
		if prec == 0 || prec < minPrec {
			break
		}
		op := p.tok
		p.next()
		n = p.chain(n)
		y := p.parseBinary(prec + 1)
		x = p.binary(pos, x, op, y)
	}
	p.depth -= n
	return x
}

// parseFactor parses factor and power: unary operators, await and **.
func (p *parser) parseFactor() ast.Expr {
	switch p.tok {
	case token.PLUS, token.MINUS, token.TILDE:
		p.enter()
		defer p.leave()
		pos, op := p.pos, p.tok
		p.next()
		x := p.parseFactor()
		return put(&p.ar.unary, ast.UnaryOp{Span: span(pos, p.prevEnd()), Op: op, Operand: x})
	}
	pos := p.pos
	var x ast.Expr
	if p.tok == token.AWAIT {
		p.next()
		v := p.parsePrimary()
		x = &ast.Await{Span: span(pos, p.prevEnd()), Value: v}
	} else {
		x = p.parsePrimary()
	}
	if p.tok == token.DOUBLESTAR {
		p.next()
		p.enter()
		x = p.binary(pos, x, token.DOUBLESTAR, p.parseFactor())
		p.leave()
	}
	return x
}

func (p *parser) parsePrimary() ast.Expr {
	pos := p.pos
	x := p.parseAtom()
	n := 0
	defer func() { p.depth -= n }()
	for {
		if p.tok == token.DOT || p.tok == token.LPAR || p.tok == token.LSQB {
			n = p.chain(n)
		}
		switch p.tok {
		case token.DOT:
			p.next()
			name := p.parseIdent()
			a := p.ar.attrs.take()
			a.Span, a.Value, a.Attr = span(pos, p.prevEnd()), x, name
			x = a
		case token.LPAR:
			p.enter()
			p.next()
			args, kws := p.parseCallArgs(true)
			p.expect(token.RPAR)
			p.leave()
			c := p.ar.calls.take()
			c.Span, c.Func, c.Args, c.Keywords = span(pos, p.prevEnd()), x, args, kws
			x = c
		case token.LSQB:
			p.enter()
			p.next()
			s := p.parseSlices()
			p.expect(token.RSQB)
			p.leave()
			x = put(&p.ar.subs, ast.Subscript{Span: span(pos, p.prevEnd()), Value: x, Slice: s})
		default:
			return x
		}
	}
}

func (p *parser) parseSlices() ast.Expr {
	pos := p.pos
	first := p.parseSlice()
	if p.tok != token.COMMA {
		if _, ok := first.(*ast.Starred); !ok {
			return first
		}
		// a[*b] is a tuple of one starred element
		return put(&p.ar.tuples, ast.Tuple{Span: span(pos, p.prevEnd()), Elts: []ast.Expr{first}})
	}
	emark := len(p.exprs)
	p.exprs = append(p.exprs, first)
	for p.got(token.COMMA) {
		if p.tok == token.RSQB {
			break
		}
		p.exprs = append(p.exprs, p.parseSlice())
	}
	return put(&p.ar.tuples, ast.Tuple{Span: span(pos, p.prevEnd()), Elts: popStack(&p.exprs, emark, &p.ar.exprLists)})
}

func (p *parser) parseSlice() ast.Expr {
	pos := p.pos
	if p.tok == token.STAR {
		p.next()
		v := p.parseExpression()
		return put(&p.ar.starred, ast.Starred{Span: span(pos, p.prevEnd()), Value: v})
	}
	var lower ast.Expr
	if p.tok != token.COLON {
		lower = p.parseNamedExpression()
		if p.tok != token.COLON {
			return lower
		}
		if _, ok := lower.(*ast.NamedExpr); ok {
			p.fail()
		}
	}
	s := put(&p.ar.slices, ast.Slice{Lower: lower})
	p.expect(token.COLON)
	if p.tok != token.COLON && p.tok != token.COMMA && p.tok != token.RSQB {
		s.Upper = p.parseExpression()
	}
	if p.got(token.COLON) {
		if p.tok != token.COMMA && p.tok != token.RSQB {
			s.Step = p.parseExpression()
		}
	}
	s.Span = span(pos, p.prevEnd())
	return s
}

// parseCallArgs parses the arguments of a call (or of a class definition
// when genexp is false) up to, not including, the closing parenthesis.
func (p *parser) parseCallArgs(genexp bool) (args []ast.Expr, kws []*ast.Keyword) {
	// Arguments are collected on the shared stacks p.exprs and p.kws and
	// copied out once: calls are the most frequent lists.
	mark, kmark := len(p.exprs), len(p.kws)
	defer func() {
		args = popStack(&p.exprs, mark, &p.ar.exprLists)
		kws = popStack(&p.kws, kmark, &p.ar.kwLists)
	}()
	sawKeyword, sawDoubleStar := false, false
	for p.tok != token.RPAR {
		pos := p.pos
		switch {
		case p.tok == token.STAR:
			p.next()
			v := p.parseExpression()
			if sawDoubleStar {
				p.failAt(pos, "iterable argument unpacking follows keyword argument unpacking")
			}
			p.exprs = append(p.exprs, put(&p.ar.starred, ast.Starred{Span: span(pos, p.prevEnd()), Value: v}))
		case p.tok == token.DOUBLESTAR:
			p.next()
			v := p.parseExpression()
			p.kws = append(p.kws, put(&p.ar.kws, ast.Keyword{Span: span(pos, p.prevEnd()), Value: v}))
			sawDoubleStar = true
		case p.tok == token.NAME && p.peek(1) == token.EQUAL:
			name := p.lit
			p.next()
			p.next()
			v := p.parseExpression()
			k := p.ar.kws.take()
			k.Span, k.Arg, k.Value = span(pos, p.prevEnd()), name, v
			p.kws = append(p.kws, k)
			sawKeyword = true
		default:
			v := p.parseNamedExpression()
			if p.tok == token.EQUAL {
				p.failAt(v.Pos(), "expression cannot contain assignment, perhaps you meant \"==\"?")
			}
			if p.tok == token.FOR || p.tok == token.ASYNC {
				if !genexp || len(p.exprs) > mark || len(p.kws) > kmark {
					p.failAt(v.Pos(), "Generator expression must be parenthesized")
				}
				g := p.parseComprehension(pos, v, nil, compGen)
				if p.tok != token.RPAR {
					p.failAt(pos, "Generator expression must be parenthesized")
				}
				p.exprs = append(p.exprs, g)
				return
			}
			if sawDoubleStar {
				p.failAt(pos, "positional argument follows keyword argument unpacking")
			}
			if sawKeyword {
				p.failAt(pos, "positional argument follows keyword argument")
			}
			p.exprs = append(p.exprs, v)
		}
		if !p.got(token.COMMA) {
			break
		}
	}
	return
}

// popStack returns a copy of (*stack)[mark:] (nil when empty) and drops
// those entries.
func popStack[T any](stack *[]T, mark int, lists *listSlab[T]) []T {
	s := *stack
	if mark >= len(s) {
		return nil
	}
	out := lists.make(len(s) - mark)
	copy(out, s[mark:])
	clear(s[mark:])
	*stack = s[:mark]
	return out
}

const (
	compList = iota
	compSet
	compDict
	compGen
)

func (p *parser) parseComprehension(pos token.Pos, elt, value ast.Expr, kind int) ast.Expr {
	var gens []*ast.Comprehension
	for p.tok == token.FOR || p.tok == token.ASYNC {
		cpos := p.pos
		c := put(&p.ar.comps, ast.Comprehension{})
		if p.tok == token.ASYNC {
			c.IsAsync = true
			p.next()
		}
		p.expect(token.FOR)
		c.Target = p.parseStarTargets()
		p.expect(token.IN)
		c.Iter = p.parseDisjunction()
		for p.tok == token.IF {
			p.next()
			c.Ifs = append(c.Ifs, p.parseDisjunction())
		}
		c.Span = span(cpos, p.prevEnd())
		gens = append(gens, c)
	}
	end := p.end // the closing bracket, checked by the caller
	switch kind {
	case compList:
		return &ast.ListComp{Span: span(pos, end), Elt: elt, Generators: gens}
	case compSet:
		return &ast.SetComp{Span: span(pos, end), Elt: elt, Generators: gens}
	case compDict:
		return &ast.DictComp{Span: span(pos, end), Key: elt, Value: value, Generators: gens}
	}
	return &ast.GeneratorExp{Span: span(pos, p.prevEnd()), Elt: elt, Generators: gens}
}

func (p *parser) parseYield() ast.Expr {
	pos := p.pos
	p.expect(token.YIELD)
	if p.got(token.FROM) {
		v := p.parseExpression()
		return &ast.YieldFrom{Span: span(pos, p.prevEnd()), Value: v}
	}
	y := &ast.Yield{}
	if p.startsExpr() {
		y.Value = p.parseStarExpressions()
	}
	y.Span = span(pos, p.prevEnd())
	return y
}

func (p *parser) parseAtom() ast.Expr {
	pos := p.pos
	switch p.tok {
	case token.NAME:
		name := p.ar.names.take()
		name.Span, name.Id = span(pos, p.end), p.lit
		p.next()
		return name
	case token.TRUE, token.FALSE, token.NONE, token.ELLIPSIS:
		kind := ast.Ellipsis
		switch p.tok {
		case token.TRUE:
			kind = ast.True
		case token.FALSE:
			kind = ast.False
		case token.NONE:
			kind = ast.None
		}
		c := p.ar.consts.take()
		c.Span, c.Kind = span(pos, p.end), kind
		p.next()
		return c
	case token.NUMBER:
		c := p.ar.consts.take()
		c.Span, c.Raw, c.Kind = span(pos, p.end), p.lit, numberKind(p.lit)
		p.next()
		return c
	case token.STRING, token.FSTRING_START:
		return p.parseStrings()
	case token.LPAR:
		return p.parseParen()
	case token.LSQB:
		p.enter()
		defer p.leave()
		p.next()
		if p.tok == token.RSQB {
			p.next()
			return put(&p.ar.lists, ast.List{Span: span(pos, p.prevEnd())})
		}
		first := p.parseStarNamedExpression()
		if p.tok == token.FOR || p.tok == token.ASYNC {
			if _, ok := first.(*ast.Starred); ok {
				p.failAt(first.Pos(), "iterable unpacking cannot be used in comprehension")
			}
			c := p.parseComprehension(pos, first, nil, compList)
			p.expect(token.RSQB)
			return c
		}
		emark := len(p.exprs)
		p.exprs = append(p.exprs, first)
		for p.got(token.COMMA) {
			if p.tok == token.RSQB {
				break
			}
			p.exprs = append(p.exprs, p.parseStarNamedExpression())
		}
		p.expect(token.RSQB)
		return put(&p.ar.lists, ast.List{Span: span(pos, p.prevEnd()), Elts: popStack(&p.exprs, emark, &p.ar.exprLists)})
	case token.LBRACE:
		return p.parseBrace()
	}
	p.fail()
	return nil
}

func (p *parser) parseParen() ast.Expr {
	p.enter()
	defer p.leave()
	pos := p.pos
	open := p.i
	p.next()
	if p.tok == token.RPAR {
		p.next()
		return put(&p.ar.tuples, ast.Tuple{Span: span(pos, p.prevEnd()), Parens: true})
	}
	if p.tok == token.YIELD {
		y := p.parseYield()
		p.expect(token.RPAR)
		return y
	}
	first := p.parseStarNamedExpression()
	_, starred := first.(*ast.Starred)
	if p.tok == token.FOR || p.tok == token.ASYNC {
		if starred {
			p.failAt(first.Pos(), "iterable unpacking cannot be used in comprehension")
		}
		g := p.parseComprehension(pos, first, nil, compGen)
		p.expect(token.RPAR)
		g.(*ast.GeneratorExp).Span = span(pos, p.prevEnd())
		return g
	}
	if p.tok != token.COMMA {
		if starred {
			p.failAt(first.Pos(), "cannot use starred expression here")
		}
		p.expect(token.RPAR)
		if open == p.stmtStart {
			p.leadGroup = &group{first, p.prevEnd()}
		}
		return first
	}
	emark := len(p.exprs)
	p.exprs = append(p.exprs, first)
	for p.got(token.COMMA) {
		if p.tok == token.RPAR {
			break
		}
		p.exprs = append(p.exprs, p.parseStarNamedExpression())
	}
	p.expect(token.RPAR)
	return put(&p.ar.tuples, ast.Tuple{Span: span(pos, p.prevEnd()), Elts: popStack(&p.exprs, emark, &p.ar.exprLists), Parens: true})
}

func (p *parser) parseBrace() ast.Expr {
	p.enter()
	defer p.leave()
	pos := p.pos
	p.next()
	if p.tok == token.RBRACE {
		p.next()
		return put(&p.ar.dicts, ast.Dict{Span: span(pos, p.prevEnd())})
	}
	if p.tok == token.DOUBLESTAR {
		return p.parseDictRest(pos, nil, nil)
	}
	walrus := p.tok == token.NAME && p.peek(1) == token.COLONEQUAL
	first := p.parseStarNamedExpression()
	if p.tok == token.COLON {
		if _, ok := first.(*ast.Starred); ok || walrus {
			p.fail()
		}
		p.next()
		v := p.parseExpression()
		if p.tok == token.FOR || p.tok == token.ASYNC {
			c := p.parseComprehension(pos, first, v, compDict)
			p.expect(token.RBRACE)
			return c
		}
		return p.parseDictRest(pos, []ast.Expr{first}, []ast.Expr{v})
	}
	if p.tok == token.FOR || p.tok == token.ASYNC {
		if _, ok := first.(*ast.Starred); ok {
			p.failAt(first.Pos(), "iterable unpacking cannot be used in comprehension")
		}
		c := p.parseComprehension(pos, first, nil, compSet)
		p.expect(token.RBRACE)
		return c
	}
	emark := len(p.exprs)
	p.exprs = append(p.exprs, first)
	for p.got(token.COMMA) {
		if p.tok == token.RBRACE {
			break
		}
		p.exprs = append(p.exprs, p.parseStarNamedExpression())
	}
	if p.tok == token.COLON {
		p.failAt(p.pos, "invalid syntax")
	}
	p.expect(token.RBRACE)
	return &ast.Set{Span: span(pos, p.prevEnd()), Elts: popStack(&p.exprs, emark, &p.ar.exprLists)}
}

// parseDictRest parses the remaining items of a dict display; the
// current token starts an item (or is the first '**').
func (p *parser) parseDictRest(pos token.Pos, keys, values []ast.Expr) ast.Expr {
	first := len(keys) == 0
	for {
		if !first {
			if !p.got(token.COMMA) || p.tok == token.RBRACE {
				break
			}
		}
		first = false
		if p.tok == token.DOUBLESTAR {
			p.next()
			keys = append(keys, nil)
			values = append(values, p.parseBitOr())
			if p.tok == token.FOR || p.tok == token.ASYNC {
				p.failAt(p.pos, "dict unpacking cannot be used in dict comprehension")
			}
			continue
		}
		k := p.parseExpression()
		if p.tok != token.COLON {
			p.failAt(p.pos, "':' expected after dictionary key")
		}
		p.next()
		keys = append(keys, k)
		values = append(values, p.parseExpression())
	}
	p.expect(token.RBRACE)
	return put(&p.ar.dicts, ast.Dict{Span: span(pos, p.prevEnd()), Keys: keys, Values: values})
}

// parseParams parses def parameters (annotations allowed) or lambda
// parameters up to the closing token, which is not consumed.
func (p *parser) parseParams(close token.Token, annotations bool) *ast.Arguments {
	a := put(&p.ar.argsets, ast.Arguments{})
	pos := p.pos
	// The positional parameters not yet known to be positional-only, and
	// the defaults, wait on the stacks, then move to the arena.
	amark, dmark := len(p.params), len(p.exprs)
	sawSlash, sawStar, sawDefault, bareStar := false, false, false, false
	for p.tok != close {
		switch p.tok {
		case token.SLASH:
			if sawSlash {
				p.failAt(p.pos, "/ may appear only once")
			}
			if sawStar {
				p.failAt(p.pos, "/ must be ahead of *")
			}
			if len(p.params) == amark {
				p.fail()
			}
			sawSlash = true
			a.PosOnly = popStack(&p.params, amark, &p.ar.argLists)
			p.next()
		case token.STAR:
			if sawStar {
				p.failAt(p.pos, "* argument may appear only once")
			}
			sawStar = true
			spos := p.pos
			p.next()
			if p.tok == token.COMMA || p.tok == close {
				bareStar = true
				if p.tok == close || p.peek(1) == close || p.peek(1) == token.DOUBLESTAR {
					p.failAt(spos, "named arguments must follow bare *")
				}
			} else {
				arg := p.parseParam(annotations, true)
				a.VarArg = arg
				if p.tok == token.EQUAL {
					p.failAt(p.pos, "var-positional argument cannot have default value")
				}
			}
		case token.DOUBLESTAR:
			p.next()
			a.KwArg = p.parseParam(annotations, false)
			if p.tok == token.EQUAL {
				p.failAt(p.pos, "var-keyword argument cannot have default value")
			}
			if p.tok == token.COMMA {
				p.next()
			}
			if p.tok != close {
				p.failAt(p.pos, "arguments cannot follow var-keyword argument")
			}
			continue
		default:
			arg := p.parseParam(annotations, false)
			var def ast.Expr
			if p.got(token.EQUAL) {
				def = p.parseExpression()
			}
			if sawStar {
				a.KwOnly = append(a.KwOnly, arg)
				a.KwDefaults = append(a.KwDefaults, def)
			} else {
				if def != nil {
					sawDefault = true
					p.exprs = append(p.exprs, def)
				} else if sawDefault {
					p.failAt(arg.Pos(), "parameter without a default follows parameter with a default")
				}
				p.params = append(p.params, arg)
			}
		}
		if p.tok == close {
			break
		}
		if p.tok != token.COMMA {
			p.fail()
		}
		p.next()
	}
	_ = bareStar
	a.Args = popStack(&p.params, amark, &p.ar.argLists)
	a.Defaults = popStack(&p.exprs, dmark, &p.ar.exprLists)
	a.Span = span(pos, p.prevEnd())
	return a
}

func (p *parser) parseParam(annotations, star bool) *ast.Arg {
	pos := p.pos
	if p.tok != token.NAME {
		p.fail()
	}
	arg := p.ar.args.take()
	arg.Name = p.lit
	p.next()
	if annotations && p.got(token.COLON) {
		if star && p.tok == token.STAR {
			arg.Annotation = p.parseStarExpression()
		} else {
			arg.Annotation = p.parseExpression()
		}
	}
	arg.Span = span(pos, p.prevEnd())
	return arg
}

// ---------------------------------------------------------------------------
// Targets

type targetKind int

const (
	targetAssign targetKind = iota
	targetDel
)

// parseStarTargets parses the targets of for loops and comprehensions.
func (p *parser) parseStarTargets() ast.Expr {
	pos := p.pos
	first := p.parseStarTarget()
	if p.tok != token.COMMA {
		if _, ok := first.(*ast.Starred); ok {
			// `for *x in y` is accepted by ast.parse
			return first
		}
		return first
	}
	emark := len(p.exprs)
	p.exprs = append(p.exprs, first)
	for p.got(token.COMMA) {
		if p.tok == token.IN || p.tok == token.EQUAL || !p.startsTarget() {
			break
		}
		p.exprs = append(p.exprs, p.parseStarTarget())
	}
	return put(&p.ar.tuples, ast.Tuple{Span: span(pos, p.prevEnd()), Elts: popStack(&p.exprs, emark, &p.ar.exprLists)})
}

func (p *parser) startsTarget() bool {
	switch p.tok {
	case token.NAME, token.LPAR, token.LSQB, token.STAR, token.STRING, token.FSTRING_START, token.NUMBER, token.LBRACE,
		token.TRUE, token.FALSE, token.NONE, token.ELLIPSIS:
		return true
	}
	return false
}

func (p *parser) parseStarTarget() ast.Expr {
	pos := p.pos
	if p.tok == token.STAR {
		p.next()
		if p.tok == token.STAR {
			p.fail()
		}
		p.enter()
		v := p.parseStarTarget()
		p.leave()
		s := put(&p.ar.starred, ast.Starred{Span: span(pos, p.prevEnd()), Value: v})
		return s
	}
	t := p.parsePrimary()
	p.checkTarget(t, targetAssign)
	return t
}

func (p *parser) parseDelTarget() ast.Expr {
	t := p.parsePrimary()
	p.checkTarget(t, targetDel)
	return t
}

// checkTarget reports an error unless e can be assigned to (or deleted).
func (p *parser) checkTarget(e ast.Expr, kind targetKind) {
	switch e := e.(type) {
	case *ast.Name, *ast.Attribute, *ast.Subscript:
		return
	case *ast.Starred:
		if kind == targetDel {
			p.failAt(e.Pos(), "cannot delete starred")
		}
		p.checkTarget(e.Value, kind)
		return
	case *ast.Tuple:
		for _, x := range e.Elts {
			p.checkTarget(x, kind)
		}
		return
	case *ast.List:
		for _, x := range e.Elts {
			p.checkTarget(x, kind)
		}
		return
	}
	verb := "assign to"
	if kind == targetDel {
		verb = "delete"
	}
	p.failAt(e.Pos(), "cannot "+verb+" "+exprName(e))
}

func (p *parser) checkAugTarget(e ast.Expr) {
	switch e.(type) {
	case *ast.Name, *ast.Attribute, *ast.Subscript:
		return
	}
	p.failAt(e.Pos(), "'"+exprName(e)+"' is an illegal expression for augmented assignment")
}

func (p *parser) checkAnnTarget(e ast.Expr) {
	switch e.(type) {
	case *ast.Name, *ast.Attribute, *ast.Subscript:
		return
	case *ast.Tuple:
		p.failAt(e.Pos(), "only single target (not tuple) can be annotated")
	case *ast.List:
		p.failAt(e.Pos(), "only single target (not list) can be annotated")
	}
	p.failAt(e.Pos(), "illegal target for annotation")
}

// exprName names an expression as CPython's error messages do.
func exprName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Attribute:
		return "attribute"
	case *ast.Subscript:
		return "subscript"
	case *ast.Starred:
		return "starred"
	case *ast.Name:
		return "name"
	case *ast.List:
		return "list"
	case *ast.Tuple:
		return "tuple"
	case *ast.Lambda:
		return "lambda"
	case *ast.Call:
		return "function call"
	case *ast.BoolOp, *ast.BinOp, *ast.UnaryOp:
		return "expression"
	case *ast.GeneratorExp:
		return "generator expression"
	case *ast.Yield, *ast.YieldFrom:
		return "yield expression"
	case *ast.Await:
		return "await expression"
	case *ast.ListComp:
		return "list comprehension"
	case *ast.SetComp:
		return "set comprehension"
	case *ast.DictComp:
		return "dict comprehension"
	case *ast.Dict:
		return "dict literal"
	case *ast.Set:
		return "set display"
	case *ast.JoinedStr, *ast.FormattedValue:
		return "f-string expression"
	case *ast.Constant:
		switch e.Kind {
		case ast.None:
			return "None"
		case ast.True:
			return "True"
		case ast.False:
			return "False"
		case ast.Ellipsis:
			return "ellipsis"
		}
		return "literal"
	case *ast.Compare:
		return "comparison"
	case *ast.IfExp:
		return "conditional expression"
	case *ast.NamedExpr:
		return "named expression"
	}
	return "expression"
}

func numberKind(lit string) ast.ConstKind {
	n := len(lit)
	if n > 0 && (lit[n-1] == 'j' || lit[n-1] == 'J') {
		return ast.Complex
	}
	if n > 1 && lit[0] == '0' && (lit[1]|0x20 == 'x' || lit[1]|0x20 == 'o' || lit[1]|0x20 == 'b') {
		return ast.Int
	}
	for i := 0; i < n; i++ {
		if c := lit[i]; c == '.' || c == 'e' || c == 'E' {
			return ast.Float
		}
	}
	return ast.Int
}
