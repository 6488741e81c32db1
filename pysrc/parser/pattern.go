package parser

import (
	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/token"
)

// tryMatch parses a match statement when the soft keyword `match` starts
// one: the header `match subject: NEWLINE INDENT case` must parse, else nil
// is returned and the line is parsed as a simple statement.
func (p *parser) tryMatch() ast.Stmt {
	pos := p.pos
	var subject ast.Expr
	ok := p.try(func() {
		p.next()
		subject = p.parseSubject()
		if p.tok != token.COLON || p.peek(1) != token.NEWLINE || p.peek(2) != token.INDENT ||
			p.peek(3) != token.NAME || p.peekLit(3) != "case" {
			p.fail()
		}
	})
	if !ok {
		return nil
	}
	p.next() // :
	p.next() // NEWLINE
	p.next() // INDENT
	p.enter()
	defer p.leave()
	st := &ast.Match{Subject: subject}
	for p.tok != token.DEDENT && p.tok != token.EOF {
		if !p.isSoft("case") {
			p.fail()
		}
		cpos := p.pos
		p.next()
		c := &ast.MatchCase{Pattern: p.parsePatterns()}
		if p.got(token.IF) {
			c.Guard = p.parseNamedExpression()
		}
		c.Body = p.parseBlock("'case' statement", cpos)
		c.Span = span(cpos, p.prevEnd())
		st.Cases = append(st.Cases, c)
	}
	p.got(token.DEDENT)
	st.Span = span(pos, p.prevEnd())
	return st
}

func (p *parser) parseSubject() ast.Expr {
	pos := p.pos
	first := p.parseStarNamedExpression()
	if p.tok != token.COMMA {
		if _, ok := first.(*ast.Starred); ok {
			p.fail()
		}
		return first
	}
	elts := []ast.Expr{first}
	for p.got(token.COMMA) {
		if p.tok == token.COLON {
			break
		}
		elts = append(elts, p.parseStarNamedExpression())
	}
	return put(&p.ar.tuples, ast.Tuple{Span: span(pos, p.prevEnd()), Elts: elts})
}

// patterns: open_sequence_pattern | pattern
func (p *parser) parsePatterns() ast.Pattern {
	pos := p.pos
	first := p.parseMaybeStarPattern()
	if p.tok != token.COMMA {
		if _, ok := first.(*ast.MatchStar); ok {
			p.fail()
		}
		return first
	}
	list := []ast.Pattern{first}
	for p.got(token.COMMA) {
		if p.tok == token.COLON || p.tok == token.IF {
			break
		}
		list = append(list, p.parseMaybeStarPattern())
	}
	return &ast.MatchSequence{Span: span(pos, p.prevEnd()), Patterns: list}
}

func (p *parser) parseMaybeStarPattern() ast.Pattern {
	if p.tok == token.STAR {
		pos := p.pos
		p.next()
		name := p.parseIdent()
		if name == "_" {
			name = ""
		}
		return &ast.MatchStar{Span: span(pos, p.prevEnd()), Name: name}
	}
	return p.parsePattern()
}

// pattern: or_pattern ['as' capture_target]
func (p *parser) parsePattern() ast.Pattern {
	p.enter()
	defer p.leave()
	pos := p.pos
	pat := p.parseOrPattern()
	if p.got(token.AS) {
		if p.tok != token.NAME {
			p.fail()
		}
		if p.lit == "_" {
			p.failAt(p.pos, "cannot use '_' as a target")
		}
		name := p.lit
		p.next()
		if p.tok == token.DOT || p.tok == token.LPAR || p.tok == token.EQUAL {
			p.fail()
		}
		return &ast.MatchAs{Span: span(pos, p.prevEnd()), Pattern: pat, Name: name}
	}
	return pat
}

func (p *parser) parseOrPattern() ast.Pattern {
	pos := p.pos
	first := p.parseClosedPattern()
	if p.tok != token.VBAR {
		return first
	}
	list := []ast.Pattern{first}
	for p.got(token.VBAR) {
		list = append(list, p.parseClosedPattern())
	}
	return &ast.MatchOr{Span: span(pos, p.prevEnd()), Patterns: list}
}

