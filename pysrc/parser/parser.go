// Package parser parses Python 3.12 source into the syntax tree of package
// ast, following CPython's grammar (Grammar/python.gram): it accepts what
// ast.parse accepts and reports an error for what ast.parse rejects, and
// nothing more (errors of later compiler passes, such as duplicate
// parameter names or `return` outside a function, are not reported).
//
//	mod, err := parser.ParseFile("tool.py", src)
//	if err != nil {
//		fmt.Println(err) // tool.py:3:9: invalid syntax (one error per line)
//	}
//	for _, st := range mod.Body { ... } // a partial tree even on error
//
// The parser never panics on input, caps nesting depth, recovers at
// statement boundaries with a no-progress guard, and runs in linear time.
package parser

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/scanner"
	"github.com/lcptools/lcp/pysrc/token"
)

// maxDepth bounds the nesting of expressions and blocks. CPython stops
// earlier (200 brackets, 100 indentation levels); deeper input is an error
// here too, so time and stack stay bounded.
const maxDepth = 3000

// maxErrors bounds the number of errors collected for one file.
const maxErrors = 100

// ErrNotUTF8 is reported (wrapped) when the source is not valid UTF-8.
var ErrNotUTF8 = errors.New("source is not valid UTF-8")

type tk = scanner.Item

type parser struct {
	file *token.File
	src  []byte
	toks []tk
	i    int

	// current token
	tok      token.Token
	pos, end token.Pos
	lit      string

	scanner scanner.Scanner
	ar      *Arena
	shared  bool       // literals share memory with src
	stmts   []ast.Stmt // statements of the blocks being parsed

	// For annotated assignments: the group that opens the statement.
	stmtStart int
	leadGroup *group
	exprs     []ast.Expr // arguments of the calls being parsed
	kws       []*ast.Keyword
	params    []*ast.Arg  // parameters of the defs and lambdas being parsed
	cmpOps    []ast.CmpOp // operators of the comparisons being parsed
	base      int         // absolute index of p.toks[0]
	eofSeen   bool        // the scanner returned EOF

	errors   scanner.ErrorList
	lastLine int // line of the last error, to report one error per line
	depth    int
	trial    int // > 0 while parsing speculatively
	fdepth   int // nesting of f-string format specs
	bail     bool
}

// group is a parenthesized expression: its contents and the end of ')'.
type group struct {
	inner ast.Expr
	end   token.Pos
}

type trialFailed struct{}
type bailout struct{}

// ParseFile parses the source of one Python file. It returns the module,
// possibly partial, and a scanner.ErrorList (sorted) when there are syntax
// errors. src must be UTF-8; a UTF-8 byte-order mark is skipped.
func ParseFile(filename string, src []byte) (*ast.Module, error) {
	mod, _, err := Parse(filename, src)
	return mod, err
}

// Parse is ParseFile that also returns the token.File, to turn node
// positions into lines and columns.
func Parse(filename string, src []byte) (mod *ast.Module, file *token.File, err error) {
	return parse(filename, src, new(Arena), false)
}

// ParseArena is Parse with the nodes taken from arena, which may be
// reused (after arena.Reset) once the tree is no longer needed. The
// strings of the tree (names, literals) share memory with src, which must
// not be modified while they are in use: a caller that keeps any of them
// beyond that copies them (strings.Clone).
func ParseArena(filename string, src []byte, arena *Arena) (mod *ast.Module, file *token.File, err error) {
	return parse(filename, src, arena, true)
}

