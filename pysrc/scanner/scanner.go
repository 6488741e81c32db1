// Package scanner is a tokenizer for Python 3.12 source, after CPython's
// Parser/tokenizer.c. It produces NEWLINE, INDENT and DEDENT tokens, splits
// f-strings into FSTRING_START / FSTRING_MIDDLE / FSTRING_END and the tokens
// of their replacement fields (PEP 701), and reports exactly the errors that
// CPython's tokenizer reports.
//
// Typical use, as the parser does it:
//
//	var s scanner.Scanner
//	file := token.NewFile("x.py", src)
//	s.Init(file, src, func(pos token.Position, msg string) { errs.Add(pos, msg) })
//	for {
//		pos, tok, lit := s.Scan()
//		if tok == token.EOF {
//			break
//		}
//		fmt.Println(file.Position(pos), tok, lit)
//	}
//
// "\r\n" and a lone "\r" end lines exactly like "\n". The scanner never
// panics and runs in time linear in the size of the source.
package scanner

import (
	"bytes"
	"fmt"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"

	"github.com/lcptools/lcp/pysrc/token"
)

// ErrorHandler is called for every error the scanner finds.
type ErrorHandler func(pos token.Position, msg string)

type bracket struct {
	ch   byte
	offs int
}

// mode is one entry of the f-string mode stack: either an f-string whose
// literal text is being read (field == false), or a replacement field of
// the f-string below it (field == true).
type mode struct {
	field bool
	// f-string literal state
	quote  byte
	triple bool
	raw    bool
	start  int
	// replacement field state
	parenBase int  // len(brackets) when the field opened
	inSpec    bool // reading the format spec
}

// Scanner holds the state of the tokenizer while it reads one source.
// Its zero value is not usable: call Init.
type Scanner struct {
	file *token.File
	src  []byte
	text string // src as a string, so literals are substrings, not copies
	err  ErrorHandler

	// ErrorCount is the number of errors reported so far.
	ErrorCount int

	offs       int
	atBOL      bool
	indents    []int
	altIndents []int
	brackets   []bracket
	modes      []mode
	queue      []Item // tokens scanned, not yet returned from queue[qhead]
	norms      []string
	qhead      int
	lastTok    token.Token
	lastEnd    token.Pos
	done       bool
}

// Init prepares s to tokenize src. A leading UTF-8 byte-order mark is
// skipped. err may be nil. The literals returned are substrings of a copy
// of src.
func (s *Scanner) Init(file *token.File, src []byte, err ErrorHandler) {
	s.init(file, src, string(src), err)
}

// InitShared is Init without the copy: the literals returned share memory
// with src, which must not be modified while they are in use.
func (s *Scanner) InitShared(file *token.File, src []byte, err ErrorHandler) {
	s.init(file, src, unsafe.String(unsafe.SliceData(src), len(src)), err)
}

func (s *Scanner) init(file *token.File, src []byte, text string, err ErrorHandler) {
	*s = Scanner{file: file, src: src, text: text, err: err, atBOL: true, indents: []int{0}, altIndents: []int{0}, lastTok: token.NEWLINE}
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		s.offs = 3
	}
	if i := bytes.IndexByte(src, 0); i >= 0 {
		s.error(i, "source code cannot contain null bytes")
	}
}

func (s *Scanner) error(offs int, msg string) {
	s.ErrorCount++
	if s.err != nil {
		s.err(s.file.Position(s.file.Pos(offs)), msg)
	}
}

func (s *Scanner) errorf(offs int, format string, args ...any) {
	s.error(offs, fmt.Sprintf(format, args...))
}

func (s *Scanner) peek(k int) byte {
	if s.offs+k < len(s.src) {
		return s.src[s.offs+k]
	}
	return 0
}

func (s *Scanner) eof() bool { return s.offs >= len(s.src) }

func (s *Scanner) push(pos, end int, tok token.Token) {
	s.queue = append(s.queue, Item{token.Pos(pos + 1), token.Pos(end + 1), tok, 0})
}

// pushNorm queues a name whose literal differs from its source text.
func (s *Scanner) pushNorm(pos, end int, tok token.Token, lit string) {
	s.norms = append(s.norms, lit)
	s.queue = append(s.queue, Item{token.Pos(pos + 1), token.Pos(end + 1), tok, len(s.norms)})
}

// TokenEnd returns the position just after the last token returned by Scan.
func (s *Scanner) TokenEnd() token.Pos { return s.lastEnd }

