package parser

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/text/unicode/runenames"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/token"
)

// prefixInfo splits the prefix letters of a string token.
func prefixInfo(lit string) (n int, isBytes, raw, isF, isU bool) {
	for n < len(lit) && lit[n] != '\'' && lit[n] != '"' {
		switch lit[n] | 0x20 {
		case 'b':
			isBytes = true
		case 'r':
			raw = true
		case 'f':
			isF = true
		case 'u':
			isU = true
		}
		n++
	}
	return
}

// stringBody returns the text between the quotes of a complete STRING
// token (an unterminated one is read to its end).
func stringBody(lit string, n int) string {
	body := lit[n:]
	q := body[:1]
	if strings.HasPrefix(body, q+q+q) && len(body) >= 6 && strings.HasSuffix(body, q+q+q) {
		return body[3 : len(body)-3]
	}
	if len(body) >= 2 && strings.HasSuffix(body, q) {
		return body[1 : len(body)-1]
	}
	return body[1:]
}

// parseStrings parses one or more adjacent string literals (implicit
// concatenation), f-strings included.
func (p *parser) parseStrings() ast.Expr {
	pos := p.pos
	if p.tok == token.STRING && p.peek(1) != token.STRING && p.peek(1) != token.FSTRING_START {
		// the common case: one plain literal
		n, b, raw, _, u := prefixInfo(p.lit)
		text, msg := decodeLiteral(stringBody(p.lit, n), raw, b)
		if msg != "" {
			p.failAt(p.pos, msg)
		}
		c := p.ar.consts.take()
		c.Span, c.Str, c.U = span(pos, p.end), text, u
		if b {
			c.Kind = ast.Bytes
		}
		p.next()
		return c
	}
	var (
		values   []ast.Expr
		cur      strings.Builder
		curPos   = p.pos
		isF      bool
		kindSet  bool
		bytesLit bool
		isU      bool
	)
	flush := func(end token.Pos) {
		if cur.Len() > 0 {
			values = append(values, &ast.Constant{Span: span(curPos, end), Kind: ast.Str, Str: cur.String()})
			cur.Reset()
		}
	}
	for p.tok == token.STRING || p.tok == token.FSTRING_START {
		n, b, raw, f, u := prefixInfo(p.lit)
		if !kindSet {
			kindSet, bytesLit, isU = true, b, u
		} else if b != bytesLit {
			p.failAt(p.pos, "cannot mix bytes and nonbytes literals")
		}
		if !f {
			text, msg := decodeLiteral(stringBody(p.lit, n), raw, b)
			if msg != "" {
				p.failAt(p.pos, msg)
			}
			if cur.Len() == 0 {
				curPos = p.pos
			}
			cur.WriteString(text)
			p.next()
			continue
		}
		isF = true
		p.next()
		for p.tok != token.FSTRING_END {
			switch p.tok {
			case token.FSTRING_MIDDLE:
				text, msg := decodeLiteral(p.lit, raw, false)
				if msg != "" {
					p.failAt(p.pos, msg)
				}
				if cur.Len() == 0 {
					curPos = p.pos
				}
				cur.WriteString(unescapeBraces(text))
				p.next()
			case token.LBRACE:
				debug, fv := p.parseReplacementField(raw)
				if debug != "" {
					if cur.Len() == 0 {
						curPos = fv.Pos()
					}
					cur.WriteString(debug)
				}
				flush(fv.Pos())
				values = append(values, fv)
			default:
				p.fail()
			}
		}
		if p.lit == "" {
			p.fail() // synthesized end of an unterminated f-string
		}
		p.next()
	}
	end := p.prevEnd()
	if isF {
		flush(end)
		return &ast.JoinedStr{Span: span(pos, end), Values: values}
	}
	kind := ast.Str
	if bytesLit {
		kind = ast.Bytes
	}
	return &ast.Constant{Span: span(pos, end), Kind: kind, Str: cur.String(), U: isU}
}

func unescapeBraces(s string) string {
	if !strings.Contains(s, "{{") && !strings.Contains(s, "}}") {
		return s
	}
	s = strings.ReplaceAll(s, "{{", "{")
	return strings.ReplaceAll(s, "}}", "}")
}