func parse(filename string, src []byte, arena *Arena, shared bool) (mod *ast.Module, file *token.File, err error) {
	file = token.NewFile(filename, src)
	p := &parser{file: file, src: src, ar: arena, shared: shared}
	if !utf8.Valid(src) {
		off := 0
		for off < len(src) {
			r, n := utf8.DecodeRune(src[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		p.errors.Add(file.Position(file.Pos(off)), "source is not valid UTF-8")
		mod = &ast.Module{Span: ast.Span{From: file.Pos(0), To: file.Pos(len(src))}}
		p.errors.Sort()
		return mod, file, fmt.Errorf("%w: %w", ErrNotUTF8, p.errors)
	}
	p.tokenize()
	mod = p.parseModule()
	// The window (grown for the longest statement) serves the next
	// parse with this arena. Tokens hold no pointers: nothing to clear.
	arena.toks = p.toks[:0]
	p.errors.Sort()
	return mod, file, p.errors.Err()
}

// Tokens are read on demand into a window p.toks that starts at absolute
// index p.base; the window is trimmed at statement boundaries (outside
// speculative parses), so memory stays proportional to the longest
// statement, not to the file.
func (p *parser) tokenize() {
	onError := func(pos token.Position, msg string) {
		if len(p.errors) < maxErrors {
			p.errors.Add(pos, msg)
		}
	}
	if p.shared {
		p.scanner.InitShared(p.file, p.src, onError)
	} else {
		p.scanner.Init(p.file, p.src, onError)
	}
	p.toks = p.ar.toks[:0]
	if cap(p.toks) == 0 {
		p.toks = make([]tk, 0, 64)
	}
	p.i = 0
	p.load()
}

// tokAt returns the token at absolute index i (EOF past the end).
func (p *parser) tokAt(i int) *tk {
	for i-p.base >= len(p.toks) {
		if p.eofSeen {
			return &p.toks[len(p.toks)-1]
		}
		p.toks = p.scanner.AppendNext(p.toks)
		if p.toks[len(p.toks)-1].Tok == token.EOF {
			p.eofSeen = true // and the scanner's last token
		}
	}
	return &p.toks[i-p.base]
}

// compact drops the tokens before the previous one.
func (p *parser) compact() {
	if p.trial > 0 || p.i-1 <= p.base {
		return
	}
	n := copy(p.toks, p.toks[p.i-1-p.base:])
	p.toks = p.toks[:n]
	p.base = p.i - 1
}

func (p *parser) load() {
	var t *tk
	if j := p.i - p.base; j < len(p.toks) {
		t = &p.toks[j] // a token looked at before: no call
	} else {
		t = p.tokAt(p.i)
	}
	p.tok, p.pos, p.end, p.lit = t.Tok, t.Pos, t.End, p.scanner.Lit(*t)
}

func (p *parser) next() {
	if p.tok != token.EOF {
		p.i++
	}
	p.load()
}

func (p *parser) peek(k int) token.Token { return p.tokAt(p.i + k).Tok }

func (p *parser) peekLit(k int) string { return p.scanner.Lit(*p.tokAt(p.i + k)) }

// prevEnd is the end of the previous token.
func (p *parser) prevEnd() token.Pos {
	if p.i == 0 {
		return p.pos
	}
	return p.tokAt(p.i - 1).End
}

func (p *parser) reset(i int) {
	p.i = i
	p.load()
}

func (p *parser) error(pos token.Pos, msg string) {
	if p.trial > 0 {
		panic(trialFailed{})
	}
	position := p.file.Position(pos)
	if position.Line == p.lastLine && len(p.errors) > 0 {
		return
	}
	p.lastLine = position.Line
	p.errors.Add(position, msg)
	if len(p.errors) >= maxErrors {
		p.bail = true
		panic(bailout{})
	}
}

func (p *parser) syntaxError() {
	msg := "invalid syntax"
	switch p.tok {
	case token.INDENT:
		msg = "unexpected indent"
	case token.DEDENT:
		msg = "unindent does not match any outer indentation level"
	case token.EOF:
		msg = "unexpected EOF while parsing"
	}
	p.error(p.pos, msg)
}

func (p *parser) expect(tok token.Token) token.Pos {
	pos := p.pos
	if p.tok != tok {
		if p.tok == token.ILLEGAL || p.tok == token.INDENT || p.tok == token.DEDENT || p.tok == token.EOF {
			p.syntaxError()
		} else {
			p.error(p.pos, fmt.Sprintf("expected '%s'", tok))
		}
		return pos
	}
	p.next()
	return pos
}

func (p *parser) got(tok token.Token) bool {
	if p.tok == tok {
		p.next()
		return true
	}
	return false
}

// try runs f speculatively: on any syntax error the tokens consumed are
// given back and try returns false.
func (p *parser) try(f func()) (ok bool) {
	save := p.i
	marks := p.stackMarks()
	p.trial++
	defer func() {
		p.trial--
		if r := recover(); r != nil {
			if _, is := r.(trialFailed); !is {
				panic(r)
			}
			p.reset(save)
			p.truncStacks(marks)
			ok = false
		}
	}()
	f()
	return true
}

// stackMarks are the heights of the list stacks.
type stackMarks struct{ exprs, kws, params, cmpOps int }

func (p *parser) stackMarks() stackMarks {
	return stackMarks{len(p.exprs), len(p.kws), len(p.params), len(p.cmpOps)}
}

// truncStacks drops what an aborted parse left on the list stacks.
func (p *parser) truncStacks(m stackMarks) {
	truncStack(&p.exprs, m.exprs)
	truncStack(&p.kws, m.kws)
	truncStack(&p.params, m.params)
	truncStack(&p.cmpOps, m.cmpOps)
}

func truncStack[T any](stack *[]T, mark int) {
	if len(*stack) > mark {
		clear((*stack)[mark:])
		*stack = (*stack)[:mark]
	}
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.error(p.pos, "too many nested parentheses or blocks")
		panic(bailout{})
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) isSoft(name string) bool { return p.tok == token.NAME && p.lit == name }

// ---------------------------------------------------------------------------
// Statements

func (p *parser) parseModule() (mod *ast.Module) {
	mod = &ast.Module{Span: ast.Span{From: p.file.Pos(0), To: p.file.Pos(len(p.src))}}
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(bailout); !is {
				panic(r)
			}
		}
	}()
	done := 0 // statements of the module completed so far
	defer func() { mod.Body = p.popStmts(0, done) }()
	for p.tok != token.EOF {
		p.parseStatementRecover()
		done = len(p.stmts)
	}
	return mod
}

// Statements are collected on a stack shared by all blocks (p.stmts) and
// copied into an exactly sized slice when a block ends: one allocation per
// block instead of one per statement.

// popStmts returns the statements p.stmts[mark:end] and drops everything
// above mark.
func (p *parser) popStmts(mark, end int) []ast.Stmt {
	var out []ast.Stmt
	if end > mark {
		out = p.ar.stmtLists.make(end - mark)
		copy(out, p.stmts[mark:end])
	}
	clear(p.stmts[mark:])
	p.stmts = p.stmts[:mark]
	return out
}

// parseStatementRecover parses one statement onto p.stmts; on a syntax
// error it skips to the end of the logical line (and over an indented block
// that follows) and pushes a BadStmt. It always consumes at least one token.
func (p *parser) parseStatementRecover() {
	p.compact()
	start := p.i
	startPos := p.pos
	depth := p.depth
	mark := len(p.stmts)
	marks := p.stackMarks()
	failed := false
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, is := r.(syncError); !is {
					panic(r)
				}
				failed = true
			}
		}()
		p.parseStatement()
	}()
	p.depth = depth
	if failed || p.i == start {
		clear(p.stmts[mark:])
		p.stmts = p.stmts[:mark]
		p.truncStacks(marks)
		from := startPos
		p.skipLine()
		if p.i == start {
			p.next()
		}
		p.stmts = append(p.stmts, &ast.BadStmt{Span: ast.Span{From: from, To: p.prevEnd()}})
		if p.tok == token.INDENT {
			// the block of the broken statement: kept in the partial tree,
			// without an "unexpected indent" error
			p.enter()
			p.next()
			for p.tok != token.DEDENT && p.tok != token.EOF {
				p.parseStatementRecover()
			}
			p.got(token.DEDENT)
			p.leave()
		}
	}
}