// Scan returns the next token: its position, kind and literal text. The
// literal is the normalized identifier for NAME, the raw source text for
// keywords, NUMBER, STRING, FSTRING_START, FSTRING_MIDDLE, FSTRING_END and
// ILLEGAL, and empty otherwise. After the end of the source Scan returns
// EOF forever.
func (s *Scanner) Scan() (token.Pos, token.Token, string) {
	t := s.Next()
	return t.Pos, t.Tok, s.Lit(t)
}

// Item is a scanned token in a form without pointers (cheap to store in
// bulk); Scanner.Lit gives its literal.
type Item struct {
	Pos, End token.Pos
	Tok      token.Token
	norm     int // index+1 in Scanner.norms of a normalized name, or 0
}

// Next returns the next token as an Item.
func (s *Scanner) Next() Item {
	for s.qhead >= len(s.queue) {
		s.queue = s.queue[:0]
		s.qhead = 0
		s.next()
	}
	t := s.queue[s.qhead]
	s.qhead++
	s.lastTok, s.lastEnd = t.Tok, t.End
	return t
}

// AppendNext appends the next tokens to dst and returns the extended
// slice: at least one, and every token the scanner found in the same
// step (a line's DEDENT tokens and the token after them, say), which
// spares a caller that stores tokens in bulk a call and a copy per token.
// Calls to Next and AppendNext may be mixed; the order of the tokens is
// the same.
func (s *Scanner) AppendNext(dst []Item) []Item {
	if s.qhead < len(s.queue) {
		dst = append(dst, s.queue[s.qhead:]...)
	} else {
		// Scan straight into dst, then take the queue's buffer back.
		own := s.queue[:0]
		s.queue = dst
		s.next()
		dst = s.queue
		s.queue = own
	}
	s.queue = s.queue[:0]
	s.qhead = 0
	last := dst[len(dst)-1]
	s.lastTok, s.lastEnd = last.Tok, last.End
	return dst
}

// Lit returns the literal of an Item (see Scan).
func (s *Scanner) Lit(t Item) string {
	switch {
	case t.norm > 0:
		return s.norms[t.norm-1]
	case t.Tok.IsLiteral() || t.Tok.IsKeyword() || t.Tok == token.ILLEGAL:
		return s.text[t.Pos-1 : t.End-1]
	}
	return ""
}

func (s *Scanner) inBrackets() bool { return len(s.brackets) > 0 || len(s.modes) > 0 }

// next appends at least one token to the queue.
func (s *Scanner) next() {
	mark := len(s.queue)
	if s.done {
		s.push(len(s.src), len(s.src), token.EOF)
		return
	}
	if n := len(s.modes); n > 0 {
		m := &s.modes[n-1]
		if !m.field || m.inSpec {
			s.scanFStringText()
			return
		}
	}
	for {
		if s.atBOL && !s.inBrackets() {
			s.atBOL = false
			if s.indentation() {
				continue // blank line consumed
			}
			if len(s.queue) > mark {
				return
			}
		}
		// skip white space
		src, i := s.src, s.offs
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\f') {
			i++
		}
		s.offs = i
		if i >= len(src) {
			s.atEOF()
			return
		}
		start := i
		c := src[i]
		switch byteClass[c] {
		case classIdent:
			s.scanIdentOrString()
			return
		case classComment:
			s.skipComment()
			continue
		case classNewline:
			s.skipNewline()
			if s.inBrackets() {
				continue
			}
			s.atBOL = true
			s.push(start, s.offs, token.NEWLINE)
			return
		case classBackslash:
			s.offs++
			if s.eof() {
				s.error(s.offs, "unexpected EOF while parsing")
				continue
			}
			if c2 := s.src[s.offs]; c2 == '\n' || c2 == '\r' {
				s.skipNewline()
				if s.eof() {
					s.error(s.offs, "unexpected EOF while parsing")
				}
				continue
			}
			s.error(s.offs, "unexpected character after line continuation character")
			continue
		case classDigit:
			s.scanNumber()
			return
		case classDot:
			if isDigit(s.peek(1)) {
				s.scanNumber()
				return
			}
		case classQuote:
			s.scanString(start, start, false, false, false)
			return
		}
		if s.scanOperator() {
			return
		}
		// Any other byte: an ERRORTOKEN for CPython, which the parser turns
		// into "invalid syntax".
		s.offs++
		s.push(start, s.offs, token.ILLEGAL)
		return
	}
}