func (p *parser) parseClosedPattern() ast.Pattern {
	pos := p.pos
	switch p.tok {
	case token.NUMBER, token.MINUS:
		v := p.parseLiteralNumber()
		return &ast.MatchValue{Span: span(pos, p.prevEnd()), Value: v}
	case token.STRING, token.FSTRING_START:
		v := p.parseStrings()
		return &ast.MatchValue{Span: span(pos, p.prevEnd()), Value: v}
	case token.NONE, token.TRUE, token.FALSE:
		c := p.parseAtom().(*ast.Constant)
		return &ast.MatchSingleton{Span: span(pos, p.prevEnd()), Value: c}
	case token.NAME:
		var x ast.Expr = &ast.Name{Span: span(p.pos, p.end), Id: p.lit}
		p.next()
		dotted := false
		for p.tok == token.DOT {
			p.next()
			attr := p.parseIdent()
			x = &ast.Attribute{Span: span(pos, p.prevEnd()), Value: x, Attr: attr}
			dotted = true
		}
		if p.tok == token.LPAR {
			return p.parseClassPattern(pos, x)
		}
		if dotted {
			return &ast.MatchValue{Span: span(pos, p.prevEnd()), Value: x}
		}
		if p.tok == token.EQUAL {
			p.fail()
		}
		name := x.(*ast.Name).Id
		if name == "_" {
			name = ""
		}
		return &ast.MatchAs{Span: span(pos, p.prevEnd()), Name: name}
	case token.LPAR:
		p.next()
		if p.got(token.RPAR) {
			return &ast.MatchSequence{Span: span(pos, p.prevEnd())}
		}
		first := p.parseMaybeStarPattern()
		if p.tok == token.RPAR {
			p.next()
			if _, ok := first.(*ast.MatchStar); ok {
				p.fail()
			}
			return first // group pattern
		}
		list := []ast.Pattern{first}
		for p.got(token.COMMA) {
			if p.tok == token.RPAR {
				break
			}
			list = append(list, p.parseMaybeStarPattern())
		}
		p.expect(token.RPAR)
		return &ast.MatchSequence{Span: span(pos, p.prevEnd()), Patterns: list}
	case token.LSQB:
		p.next()
		var list []ast.Pattern
		for p.tok != token.RSQB {
			list = append(list, p.parseMaybeStarPattern())
			if !p.got(token.COMMA) {
				break
			}
		}
		p.expect(token.RSQB)
		return &ast.MatchSequence{Span: span(pos, p.prevEnd()), Patterns: list}
	case token.LBRACE:
		return p.parseMappingPattern()
	}
	p.fail()
	return nil
}

// parseLiteralNumber parses signed_number or complex_number.
func (p *parser) parseLiteralNumber() ast.Expr {
	pos := p.pos
	neg := p.got(token.MINUS)
	if p.tok != token.NUMBER {
		p.fail()
	}
	var v ast.Expr = &ast.Constant{Span: span(p.pos, p.end), Raw: p.lit, Kind: numberKind(p.lit)}
	p.next()
	if neg {
		v = put(&p.ar.unary, ast.UnaryOp{Span: span(pos, p.prevEnd()), Op: token.MINUS, Operand: v})
	}
	if p.tok == token.PLUS || p.tok == token.MINUS {
		if realPart(v).Kind == ast.Complex {
			p.failAt(pos, "real number required in complex literal")
		}
		op := p.tok
		p.next()
		if p.tok != token.NUMBER {
			p.fail()
		}
		im := &ast.Constant{Span: span(p.pos, p.end), Raw: p.lit, Kind: numberKind(p.lit)}
		if im.Kind != ast.Complex {
			p.failAt(p.pos, "imaginary number required in complex literal")
		}
		p.next()
		v = &ast.BinOp{Span: span(pos, p.prevEnd()), Left: v, Op: op, Right: im}
	}
	return v
}

func realPart(e ast.Expr) *ast.Constant {
	if u, ok := e.(*ast.UnaryOp); ok {
		return u.Operand.(*ast.Constant)
	}
	return e.(*ast.Constant)
}

func (p *parser) parseClassPattern(pos token.Pos, cls ast.Expr) ast.Pattern {
	p.next() // (
	m := &ast.MatchClass{Cls: cls}
	for p.tok != token.RPAR {
		if p.tok == token.NAME && p.peek(1) == token.EQUAL {
			m.KwdAttrs = append(m.KwdAttrs, p.lit)
			p.next()
			p.next()
			m.KwdPatterns = append(m.KwdPatterns, p.parsePattern())
		} else {
			ppos := p.pos
			pat := p.parsePattern()
			if len(m.KwdAttrs) > 0 {
				p.failAt(ppos, "positional patterns follow keyword patterns")
			}
			m.Patterns = append(m.Patterns, pat)
		}
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAR)
	m.Span = span(pos, p.prevEnd())
	return m
}

func (p *parser) parseMappingPattern() ast.Pattern {
	pos := p.pos
	p.next() // {
	m := &ast.MatchMapping{}
	for p.tok != token.RBRACE {
		if p.tok == token.DOUBLESTAR {
			p.next()
			m.Rest = p.parseIdent()
			p.got(token.COMMA)
			if p.tok != token.RBRACE {
				p.fail()
			}
			break
		}
		var key ast.Expr
		kpos := p.pos
		switch p.tok {
		case token.NUMBER, token.MINUS:
			key = p.parseLiteralNumber()
		case token.STRING, token.FSTRING_START:
			key = p.parseStrings()
		case token.NONE, token.TRUE, token.FALSE:
			key = p.parseAtom()
		case token.NAME:
			var x ast.Expr = &ast.Name{Span: span(p.pos, p.end), Id: p.lit}
			p.next()
			if p.tok != token.DOT {
				p.fail()
			}
			for p.got(token.DOT) {
				attr := p.parseIdent()
				x = &ast.Attribute{Span: span(kpos, p.prevEnd()), Value: x, Attr: attr}
			}
			key = x
		default:
			p.fail()
		}
		p.expect(token.COLON)
		m.Keys = append(m.Keys, key)
		m.Patterns = append(m.Patterns, p.parsePattern())
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RBRACE)
	m.Span = span(pos, p.prevEnd())
	return m
}