// syncError aborts the current statement after an error was recorded.
type syncError struct{}

func (p *parser) fail() {
	p.syntaxError()
	panic(syncError{})
}

func (p *parser) failAt(pos token.Pos, msg string) {
	p.error(pos, msg)
	panic(syncError{})
}

// skipLine skips to just after the next NEWLINE; if an indented block
// follows, it is skipped too (its statements are parsed for the partial
// tree and dropped).
func (p *parser) skipLine() {
	for p.tok != token.NEWLINE && p.tok != token.EOF {
		if p.tok == token.INDENT || p.tok == token.DEDENT {
			return
		}
		p.next()
	}
	if p.tok == token.NEWLINE {
		p.next()
	}
}

// parseStatement parses one statement (several for `a; b`) onto p.stmts.
func (p *parser) parseStatement() {
	switch p.tok {
	case token.DEF, token.IF, token.CLASS, token.WITH, token.FOR, token.TRY, token.WHILE, token.AT, token.ASYNC:
		st := p.parseCompound()
		p.stmts = append(p.stmts, st)
		return
	case token.INDENT:
		p.error(p.pos, "unexpected indent")
		// Parse the stray block so the partial tree keeps its contents.
		p.enter()
		defer p.leave()
		p.next()
		for p.tok != token.DEDENT && p.tok != token.EOF {
			p.parseStatementRecover()
		}
		p.got(token.DEDENT)
		return
	case token.DEDENT:
		p.error(p.pos, "unindent does not match any outer indentation level")
		p.next()
		return
	case token.NAME:
		if p.lit == "match" && p.end-p.pos == 5 {
			if st := p.tryMatch(); st != nil {
				p.stmts = append(p.stmts, st)
				return
			}
		}
	}
	p.parseSimpleStmts()
}