// indentation reads the indentation at the beginning of a line. It returns
// true when the line was blank (only white space and/or a comment) and has
// been consumed entirely.
func (s *Scanner) indentation() bool {
	col, alt := 0, 0
again:
	lineStart := s.offs
	// in locals: the loop then keeps them in registers
	src, i := s.src, s.offs
	for ; i < len(src); i++ {
		c := src[i]
		if c == ' ' {
			col++
			alt++
		} else if c == '\t' {
			col = (col/8 + 1) * 8
			alt++
		} else if c == '\f' {
			col, alt = 0, 0
		} else {
			break
		}
	}
	s.offs = i
	if s.eof() {
		return false
	}
	c := s.src[s.offs]
	if c == '\\' {
		// A line continuation right after the indentation: when the joined
		// line is blank, the whole line is blank; otherwise the indentation
		// is the one before the backslash.
		j := s.offs + 1
		if j < len(s.src) && (s.src[j] == '\n' || s.src[j] == '\r') {
			if s.src[j] == '\r' && j+1 < len(s.src) && s.src[j+1] == '\n' {
				j++
			}
			j++
			for {
				for j < len(s.src) && (s.src[j] == ' ' || s.src[j] == '\t' || s.src[j] == '\f') {
					j++
				}
				// further continuation lines
				if j+1 < len(s.src) && s.src[j] == '\\' && (s.src[j+1] == '\n' || s.src[j+1] == '\r') {
					j++
					if s.src[j] == '\r' && j+1 < len(s.src) && s.src[j+1] == '\n' {
						j++
					}
					j++
					continue
				}
				break
			}
			if j == len(s.src) && s.src[j-1] != '\n' && s.src[j-1] != '\r' {
				// white space after the continuation, then the end: blank
				s.offs = j
				return false
			}
			if j < len(s.src) && (s.src[j] == '\n' || s.src[j] == '\r' || s.src[j] == '#') {
				s.offs = j
				c = s.src[j]
			} else if s.offs == lineStart {
				// A backslash in column 0: CPython takes the indentation
				// of the continued line.
				s.skipNewlineAt(s.offs + 1)
				if s.eof() {
					s.error(s.offs, "unexpected EOF while parsing")
				}
				goto again
			}
		}
	}
	if c == '#' || c == '\n' || c == '\r' {
		if c == '#' {
			s.skipComment()
		}
		if !s.eof() {
			s.skipNewline()
		}
		s.atBOL = true
		return true
	}
	top := len(s.indents) - 1
	switch {
	case col == s.indents[top]:
		if alt != s.altIndents[top] {
			s.error(s.offs, "inconsistent use of tabs and spaces in indentation")
		}
	case col > s.indents[top]:
		if alt <= s.altIndents[top] {
			s.error(s.offs, "inconsistent use of tabs and spaces in indentation")
		}
		s.indents = append(s.indents, col)
		s.altIndents = append(s.altIndents, alt)
		s.push(s.offs, s.offs, token.INDENT)
	default:
		for top > 0 && col < s.indents[top] {
			top--
			s.push(s.offs, s.offs, token.DEDENT)
		}
		s.indents = s.indents[:top+1]
		s.altIndents = s.altIndents[:top+1]
		if col != s.indents[top] {
			s.error(s.offs, "unindent does not match any outer indentation level")
		} else if alt != s.altIndents[top] {
			s.error(s.offs, "inconsistent use of tabs and spaces in indentation")
		}
	}
	return false
}

// skipNewlineAt moves just past the line break at offset i.
func (s *Scanner) skipNewlineAt(i int) {
	s.offs = i
	s.skipNewline()
}

func (s *Scanner) skipComment() {
	rest := s.src[s.offs:]
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		i = len(rest)
	}
	if j := bytes.IndexByte(rest[:i], '\r'); j >= 0 {
		i = j
	}
	s.offs += i
}

func (s *Scanner) skipNewline() {
	if s.src[s.offs] == '\r' && s.peek(1) == '\n' {
		s.offs++
	}
	s.offs++
}