// parseReplacementField parses `{expr[=][!c][:spec]}` of an f-string. It
// returns the debug text (for `{expr=}`) and the FormattedValue.
func (p *parser) parseReplacementField(raw bool) (string, *ast.FormattedValue) {
	pos := p.pos
	exprStart := p.end
	firstTok := p.i + 1
	p.next() // {
	if p.tok == token.RBRACE || p.tok == token.EXCLAMATION || p.tok == token.COLON || p.tok == token.EQUAL {
		p.failAt(p.pos, "f-string: valid expression required before '"+p.tok.String()+"'")
	}
	fv := &ast.FormattedValue{Conversion: -1}
	if p.tok == token.YIELD {
		fv.Value = p.parseYield()
	} else {
		if p.tok == token.LAMBDA {
			p.failAt(p.pos, "f-string: lambda expressions are not allowed without parentheses")
		}
		fv.Value = p.parseStarExpressions()
	}
	debug := ""
	if p.tok == token.EQUAL {
		if p.fdepth > 0 {
			// CPython 3.12 fails to build the AST of a `{x=}` field inside
			// a format spec (ValueError from ast.parse): not valid Python
			// by SPEC §16's definition.
			p.failAt(p.pos, "f-string: debug expression inside a format spec")
		}
		p.next()
		debug = p.debugText(exprStart, firstTok)
	}
	if p.tok == token.EXCLAMATION {
		bang := p.pos
		p.next()
		if p.tok != token.NAME {
			p.failAt(p.pos, "f-string: missing conversion character")
		}
		if p.pos != bang+1 {
			p.failAt(p.pos, "f-string: conversion type must come right after the exclamanation mark")
		}
		switch p.lit {
		case "s", "r", "a":
			fv.Conversion = int(p.lit[0])
		default:
			p.failAt(p.pos, fmt.Sprintf("f-string: invalid conversion character %q: expected 's', 'r', or 'a'", p.lit))
		}
		p.next()
	}
	if p.tok == token.COLON {
		spos := p.pos
		p.next()
		p.fdepth++
		spec := &ast.JoinedStr{}
		var cur strings.Builder
		for p.tok != token.RBRACE {
			switch p.tok {
			case token.FSTRING_MIDDLE:
				text, msg := decodeLiteral(p.lit, raw, false)
				if msg != "" {
					p.failAt(p.pos, msg)
				}
				cur.WriteString(text)
				p.next()
			case token.LBRACE:
				d, inner := p.parseReplacementField(raw)
				cur.WriteString(d)
				if cur.Len() > 0 {
					spec.Values = append(spec.Values, &ast.Constant{Kind: ast.Str, Str: cur.String(), Span: span(inner.Pos(), inner.Pos())})
					cur.Reset()
				}
				spec.Values = append(spec.Values, inner)
			default:
				p.failAt(p.pos, "f-string: expecting '}'")
			}
		}
		if cur.Len() > 0 {
			spec.Values = append(spec.Values, &ast.Constant{Kind: ast.Str, Str: cur.String(), Span: span(p.pos, p.pos)})
		}
		p.fdepth--
		spec.Span = span(spos, p.pos)
		fv.FormatSpec = spec
	}
	if p.tok != token.RBRACE {
		if p.tok == token.EQUAL || p.tok == token.EXCLAMATION {
			p.failAt(p.pos, "f-string: expecting ':' or '}'")
		}
		p.failAt(p.pos, "f-string: expecting '}'")
	}
	p.next()
	if debug != "" && fv.Conversion == -1 && fv.FormatSpec == nil {
		fv.Conversion = 'r'
	}
	fv.Span = span(pos, p.prevEnd())
	return debug, fv
}

// debugText is the source of a `{expr=}` field from just after the brace
// up to the current token, with comments removed as CPython does.
func (p *parser) debugText(start token.Pos, first int) string {
	var b strings.Builder
	gap := func(from, to token.Pos) {
		g := string(p.src[p.file.Offset(from):p.file.Offset(to)])
		for {
			i := strings.IndexByte(g, '#')
			if i < 0 {
				break
			}
			b.WriteString(g[:i])
			g = g[i:]
			j := strings.IndexAny(g, "\r\n")
			if j < 0 {
				g = ""
				break
			}
			g = g[j:]
		}
		b.WriteString(g)
	}
	prev := start
	for k := first; k < p.i; k++ {
		t := p.tokAt(k)
		gap(prev, t.Pos)
		b.Write(p.src[p.file.Offset(t.Pos):p.file.Offset(t.End)])
		prev = t.End
	}
	gap(prev, p.pos)
	text := b.String()
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	}
	return text
}