// parseSimpleStmts parses `a; b; c NEWLINE` onto p.stmts.
func (p *parser) parseSimpleStmts() {
	for {
		st := p.parseSimpleStmt()
		p.stmts = append(p.stmts, st)
		if p.tok != token.SEMI {
			break
		}
		p.next()
		if p.tok == token.NEWLINE {
			break
		}
	}
	if p.tok != token.NEWLINE {
		p.fail()
	}
	p.next()
}

func (p *parser) parseSimpleStmt() ast.Stmt {
	pos := p.pos
	switch p.tok {
	case token.PASS:
		p.next()
		return &ast.Pass{Span: ast.Span{From: pos, To: p.prevEnd()}}
	case token.BREAK:
		p.next()
		return &ast.Break{Span: ast.Span{From: pos, To: p.prevEnd()}}
	case token.CONTINUE:
		p.next()
		return &ast.Continue{Span: ast.Span{From: pos, To: p.prevEnd()}}
	case token.RETURN:
		p.next()
		var v ast.Expr
		if !p.atStmtEnd() {
			v = p.parseStarExpressions()
		}
		return put(&p.ar.returns, ast.Return{Span: ast.Span{From: pos, To: p.prevEnd()}, Value: v})
	case token.RAISE:
		p.next()
		st := &ast.Raise{}
		if !p.atStmtEnd() {
			st.Exc = p.parseExpression()
			if p.got(token.FROM) {
				st.Cause = p.parseExpression()
			}
		}
		st.Span = ast.Span{From: pos, To: p.prevEnd()}
		return st
	case token.GLOBAL, token.NONLOCAL:
		kw := p.tok
		p.next()
		var names []string
		for {
			names = append(names, p.parseIdent())
			if !p.got(token.COMMA) {
				break
			}
		}
		if kw == token.GLOBAL {
			return &ast.Global{Span: ast.Span{From: pos, To: p.prevEnd()}, Names: names}
		}
		return &ast.Nonlocal{Span: ast.Span{From: pos, To: p.prevEnd()}, Names: names}
	case token.DEL:
		p.next()
		var targets []ast.Expr
		for {
			t := p.parseDelTarget()
			targets = append(targets, t)
			if !p.got(token.COMMA) || p.atStmtEnd() {
				break
			}
		}
		return &ast.Delete{Span: ast.Span{From: pos, To: p.prevEnd()}, Targets: targets}
	case token.ASSERT:
		p.next()
		st := &ast.Assert{Test: p.parseExpression()}
		if p.got(token.COMMA) {
			st.Msg = p.parseExpression()
		}
		st.Span = ast.Span{From: pos, To: p.prevEnd()}
		return st
	case token.IMPORT:
		return p.parseImport()
	case token.FROM:
		return p.parseImportFrom()
	case token.NAME:
		if p.lit == "type" && p.peek(1) == token.NAME && (p.peek(2) == token.EQUAL || p.peek(2) == token.LSQB) {
			return p.parseTypeAlias()
		}
	}
	return p.parseExprOrAssign()
}

func (p *parser) atStmtEnd() bool {
	return p.tok == token.NEWLINE || p.tok == token.SEMI || p.tok == token.EOF
}