func (s *Scanner) atEOF() {
	end := len(s.src)
	for i := len(s.modes) - 1; i >= 0; i-- {
		if !s.modes[i].field {
			if s.modes[i].triple {
				s.error(s.modes[i].start, "unterminated triple-quoted f-string literal")
			} else {
				s.error(s.modes[i].start, "unterminated f-string literal")
			}
		}
	}
	s.modes = nil
	if len(s.brackets) > 0 {
		b := s.brackets[len(s.brackets)-1]
		s.errorf(b.offs, "'%c' was never closed", b.ch)
		s.brackets = nil
	}
	if s.lastTok != token.NEWLINE && s.lastTok != token.INDENT && s.lastTok != token.DEDENT {
		s.push(end, end, token.NEWLINE)
	}
	for len(s.indents) > 1 {
		s.indents = s.indents[:len(s.indents)-1]
		s.push(end, end, token.DEDENT)
	}
	s.push(end, end, token.EOF)
	s.done = true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isIdentStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

// The classes of the first byte of a token, for next's dispatch.
const (
	classOther = iota // operators, and bytes that start no token
	classIdent
	classDigit
	classDot
	classQuote
	classComment
	classNewline
	classBackslash
)

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch b := byte(c); {
		case isIdentStart(b):
			t[c] = classIdent
		case isDigit(b):
			t[c] = classDigit
		case b == '.':
			t[c] = classDot
		case b == '"' || b == '\'':
			t[c] = classQuote
		case b == '#':
			t[c] = classComment
		case b == '\n' || b == '\r':
			t[c] = classNewline
		case b == '\\':
			t[c] = classBackslash
		}
	}
	return
}()

// identClass is 1 for the ASCII bytes of identifiers, 2 for the bytes of
// non-ASCII characters (checked one by one later) and 0 for the others.
var identClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 0x80:
			t[c] = 2
		case isIdentChar(byte(c)):
			t[c] = 1
		}
	}
	return
}()

// stringPrefix marks the letters of string prefixes (b, r, u, f).
var stringPrefix = func() (t [256]bool) {
	for _, c := range "bBrRuUfF" {
		t[c] = true
	}
	return
}()

func (s *Scanner) scanIdentOrString() {
	start := s.offs
	if !stringPrefix[s.src[start]] {
		goto ident
	}
	// String prefixes, as tokenizer.c checks them.
	for sawB, sawR, sawU, sawF := false, false, false, false; !s.eof(); {
		c := s.src[s.offs]
		switch {
		case !(sawB || sawU || sawF) && (c == 'b' || c == 'B'):
			sawB = true
		case !(sawB || sawU || sawR || sawF) && (c == 'u' || c == 'U'):
			sawU = true
		case !(sawR || sawU) && (c == 'r' || c == 'R'):
			sawR = true
		case !(sawF || sawB || sawU) && (c == 'f' || c == 'F'):
			sawF = true
		default:
			goto ident
		}
		s.offs++
		if q := s.peek(0); q == '"' || q == '\'' {
			s.scanString(start, s.offs, sawB, sawR, sawF)
			return
		}
	}
ident:
	var class uint8
	src, i := s.src, s.offs
	for i < len(src) {
		k := identClass[src[i]]
		if k == 0 {
			break
		}
		class |= k
		i++
	}
	s.offs = i
	if class < 2 { // ASCII
		s.push(start, i, token.Lookup(s.text[start:i]))
		return
	}
	s.scanNonASCIIIdent(start)
}

// scanNonASCIIIdent queues the identifier (or the ILLEGAL token) of the
// bytes from start to s.offs, which hold a non-ASCII character. It is a
// function of its own so that the common ASCII path keeps a small frame.
func (s *Scanner) scanNonASCIIIdent(start int) {
	raw := s.src[start:s.offs]
	// Every rune must be an identifier character of the raw text; the
	// name itself is the NFKC normalization (PEP 3131).
	first := true
	for i := 0; i < len(raw); {
		r, n := utf8.DecodeRune(raw[i:])
		ok := false
		if first {
			ok = r == '_' || IsXIDStart(r)
		} else {
			ok = IsXIDContinue(r)
		}
		if !ok {
			if unicode.IsPrint(r) && r != utf8.RuneError {
				s.errorf(start+i, "invalid character '%c' (U+%04X)", r, r)
			} else {
				s.errorf(start+i, "invalid non-printable character U+%04X", r)
			}
			s.push(start, s.offs, token.ILLEGAL)
			return
		}
		first = false
		i += n
	}
	lit := norm.NFKC.String(s.text[start:s.offs])
	s.pushNorm(start, s.offs, token.Lookup(s.text[start:s.offs]), lit)
}

// IsXIDStart reports whether r has the Unicode property XID_Start.
func IsXIDStart(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	if xidExcluded(r) || unicode.Is(unicode.Pattern_Syntax, r) || unicode.Is(unicode.Pattern_White_Space, r) {
		return false
	}
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_ID_Start, r)
}