// decodeLiteral decodes the body of a string literal: newlines are
// normalized, escapes processed unless raw. For bytes the result holds one
// byte per character. msg is CPython's error text when the literal is
// invalid.
func decodeLiteral(body string, raw, isBytes bool) (string, string) {
	if strings.IndexByte(body, '\r') >= 0 {
		body = strings.ReplaceAll(body, "\r\n", "\n")
		body = strings.ReplaceAll(body, "\r", "\n")
	}
	if isBytes {
		for i := 0; i < len(body); i++ {
			if body[i] >= 0x80 {
				return "", "bytes can only contain ASCII literal characters"
			}
		}
	}
	if raw || strings.IndexByte(body, '\\') < 0 {
		return body, ""
	}
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(body) {
			b.WriteByte('\\')
			break
		}
		e := body[i+1]
		i += 2
		switch e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(e - '0')
			for k := 0; k < 2 && i < len(body) && body[i] >= '0' && body[i] <= '7'; k++ {
				v = v*8 + int(body[i]-'0')
				i++
			}
			if isBytes {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
		case 'x':
			if i+2 > len(body) || !isHexStr(body[i:i+2]) {
				return "", "(unicode error) 'unicodeescape' codec can't decode bytes: truncated \\xXX escape"
			}
			v, _ := strconv.ParseUint(body[i:i+2], 16, 8)
			i += 2
			if isBytes {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
		case 'u', 'U', 'N':
			if isBytes {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			var r rune
			switch e {
			case 'u', 'U':
				n := 4
				if e == 'U' {
					n = 8
				}
				if i+n > len(body) || !isHexStr(body[i:i+n]) {
					return "", fmt.Sprintf("(unicode error) 'unicodeescape' codec can't decode bytes: truncated \\%cXXXX escape", e)
				}
				v, _ := strconv.ParseUint(body[i:i+n], 16, 32)
				i += n
				if v > 0x10FFFF {
					return "", "(unicode error) 'unicodeescape' codec can't decode bytes: illegal Unicode character"
				}
				r = rune(v)
			case 'N':
				if i >= len(body) || body[i] != '{' {
					return "", "(unicode error) 'unicodeescape' codec can't decode bytes: malformed \\N character escape"
				}
				j := strings.IndexByte(body[i:], '}')
				if j < 0 || j == 1 {
					return "", "(unicode error) 'unicodeescape' codec can't decode bytes: malformed \\N character escape"
				}
				name := body[i+1 : i+j]
				i += j + 1
				var ok bool
				r, ok = LookupUnicodeName(name)
				if !ok {
					return "", "(unicode error) 'unicodeescape' codec can't decode bytes: unknown Unicode character name"
				}
			}
			if r >= 0xD800 && r <= 0xDFFF {
				// A lone surrogate has no UTF-8 form: it is kept in its
				// generalized (WTF-8) three-byte form, which repr() and
				// unparse print as \udXXX and JSON output turns into U+FFFD.
				b.WriteByte(byte(0xE0 | r>>12))
				b.WriteByte(byte(0x80 | (r>>6)&0x3F))
				b.WriteByte(byte(0x80 | r&0x3F))
				continue
			}
			b.WriteRune(r)
		default:
			// invalid escape: kept as written (a warning in CPython)
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), ""
}

func isHexStr(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f') {
			return false
		}
	}
	return true
}

var (
	namesOnce sync.Once
	namesMap  map[string]rune
)

// LookupUnicodeName resolves the name of a \N{...} escape as Python does:
// case-insensitively, including the algorithmic names of CJK unified
// ideographs and Hangul syllables and the formal name aliases.
func LookupUnicodeName(name string) (rune, bool) {
	up := strings.ToUpper(name)
	if strings.HasPrefix(up, "CJK UNIFIED IDEOGRAPH-") {
		hex := up[len("CJK UNIFIED IDEOGRAPH-"):]
		if (len(hex) == 4 || len(hex) == 5) && isHexStr(hex) {
			v, _ := strconv.ParseUint(hex, 16, 32)
			if isUnifiedIdeograph(rune(v)) {
				return rune(v), true
			}
		}
		return 0, false
	}
	if strings.HasPrefix(up, "HANGUL SYLLABLE ") {
		if r, ok := hangulLookup(up[len("HANGUL SYLLABLE "):]); ok {
			return r, true
		}
	}
	namesOnce.Do(buildNames)
	r, ok := namesMap[up]
	return r, ok
}

func buildNames() {
	namesMap = make(map[string]rune, 40000)
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r == 0xD800 {
			r = 0xE000
		}
		n := runenames.Name(r)
		if n == "" || n[0] == '<' {
			continue
		}
		namesMap[n] = r
	}
	for _, a := range nameAliases {
		namesMap[a.name] = a.r
	}
}

func isUnifiedIdeograph(r rune) bool {
	return 0x3400 <= r && r <= 0x4DBF || 0x4E00 <= r && r <= 0x9FFF || 0x20000 <= r && r <= 0x2A6DF ||
		0x2A700 <= r && r <= 0x2B739 || 0x2B740 <= r && r <= 0x2B81D || 0x2B820 <= r && r <= 0x2CEA1 ||
		0x2CEB0 <= r && r <= 0x2EBE0 || 0x30000 <= r && r <= 0x3134A || 0x31350 <= r && r <= 0x323AF
}

var (
	hangulL = []string{"G", "GG", "N", "D", "DD", "R", "M", "B", "BB", "S", "SS", "", "J", "JJ", "C", "K", "T", "P", "H"}
	hangulV = []string{"A", "AE", "YA", "YAE", "EO", "E", "YEO", "YE", "O", "WA", "WAE", "OE", "YO", "U", "WEO", "WE", "WI", "YU", "EU", "YI", "I"}
	hangulT = []string{"", "G", "GG", "GS", "N", "NJ", "NH", "D", "L", "LG", "LM", "LB", "LS", "LT", "LP", "LH", "M", "B", "BS", "S", "SS", "NG", "J", "C", "K", "T", "P", "H"}
)

func hangulLookup(s string) (rune, bool) {
	for l, ls := range hangulL {
		if !strings.HasPrefix(s, ls) {
			continue
		}
		for v, vs := range hangulV {
			if !strings.HasPrefix(s[len(ls):], vs) {
				continue
			}
			rest := s[len(ls)+len(vs):]
			for t, ts := range hangulT {
				if rest == ts {
					return rune(0xAC00 + (l*21+v)*28 + t), true
				}
			}
		}
	}
	return 0, false
}