func (p *parser) parseIdent() string {
	if p.tok != token.NAME {
		p.fail()
	}
	name := p.lit
	p.next()
	return name
}

func (p *parser) parseTypeAlias() ast.Stmt {
	pos := p.pos
	p.next()
	npos := p.pos
	name := &ast.Name{Id: p.parseIdent()}
	name.Span = ast.Span{From: npos, To: p.prevEnd()}
	st := &ast.TypeAlias{Name: name}
	if p.tok == token.LSQB {
		st.TypeParams = p.parseTypeParams()
	}
	p.expect(token.EQUAL)
	st.Value = p.parseExpression()
	st.Span = ast.Span{From: pos, To: p.prevEnd()}
	return st
}

func (p *parser) parseTypeParams() []*ast.TypeParam {
	p.expect(token.LSQB)
	var list []*ast.TypeParam
	for {
		pos := p.pos
		tp := &ast.TypeParam{}
		switch p.tok {
		case token.STAR:
			p.next()
			tp.Kind = ast.TypeVarTuple
			tp.Name = p.parseIdent()
			if p.tok == token.COLON {
				p.failAt(p.pos, "cannot use bound with TypeVarTuple")
			}
		case token.DOUBLESTAR:
			p.next()
			tp.Kind = ast.ParamSpec
			tp.Name = p.parseIdent()
			if p.tok == token.COLON {
				p.failAt(p.pos, "cannot use bound with ParamSpec")
			}
		default:
			tp.Name = p.parseIdent()
			if p.got(token.COLON) {
				tp.Bound = p.parseExpression()
			}
		}
		tp.Span = ast.Span{From: pos, To: p.prevEnd()}
		list = append(list, tp)
		if !p.got(token.COMMA) || p.tok == token.RSQB {
			break
		}
	}
	p.expect(token.RSQB)
	return list
}

func (p *parser) parseDottedName() string {
	name := p.parseIdent()
	for p.tok == token.DOT {
		p.next()
		name += "." + p.parseIdent()
	}
	return name
}

func (p *parser) parseImport() ast.Stmt {
	pos := p.pos
	p.next()
	st := &ast.Import{}
	for {
		apos := p.pos
		a := put(&p.ar.aliases, ast.Alias{Name: p.parseDottedName()})
		if p.got(token.AS) {
			a.AsName = p.parseIdent()
		}
		a.Span = ast.Span{From: apos, To: p.prevEnd()}
		st.Names = append(st.Names, a)
		if !p.got(token.COMMA) {
			break
		}
	}
	st.Span = ast.Span{From: pos, To: p.prevEnd()}
	return st
}

func (p *parser) parseImportFrom() ast.Stmt {
	pos := p.pos
	p.next()
	st := put(&p.ar.imports, ast.ImportFrom{})
	for p.tok == token.DOT || p.tok == token.ELLIPSIS {
		if p.tok == token.DOT {
			st.Level++
		} else {
			st.Level += 3
		}
		p.next()
	}
	if p.tok == token.NAME {
		st.Module = p.parseDottedName()
	} else if st.Level == 0 {
		p.fail()
	}
	p.expect(token.IMPORT)
	if p.tok == token.STAR {
		apos := p.pos
		p.next()
		st.Names = []*ast.Alias{{Span: ast.Span{From: apos, To: p.prevEnd()}, Name: "*"}}
	} else {
		paren := p.got(token.LPAR)
		for {
			apos := p.pos
			a := put(&p.ar.aliases, ast.Alias{Name: p.parseIdent()})
			if p.got(token.AS) {
				a.AsName = p.parseIdent()
			}
			a.Span = ast.Span{From: apos, To: p.prevEnd()}
			st.Names = append(st.Names, a)
			if !p.got(token.COMMA) {
				break
			}
			if paren && p.tok == token.RPAR {
				break
			}
			if !paren && p.atStmtEnd() {
				p.failAt(p.prevEnd()-1, "trailing comma not allowed without surrounding parentheses")
			}
		}
		if paren {
			p.expect(token.RPAR)
		}
	}
	st.Span = ast.Span{From: pos, To: p.prevEnd()}
	return st
}

// augOp is the binary operator of an augmented assignment token, or
// ILLEGAL.
func augOp(tok token.Token) token.Token {
	if tok >= 0 && int(tok) < len(augOps) {
		return augOps[tok]
	}
	return token.ILLEGAL
}