// IsXIDContinue reports whether r has the Unicode property XID_Continue.
func IsXIDContinue(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	if r == 0x0E33 || r == 0x0EB3 || r == 0xFF9E || r == 0xFF9F {
		return true // excluded from XID_Start only
	}
	if xidExcluded(r) || unicode.Is(unicode.Pattern_Syntax, r) || unicode.Is(unicode.Pattern_White_Space, r) {
		return false
	}
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_ID_Start, r) ||
		unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Nd, r) ||
		unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Other_ID_Continue, r)
}

// xidExcluded lists the characters of ID_Start/ID_Continue that are not in
// XID_Start because their NFKC form is not an identifier start.
func xidExcluded(r rune) bool {
	switch {
	case r == 0x037A, r == 0x0E33, r == 0x0EB3, r == 0x309B, r == 0x309C,
		r >= 0xFC5E && r <= 0xFC63, r == 0xFDFA, r == 0xFDFB,
		r == 0xFF9E, r == 0xFF9F:
		return true
	case r >= 0xFE70 && r <= 0xFE7E && r%2 == 0:
		return true
	}
	return false
}

// scanString scans a string literal whose prefix starts at start and whose
// opening quote is at q.
func (s *Scanner) scanString(start, q int, isBytes, raw, isF bool) {
	quote := s.src[q]
	triple := q+2 < len(s.src) && s.src[q+1] == quote && s.src[q+2] == quote
	if isF {
		n := 1
		if triple {
			n = 3
		}
		s.offs = q + n
		s.modes = append(s.modes, mode{quote: quote, triple: triple, raw: raw, start: start})
		s.push(start, s.offs, token.FSTRING_START)
		return
	}
	plain := &plainInString[0]
	if quote == '"' {
		plain = &plainInString[1]
	}
	if triple {
		s.offs = q + 3
		for {
			i := s.offs
			for i < len(s.src) && plain[s.src[i]] {
				i++
			}
			s.offs = i
			if s.eof() {
				s.error(start, "unterminated triple-quoted string literal (detected at line "+itoa(s.file.Line(s.file.Pos(len(s.src))))+")")
				break
			}
			c := s.src[s.offs]
			if c == quote && s.peek(1) == quote && s.peek(2) == quote {
				s.offs += 3
				break
			}
			if c == '\\' {
				s.offs++
				if !s.eof() && s.src[s.offs] == '\r' && s.peek(1) == '\n' {
					s.offs++
				}
			}
			s.offs++
		}
	} else {
		s.offs = q + 1
		for {
			i := s.offs
			for i < len(s.src) && plain[s.src[i]] {
				i++
			}
			s.offs = i
			if s.eof() || s.src[s.offs] == '\n' || s.src[s.offs] == '\r' {
				s.error(start, "unterminated string literal (detected at line "+itoa(s.file.Line(s.file.Pos(s.offs)))+")")
				break
			}
			c := s.src[s.offs]
			if c == quote {
				s.offs++
				break
			}
			if c == '\\' {
				s.offs++
				if !s.eof() && s.src[s.offs] == '\r' && s.peek(1) == '\n' {
					s.offs++
				}
			}
			if !s.eof() {
				s.offs++
			}
		}
	}
	if s.offs > len(s.src) {
		s.offs = len(s.src)
	}
	s.push(start, s.offs, token.STRING)
}

// plainInString marks the bytes that need no attention in a string
// literal quoted with ' (index 0) or " (index 1): not the quote, a
// backslash or a line break.
var plainInString = func() (t [2][256]bool) {
	for c := 0; c < 256; c++ {
		for i, q := range []int{'\'', '"'} {
			t[i][c] = c != q && c != '\\' && c != '\n' && c != '\r'
		}
	}
	return
}()

func itoa(n int) string { return fmt.Sprint(n) }

// fstr returns the innermost f-string literal mode.
func (s *Scanner) fstr() *mode {
	for i := len(s.modes) - 1; i >= 0; i-- {
		if !s.modes[i].field {
			return &s.modes[i]
		}
	}
	return nil
}

// fieldDepth counts the replacement fields open in the innermost f-string.
func (s *Scanner) fieldDepth() int {
	n := 0
	for i := len(s.modes) - 1; i >= 0 && s.modes[i].field; i-- {
		n++
	}
	return n
}