// augOps is indexed by token (a table: this is asked for every
// expression statement).
var augOps = [...]token.Token{
	token.PLUSEQUAL: token.PLUS, token.MINEQUAL: token.MINUS, token.STAREQUAL: token.STAR,
	token.SLASHEQUAL: token.SLASH, token.PERCENTEQUAL: token.PERCENT, token.AMPEREQUAL: token.AMPER,
	token.VBAREQUAL: token.VBAR, token.CIRCUMFLEXEQUAL: token.CIRCUMFLEX, token.LEFTSHIFTEQUAL: token.LEFTSHIFT,
	token.RIGHTSHIFTEQUAL: token.RIGHTSHIFT, token.DOUBLESTAREQUAL: token.DOUBLESTAR,
	token.DOUBLESLASHEQUAL: token.DOUBLESLASH, token.ATEQUAL: token.AT,
}

// parseExprOrAssign parses an expression statement, an assignment, an
// annotated assignment or an augmented assignment.
func (p *parser) parseExprOrAssign() ast.Stmt {
	pos := p.pos
	p.stmtStart, p.leadGroup = p.i, nil
	var first ast.Expr
	if p.tok == token.YIELD {
		first = p.parseYield()
	} else {
		first = p.parseStarExpressions()
	}
	switch p.tok {
	case token.COLON:
		// annotated assignment
		p.checkAnnTarget(first)
		if g := p.leadGroup; g != nil && g.end != p.prevEnd() {
			switch g.inner.(type) {
			case *ast.Name, *ast.Attribute, *ast.Subscript:
				// PEG: '(' single_target ')' matched a prefix of the target
				// and the ordered choice does not come back: `(x).a: int`
				// is rejected by ast.parse.
				p.failAt(first.Pos(), "illegal target for annotation")
			}
		}
		p.next()
		st := put(&p.ar.anns, ast.AnnAssign{Target: first, Annotation: p.parseExpression()})
		_, isName := first.(*ast.Name)
		st.Simple = isName && p.src[p.file.Offset(pos)] != '('
		if p.got(token.EQUAL) {
			st.Value = p.parseAssignRHS()
		}
		st.Span = ast.Span{From: pos, To: p.prevEnd()}
		return st
	case token.EQUAL:
		// the targets wait on the expression stack, then move to the arena
		tmark := len(p.exprs)
		p.exprs = append(p.exprs, first)
		var value ast.Expr
		for p.tok == token.EQUAL {
			p.next()
			value = p.parseAssignRHS()
			if p.tok == token.EQUAL {
				p.exprs = append(p.exprs, value)
			}
		}
		targets := popStack(&p.exprs, tmark, &p.ar.exprLists)
		for _, t := range targets {
			p.checkTarget(t, targetAssign)
		}
		a := p.ar.assigns.take()
		a.Span, a.Targets, a.Value = ast.Span{From: pos, To: p.prevEnd()}, targets, value
		return a
	}
	if op := augOp(p.tok); op != token.ILLEGAL {
		p.checkAugTarget(first)
		p.next()
		value := p.parseAssignRHS()
		return put(&p.ar.augs, ast.AugAssign{Span: ast.Span{From: pos, To: p.prevEnd()}, Target: first, Op: op, Value: value})
	}
	e := p.ar.exprs.take()
	e.Span, e.Value = ast.Span{From: pos, To: p.prevEnd()}, first
	return e
}

func (p *parser) parseAssignRHS() ast.Expr {
	if p.tok == token.YIELD {
		return p.parseYield()
	}
	return p.parseStarExpressions()
}

func (p *parser) parseCompound() ast.Stmt {
	switch p.tok {
	case token.AT:
		return p.parseDecorated()
	case token.DEF:
		return p.parseFuncDef(p.pos, nil, false)
	case token.CLASS:
		return p.parseClassDef(p.pos, nil)
	case token.IF:
		return p.parseIf()
	case token.WHILE:
		return p.parseWhile()
	case token.FOR:
		return p.parseFor(p.pos, false)
	case token.WITH:
		return p.parseWith(p.pos, false)
	case token.TRY:
		return p.parseTry()
	case token.ASYNC:
		pos := p.pos
		p.next()
		switch p.tok {
		case token.DEF:
			return p.parseFuncDef(pos, nil, true)
		case token.FOR:
			return p.parseFor(pos, true)
		case token.WITH:
			return p.parseWith(pos, true)
		}
		p.fail()
	}
	p.fail()
	return nil
}