// scanFStringText reads literal text of an f-string, or of a format spec,
// up to the next replacement field, the end of the spec or the closing
// quote.
func (s *Scanner) scanFStringText() {
	top := &s.modes[len(s.modes)-1]
	inSpec := top.field
	fs := s.fstr()
	start := s.offs
	flush := func() {
		if s.offs > start {
			s.push(start, s.offs, token.FSTRING_MIDDLE)
		}
	}
	for {
		if s.eof() {
			flush()
			s.atEOF()
			return
		}
		c := s.src[s.offs]
		if c == fs.quote && (!fs.triple || (s.peek(1) == c && s.peek(2) == c)) {
			flush()
			if inSpec {
				s.error(s.offs, "f-string: expecting '}'")
				// close the open fields
				for len(s.modes) > 0 && s.modes[len(s.modes)-1].field {
					s.modes = s.modes[:len(s.modes)-1]
				}
			}
			n := 1
			if fs.triple {
				n = 3
			}
			p := s.offs
			s.offs += n
			s.modes = s.modes[:len(s.modes)-1]
			s.push(p, s.offs, token.FSTRING_END)
			return
		}
		switch c {
		case '\n', '\r':
			if !fs.triple {
				flush()
				if inSpec {
					// CPython ends the spec here and reads the rest of the
					// field as an expression, where the newline is blank.
					top.inSpec = false
					return
				}
				{
					s.error(fs.start, "unterminated f-string literal (detected at line "+itoa(s.file.Line(s.file.Pos(s.offs)))+")")
				}
				// Drop the f-string: resume normal scanning at the newline.
				for len(s.modes) > 0 {
					last := s.modes[len(s.modes)-1]
					s.modes = s.modes[:len(s.modes)-1]
					if !last.field && last.start == fs.start {
						break
					}
				}
				s.push(s.offs, s.offs, token.FSTRING_END)
				return
			}
		case '{':
			if s.peek(1) == '{' && !inSpec {
				s.offs += 2
				continue
			}
			flush()
			if inSpec && s.fieldDepth() >= 3 {
				s.error(s.offs, "f-string: expressions nested too deeply")
			}
			s.push(s.offs, s.offs+1, token.LBRACE)
			s.offs++
			s.modes = append(s.modes, mode{field: true, parenBase: len(s.brackets)})
			return
		case '}':
			if inSpec {
				flush()
				s.push(s.offs, s.offs+1, token.RBRACE)
				s.offs++
				s.modes = s.modes[:len(s.modes)-1]
				return
			}
			if s.peek(1) == '}' {
				s.offs += 2
				continue
			}
			s.error(s.offs, "f-string: single '}' is not allowed")
		case '\\':
			if !fs.raw {
				n := s.peek(1)
				if n == 'N' && s.peek(2) == '{' {
					s.offs += 3
					for !s.eof() && s.src[s.offs] != '}' && s.src[s.offs] != fs.quote && s.src[s.offs] != '\n' {
						s.offs++
					}
					if !s.eof() && s.src[s.offs] == '}' {
						s.offs++
					}
					continue
				}
				if n == '{' || n == '}' {
					s.offs++
					continue
				}
				s.offs++
				if s.eof() {
					continue
				}
				if s.src[s.offs] == '\r' && s.peek(1) == '\n' {
					s.offs++
				}
			} else if n := s.peek(1); n == fs.quote || n == '\\' {
				// in a raw string a backslash still escapes the quote
				s.offs++
			}
		}
		s.offs++
	}
}

// op3 and op2 recognize the three- and two-character operators.
func op3(a, b, c byte) token.Token {
	switch {
	case a == '*' && b == '*' && c == '=':
		return token.DOUBLESTAREQUAL
	case a == '.' && b == '.' && c == '.':
		return token.ELLIPSIS
	case a == '/' && b == '/' && c == '=':
		return token.DOUBLESLASHEQUAL
	case a == '<' && b == '<' && c == '=':
		return token.LEFTSHIFTEQUAL
	case a == '>' && b == '>' && c == '=':
		return token.RIGHTSHIFTEQUAL
	}
	return token.ILLEGAL
}

func op2(a, b byte) token.Token {
	if b == '=' {
		switch a {
		case '!':
			return token.NOTEQUAL
		case '%':
			return token.PERCENTEQUAL
		case '&':
			return token.AMPEREQUAL
		case '*':
			return token.STAREQUAL
		case '+':
			return token.PLUSEQUAL
		case '-':
			return token.MINEQUAL
		case '/':
			return token.SLASHEQUAL
		case ':':
			return token.COLONEQUAL
		case '<':
			return token.LESSEQUAL
		case '=':
			return token.EQEQUAL
		case '>':
			return token.GREATEREQUAL
		case '@':
			return token.ATEQUAL
		case '^':
			return token.CIRCUMFLEXEQUAL
		case '|':
			return token.VBAREQUAL
		}
		return token.ILLEGAL
	}
	switch {
	case a == '*' && b == '*':
		return token.DOUBLESTAR
	case a == '-' && b == '>':
		return token.RARROW
	case a == '/' && b == '/':
		return token.DOUBLESLASH
	case a == '<' && b == '<':
		return token.LEFTSHIFT
	case a == '>' && b == '>':
		return token.RIGHTSHIFT
	}
	return token.ILLEGAL
}

var ops1 = [128]token.Token{
	'(': token.LPAR, ')': token.RPAR, '[': token.LSQB, ']': token.RSQB, '{': token.LBRACE, '}': token.RBRACE,
	':': token.COLON, ',': token.COMMA, ';': token.SEMI, '+': token.PLUS, '-': token.MINUS, '*': token.STAR,
	'/': token.SLASH, '|': token.VBAR, '&': token.AMPER, '<': token.LESS, '>': token.GREATER, '=': token.EQUAL,
	'.': token.DOT, '%': token.PERCENT, '~': token.TILDE, '^': token.CIRCUMFLEX, '@': token.AT, '!': token.EXCLAMATION,
}

// opPrefix marks the first characters of the two- and three-character
// operators.
var opPrefix = func() (t [128]bool) {
	for _, c := range "!%&*+-/:<=>@^|." {
		t[c] = true
	}
	return
}()