func (p *parser) parseDecorated() ast.Stmt {
	pos := p.pos
	var decos []ast.Expr
	for p.tok == token.AT {
		p.next()
		decos = append(decos, p.parseNamedExpression())
		if p.tok != token.NEWLINE {
			p.fail()
		}
		p.next()
	}
	switch p.tok {
	case token.DEF:
		return p.parseFuncDef(pos, decos, false)
	case token.CLASS:
		return p.parseClassDef(pos, decos)
	case token.ASYNC:
		p.next()
		if p.tok == token.DEF {
			return p.parseFuncDef(pos, decos, true)
		}
	}
	p.fail()
	return nil
}

// parseBlock parses ':' block, where kind names the statement for the
// "expected an indented block" error.
func (p *parser) parseBlock(kind string, line token.Pos) []ast.Stmt {
	p.expect(token.COLON)
	return p.parseBody(kind, line)
}

func (p *parser) parseBody(kind string, line token.Pos) []ast.Stmt {
	mark := len(p.stmts)
	if p.tok != token.NEWLINE {
		p.parseSimpleStmts()
		return p.popStmts(mark, len(p.stmts))
	}
	p.next()
	if p.tok != token.INDENT {
		p.failAt(p.pos, fmt.Sprintf("expected an indented block after %s on line %d", kind, p.file.Line(line)))
	}
	p.enter()
	defer p.leave()
	p.next()
	for p.tok != token.DEDENT && p.tok != token.EOF {
		p.parseStatementRecover()
	}
	p.got(token.DEDENT)
	return p.popStmts(mark, len(p.stmts))
}

func (p *parser) parseFuncDef(pos token.Pos, decos []ast.Expr, isAsync bool) ast.Stmt {
	defPos := p.pos
	p.expect(token.DEF)
	st := put(&p.ar.funcs, ast.FunctionDef{IsAsync: isAsync, Decorators: decos})
	st.NamePos = p.pos
	st.Name = p.parseIdent()
	if p.tok == token.LSQB {
		st.TypeParams = p.parseTypeParams()
	}
	p.expect(token.LPAR)
	st.Args = p.parseParams(token.RPAR, true)
	p.expect(token.RPAR)
	if p.got(token.RARROW) {
		st.Returns = p.parseExpression()
	}
	st.Body = p.parseBlock("function definition", defPos)
	st.Span = ast.Span{From: pos, To: p.prevEnd()}
	return st
}

func (p *parser) parseClassDef(pos token.Pos, decos []ast.Expr) ast.Stmt {
	clsPos := p.pos
	p.expect(token.CLASS)
	st := &ast.ClassDef{Decorators: decos}
	st.Name = p.parseIdent()
	if p.tok == token.LSQB {
		st.TypeParams = p.parseTypeParams()
	}
	if p.got(token.LPAR) {
		st.Bases, st.Keywords = p.parseCallArgs(false)
		p.expect(token.RPAR)
	}
	st.Body = p.parseBlock("class definition", clsPos)
	st.Span = ast.Span{From: pos, To: p.prevEnd()}
	return st
}

func (p *parser) parseIf() ast.Stmt {
	pos := p.pos
	kw := "'if' statement"
	if p.tok == token.ELIF {
		kw = "'elif' statement"
	}
	p.next()
	st := put(&p.ar.ifs, ast.If{Test: p.parseNamedExpression()})
	st.Body = p.parseBlock(kw, pos)
	switch p.tok {
	case token.ELIF:
		st.OrElse = []ast.Stmt{p.parseIf()}
	case token.ELSE:
		epos := p.pos
		p.next()
		st.OrElse = p.parseBlock("'else' statement", epos)
	}
	st.Span = ast.Span{From: pos, To: p.prevEnd()}
	return st
}

func (p *parser) parseWhile() ast.Stmt {
	pos := p.pos
	p.next()
	st := &ast.While{Test: p.parseNamedExpression()}
	st.Body = p.parseBlock("'while' statement", pos)
	if p.tok == token.ELSE {
		epos := p.pos
		p.next()
		st.OrElse = p.parseBlock("'else' statement", epos)
	}
	st.Span = ast.Span{From: pos, To: p.prevEnd()}
	return st
}

func (p *parser) parseFor(pos token.Pos, isAsync bool) ast.Stmt {
	forPos := p.pos
	p.expect(token.FOR)
	st := put(&p.ar.fors, ast.For{IsAsync: isAsync})
	st.Target = p.parseStarTargets()
	p.expect(token.IN)
	st.Iter = p.parseStarExpressions()
	st.Body = p.parseBlock("'for' statement", forPos)
	if p.tok == token.ELSE {
		epos := p.pos
		p.next()
		st.OrElse = p.parseBlock("'else' statement", epos)
	}
	st.Span = ast.Span{From: pos, To: p.prevEnd()}
	return st
}

func (p *parser) parseWith(pos token.Pos, isAsync bool) ast.Stmt {
	withPos := p.pos
	p.expect(token.WITH)
	st := &ast.With{IsAsync: isAsync}
	parsed := false
	if p.tok == token.LPAR {
		// with ( item, item, ) : -- tried first, as in the grammar.
		parsed = p.try(func() {
			p.next()
			var items []*ast.WithItem
			for {
				items = append(items, p.parseWithItem())
				if !p.got(token.COMMA) || p.tok == token.RPAR {
					break
				}
			}
			p.expect(token.RPAR)
			if p.tok != token.COLON {
				p.fail()
			}
			st.Items = items
		})
	}
	if !parsed {
		for {
			st.Items = append(st.Items, p.parseWithItem())
			if !p.got(token.COMMA) {
				break
			}
		}
	}
	st.Body = p.parseBlock("'with' statement", withPos)
	st.Span = ast.Span{From: pos, To: p.prevEnd()}
	return st
}

func (p *parser) parseWithItem() *ast.WithItem {
	pos := p.pos
	item := &ast.WithItem{Context: p.parseExpression()}
	if p.got(token.AS) {
		item.Vars = p.parseStarTarget()
		if p.tok != token.COMMA && p.tok != token.RPAR && p.tok != token.COLON {
			p.fail()
		}
	}
	item.Span = ast.Span{From: pos, To: p.prevEnd()}
	return item
}

func (p *parser) parseTry() ast.Stmt {
	pos := p.pos
	p.next()
	st := &ast.Try{}
	st.Body = p.parseBlock("'try' statement", pos)
	sawPlain, sawStar := false, false
	for p.tok == token.EXCEPT {
		hpos := p.pos
		p.next()
		star := p.got(token.STAR)
		if star {
			sawStar = true
		} else {
			sawPlain = true
		}
		if sawStar && sawPlain {
			p.failAt(hpos, "cannot have both 'except' and 'except*' on the same 'try'")
		}
		h := &ast.ExceptHandler{}
		if p.tok != token.COLON {
			h.Type = p.parseExpression()
			if p.tok == token.COMMA {
				p.failAt(h.Type.Pos(), "multiple exception types must be parenthesized")
			}
			if p.got(token.AS) {
				h.Name = p.parseIdent()
			}
		} else if star {
			p.failAt(p.pos, "expected one or more exception types")
		}
		kw := "'except' statement"
		if star {
			kw = "'except*' statement"
		}
		h.Body = p.parseBlock(kw, hpos)
		h.Span = ast.Span{From: hpos, To: p.prevEnd()}
		st.Handlers = append(st.Handlers, h)
	}
	st.Star = sawStar
	if p.tok == token.ELSE && len(st.Handlers) > 0 {
		epos := p.pos
		p.next()
		st.OrElse = p.parseBlock("'else' statement", epos)
	}
	if p.tok == token.FINALLY {
		fpos := p.pos
		p.next()
		st.FinalBody = p.parseBlock("'finally' statement", fpos)
	}
	if len(st.Handlers) == 0 && st.FinalBody == nil {
		p.failAt(p.pos, "expected 'except' or 'finally' block")
	}
	st.Span = ast.Span{From: pos, To: p.prevEnd()}
	return st
}