func (s *Scanner) scanOperator() bool {
	start := s.offs
	c := s.src[start]
	// Inside a replacement field, at its own bracket level, ':' starts the
	// format spec, '}' closes the field and '!' introduces the conversion.
	if n := len(s.modes); n > 0 && s.modes[n-1].field && len(s.brackets) == s.modes[n-1].parenBase {
		m := &s.modes[n-1]
		switch {
		case c == ':' && s.peek(1) != '=':
			m.inSpec = true
			s.offs++
			s.push(start, s.offs, token.COLON)
			return true
		case c == ':' && s.peek(1) == '=':
			// f"{x:=5}": the spec is "=5"
			m.inSpec = true
			s.offs++
			s.push(start, s.offs, token.COLON)
			return true
		case c == '}':
			s.offs++
			s.modes = s.modes[:n-1]
			s.push(start, s.offs, token.RBRACE)
			return true
		case c == '!' && s.peek(1) != '=':
			s.offs++
			s.push(start, s.offs, token.EXCLAMATION)
			return true
		}
	}
	if c < 128 && ops1[c] != 0 && !opPrefix[c] {
		// a delimiter that starts no longer operator: ( ) [ ] { } , ; ~
		goto single
	}
	if start+3 <= len(s.src) {
		if tok := op3(s.src[start], s.src[start+1], s.src[start+2]); tok != token.ILLEGAL {
			s.offs += 3
			s.push(start, s.offs, tok)
			return true
		}
	}
	if start+2 <= len(s.src) {
		if tok := op2(s.src[start], s.src[start+1]); tok != token.ILLEGAL {
			s.offs += 2
			s.push(start, s.offs, tok)
			return true
		}
	}
	if c >= 128 || ops1[c] == 0 {
		return false
	}
single:
	tok := ops1[c]
	s.offs++
	switch c {
	case '(', '[', '{':
		s.brackets = append(s.brackets, bracket{c, start})
	case ')', ']', '}':
		var base int
		if n := len(s.modes); n > 0 {
			base = s.modes[n-1].parenBase
		}
		if len(s.brackets) <= base {
			s.errorf(start, "unmatched '%c'", c)
		} else {
			open := s.brackets[len(s.brackets)-1]
			s.brackets = s.brackets[:len(s.brackets)-1]
			if !(open.ch == '(' && c == ')' || open.ch == '[' && c == ']' || open.ch == '{' && c == '}') {
				s.errorf(start, "closing parenthesis '%c' does not match opening parenthesis '%c'", c, open.ch)
			}
		}
	}
	s.push(start, s.offs, tok)
	return true
}

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// scanNumber follows tokenizer.c: every error it reports there is
// reported here.
func (s *Scanner) scanNumber() {
	start := s.offs
	bad := false
	fail := func(offs int, msg string) {
		if !bad {
			s.error(offs, msg)
		}
		bad = true
	}
	// digits reads [0-9](_?[0-9])* and reports a misplaced underscore.
	digits := func(ok func(byte) bool, kind string) bool {
		if s.eof() || !ok(s.src[s.offs]) {
			return false
		}
		for !s.eof() {
			c := s.src[s.offs]
			if ok(c) {
				s.offs++
				continue
			}
			if c == '_' {
				s.offs++
				if s.eof() || !ok(s.src[s.offs]) {
					fail(s.offs-1, "invalid "+kind+" literal")
					return true
				}
				continue
			}
			break
		}
		return true
	}
	kind := "decimal"
	isFloat := false
	c := s.src[s.offs]
	if c == '0' && (s.peek(1)|0x20 == 'x' || s.peek(1)|0x20 == 'o' || s.peek(1)|0x20 == 'b') {
		s.offs += 2
		var ok func(byte) bool
		switch s.src[s.offs-1] | 0x20 {
		case 'x':
			kind, ok = "hexadecimal", isHex
		case 'o':
			kind, ok = "octal", func(c byte) bool { return '0' <= c && c <= '7' }
		default:
			kind, ok = "binary", func(c byte) bool { return c == '0' || c == '1' }
		}
		if s.peek(0) == '_' {
			s.offs++
		}
		if !digits(ok, kind) {
			if isDigit(s.peek(0)) {
				fail(s.offs, fmt.Sprintf("invalid digit '%c' in %s literal", s.peek(0), kind))
			} else {
				fail(s.offs, "invalid "+kind+" literal")
			}
		}
		if isDigit(s.peek(0)) {
			fail(s.offs, fmt.Sprintf("invalid digit '%c' in %s literal", s.peek(0), kind))
		}
		s.endOfNumber(kind, fail)
		s.finishNumber(start)
		return
	}
	if c != '.' {
		if c == '0' {
			// 0+(_?0)* is allowed; other leading zeros are not, unless the
			// literal turns out to be a float or imaginary.
			digits(isDigit, kind)
			lit := s.src[start:s.offs]
			nonzero := bytes.ContainsAny(lit, "123456789")
			if nonzero && !(s.peek(0) == '.' || s.peek(0)|0x20 == 'e' || s.peek(0)|0x20 == 'j') {
				fail(start, "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers")
			}
		} else {
			digits(isDigit, kind)
		}
		if s.peek(0) == '.' {
			s.offs++
			isFloat = true
			digits(isDigit, kind)
		}
	} else {
		s.offs++
		isFloat = true
		digits(isDigit, kind)
	}
	_ = isFloat
	if s.peek(0)|0x20 == 'e' {
		save := s.offs
		s.offs++
		if s.peek(0) == '+' || s.peek(0) == '-' {
			s.offs++
		}
		if !isDigit(s.peek(0)) {
			// "1e" followed by something else: CPython backs up and
			// verifies the end of the number at the 'e' ("1else").
			if s.offs == save+1 {
				s.offs = save
				s.endOfNumber(kind, fail)
				s.finishNumber(start)
				return
			}
			fail(start, "invalid decimal literal")
		} else {
			digits(isDigit, kind)
		}
	}
	if s.peek(0)|0x20 == 'j' {
		s.offs++
		kind = "imaginary"
	}
	s.endOfNumber(kind, fail)
	s.finishNumber(start)
}

// endOfNumber is verify_end_of_number: a number directly followed by an
// identifier character is an error, except before the keywords that may
// legally follow a number (a warning in CPython).
func (s *Scanner) endOfNumber(kind string, fail func(int, string)) {
	c := s.peek(0)
	rest := s.src[s.offs:]
	ok := false
	switch c {
	case 'a':
		ok = bytes.HasPrefix(rest, []byte("and"))
	case 'e':
		ok = bytes.HasPrefix(rest, []byte("else"))
	case 'f':
		ok = bytes.HasPrefix(rest, []byte("for"))
	case 'i':
		ok = len(rest) > 1 && (rest[1] == 'f' || rest[1] == 'n' || rest[1] == 's')
	case 'o':
		ok = bytes.HasPrefix(rest, []byte("or"))
	case 'n':
		ok = bytes.HasPrefix(rest, []byte("not"))
	}
	if ok {
		return
	}
	if c < 128 && isIdentChar(c) {
		fail(s.offs, "invalid "+kind+" literal")
	}
}

func (s *Scanner) finishNumber(start int) {
	s.push(start, s.offs, token.NUMBER)
}
