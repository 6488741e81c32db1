// Package token defines the lexical tokens of Python 3.12 source and the
// positions used by the pysrc scanner, parser and AST.
//
// Positions are compact byte offsets (Pos) into one source file; a File turns
// them into line and column numbers only when they are printed:
//
//	f := token.NewFile("tool.py", src)
//	// ... after scanning, f knows every line start ...
//	fmt.Println(f.Position(pos)) // tool.py:3:5
package token

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"sync"
)

// Token is the kind of a lexical token of Python source.
type Token int

// The list of tokens. Operators and keywords are grouped between unexported
// range markers so that IsOperator and IsKeyword are range checks.
const (
	ILLEGAL Token = iota
	EOF
	NEWLINE
	INDENT
	DEDENT

	literalBeg
	NAME          // tool_x
	NUMBER        // 12, 0x1F, 1.5e3, 2j
	STRING        // 'abc', b"x", r'''y''' (a complete non-f string)
	FSTRING_START // f" or rf'''
	FSTRING_MIDDLE
	FSTRING_END
	literalEnd

	operatorBeg
	LPAR     // (
	RPAR     // )
	LSQB     // [
	RSQB     // ]
	LBRACE   // {
	RBRACE   // }
	COLON    // :
	COMMA    // ,
	SEMI     // ;
	PLUS     // +
	MINUS    // -
	STAR     // *
	SLASH    // /
	VBAR     // |
	AMPER    // &
	LESS     // <
	GREATER  // >
	EQUAL    // =
	DOT      // .
	PERCENT  // %
	EQEQUAL  // ==
	NOTEQUAL // !=
	LESSEQUAL
	GREATEREQUAL
	TILDE            // ~
	CIRCUMFLEX       // ^
	LEFTSHIFT        // <<
	RIGHTSHIFT       // >>
	DOUBLESTAR       // **
	PLUSEQUAL        // +=
	MINEQUAL         // -=
	STAREQUAL        // *=
	SLASHEQUAL       // /=
	PERCENTEQUAL     // %=
	AMPEREQUAL       // &=
	VBAREQUAL        // |=
	CIRCUMFLEXEQUAL  // ^=
	LEFTSHIFTEQUAL   // <<=
	RIGHTSHIFTEQUAL  // >>=
	DOUBLESTAREQUAL  // **=
	DOUBLESLASH      // //
	DOUBLESLASHEQUAL // //=
	AT               // @
	ATEQUAL          // @=
	RARROW           // ->
	ELLIPSIS         // ...
	COLONEQUAL       // :=
	EXCLAMATION      // ! (only inside f-string replacement fields)
	operatorEnd

	keywordBeg
	FALSE
	NONE
	TRUE
	AND
	AS
	ASSERT
	ASYNC
	AWAIT
	BREAK
	CLASS
	CONTINUE
	DEF
	DEL
	ELIF
	ELSE
	EXCEPT
	FINALLY
	FOR
	FROM
	GLOBAL
	IF
	IMPORT
	IN
	IS
	LAMBDA
	NONLOCAL
	NOT
	OR
	PASS
	RAISE
	RETURN
	TRY
	WHILE
	WITH
	YIELD
	keywordEnd
)

var tokens = [...]string{
	ILLEGAL:        "ILLEGAL",
	EOF:            "EOF",
	NEWLINE:        "NEWLINE",
	INDENT:         "INDENT",
	DEDENT:         "DEDENT",
	NAME:           "NAME",
	NUMBER:         "NUMBER",
	STRING:         "STRING",
	FSTRING_START:  "FSTRING_START",
	FSTRING_MIDDLE: "FSTRING_MIDDLE",
	FSTRING_END:    "FSTRING_END",

	LPAR:             "(",
	RPAR:             ")",
	LSQB:             "[",
	RSQB:             "]",
	LBRACE:           "{",
	RBRACE:           "}",
	COLON:            ":",
	COMMA:            ",",
	SEMI:             ";",
	PLUS:             "+",
	MINUS:            "-",
	STAR:             "*",
	SLASH:            "/",
	VBAR:             "|",
	AMPER:            "&",
	LESS:             "<",
	GREATER:          ">",
	EQUAL:            "=",
	DOT:              ".",
	PERCENT:          "%",
	EQEQUAL:          "==",
	NOTEQUAL:         "!=",
	LESSEQUAL:        "<=",
	GREATEREQUAL:     ">=",
	TILDE:            "~",
	CIRCUMFLEX:       "^",
	LEFTSHIFT:        "<<",
	RIGHTSHIFT:       ">>",
	DOUBLESTAR:       "**",
	PLUSEQUAL:        "+=",
	MINEQUAL:         "-=",
	STAREQUAL:        "*=",
	SLASHEQUAL:       "/=",
	PERCENTEQUAL:     "%=",
	AMPEREQUAL:       "&=",
	VBAREQUAL:        "|=",
	CIRCUMFLEXEQUAL:  "^=",
	LEFTSHIFTEQUAL:   "<<=",
	RIGHTSHIFTEQUAL:  ">>=",
	DOUBLESTAREQUAL:  "**=",
	DOUBLESLASH:      "//",
	DOUBLESLASHEQUAL: "//=",
	AT:               "@",
	ATEQUAL:          "@=",
	RARROW:           "->",
	ELLIPSIS:         "...",
	COLONEQUAL:       ":=",
	EXCLAMATION:      "!",

	FALSE:    "False",
	NONE:     "None",
	TRUE:     "True",
	AND:      "and",
	AS:       "as",
	ASSERT:   "assert",
	ASYNC:    "async",
	AWAIT:    "await",
	BREAK:    "break",
	CLASS:    "class",
	CONTINUE: "continue",
	DEF:      "def",
	DEL:      "del",
	ELIF:     "elif",
	ELSE:     "else",
	EXCEPT:   "except",
	FINALLY:  "finally",
	FOR:      "for",
	FROM:     "from",
	GLOBAL:   "global",
	IF:       "if",
	IMPORT:   "import",
	IN:       "in",
	IS:       "is",
	LAMBDA:   "lambda",
	NONLOCAL: "nonlocal",
	NOT:      "not",
	OR:       "or",
	PASS:     "pass",
	RAISE:    "raise",
	RETURN:   "return",
	TRY:      "try",
	WHILE:    "while",
	WITH:     "with",
	YIELD:    "yield",
}

// String returns the source text of operators and keywords and the
// upper-case name of the other tokens.
func (tok Token) String() string {
	if 0 <= tok && int(tok) < len(tokens) && tokens[tok] != "" {
		return tokens[tok]
	}
	return "token(" + strconv.Itoa(int(tok)) + ")"
}

// IsLiteral reports whether tok is a name, number or string token.
func (tok Token) IsLiteral() bool { return literalBeg < tok && tok < literalEnd }

// IsOperator reports whether tok is an operator or delimiter.
func (tok Token) IsOperator() bool { return operatorBeg < tok && tok < operatorEnd }

// IsKeyword reports whether tok is a hard keyword of Python 3.12. The soft
// keywords match, case, type and _ are scanned as NAME.
func (tok Token) IsKeyword() bool { return keywordBeg < tok && tok < keywordEnd }

var keywords map[string]Token

func init() {
	keywords = make(map[string]Token, keywordEnd-keywordBeg)
	for i := keywordBeg + 1; i < keywordEnd; i++ {
		keywords[tokens[i]] = i
	}
}

// keywordSlots holds every hard keyword at the slot keywordSlot gives
// it; the slots are all different (init checks it), so one comparison
// tells a keyword from the many identifiers that are not.
var keywordSlots [128]struct {
	text string
	tok  Token
}

func keywordSlot(s string) int { return (int(s[0]) + 11*int(s[len(s)-1]) + len(s)) & 127 }

func init() {
	for tok := keywordBeg + 1; tok < keywordEnd; tok++ {
		e := &keywordSlots[keywordSlot(tokens[tok])]
		if e.text != "" {
			panic("token: keywords " + e.text + " and " + tokens[tok] + " share a slot")
		}
		e.text, e.tok = tokens[tok], tok
	}
}

// Lookup maps an identifier to its keyword token, or NAME.
func Lookup(ident string) Token {
	if len(ident) < 2 || len(ident) > 8 {
		return NAME // no keyword is this short or long
	}
	if e := &keywordSlots[keywordSlot(ident)]; e.text == ident {
		return e.tok
	}
	return NAME
}

// IsKeyword reports whether name is a hard keyword.
func IsKeyword(name string) bool {
	_, ok := keywords[name]
	return ok
}

// Pos is a byte offset into a File plus one; the zero value NoPos means
// "no position".
type Pos int

// NoPos is the zero Pos.
const NoPos Pos = 0

// IsValid reports whether p is a real position.
func (p Pos) IsValid() bool { return p != NoPos }

// Position is a printable source position. Line and Column are 1-based;
// Column counts bytes.
type Position struct {
	Filename string
	Offset   int // byte offset, 0-based
	Line     int
	Column   int
}

// IsValid reports whether the position has a line.
func (p Position) IsValid() bool { return p.Line > 0 }

// String formats the position as file:line:col (parts left out when unknown).
func (p Position) String() string {
	s := p.Filename
	if p.IsValid() {
		if s != "" {
			s += ":"
		}
		s += fmt.Sprintf("%d:%d", p.Line, p.Column)
	}
	if s == "" {
		s = "-"
	}
	return s
}

// File maps the positions of one source file to lines and columns. Line
// starts are computed from the source on first use: "\n", "\r\n" and a
// lone "\r" all end a line, as Python reads them.
type File struct {
	name  string
	size  int
	src   []byte
	once  sync.Once
	lines []int // offset of the first byte of each line
}

// NewFile returns the File of src, named name. src must not change while
// the File is in use.
func NewFile(name string, src []byte) *File {
	return &File{name: name, size: len(src), src: src}
}

func (f *File) lineTable() []int {
	f.once.Do(func() {
		src := f.src
		lines := make([]int, 1, len(src)/32+1)
		if bytes.IndexByte(src, '\r') < 0 {
			// the common case: "\n" only, found with the vectorized IndexByte
			for off := 0; ; {
				i := bytes.IndexByte(src[off:], '\n')
				if i < 0 {
					break
				}
				off += i + 1
				lines = append(lines, off)
			}
		} else {
			for i := 0; i < len(src); i++ {
				switch src[i] {
				case '\n':
					lines = append(lines, i+1)
				case '\r':
					if i+1 < len(src) && src[i+1] == '\n' {
						i++
					}
					lines = append(lines, i+1)
				}
			}
		}
		f.lines = lines
		f.src = nil
	})
	return f.lines
}

// Name returns the file name.
func (f *File) Name() string { return f.name }

// Size returns the source length in bytes.
func (f *File) Size() int { return f.size }

// LineCount returns the number of lines.
func (f *File) LineCount() int { return len(f.lineTable()) }

// Pos returns the Pos of byte offset off.
func (f *File) Pos(off int) Pos { return Pos(off + 1) }

// Offset returns the byte offset of p.
func (f *File) Offset(p Pos) int { return int(p) - 1 }

// LineStart returns the Pos of the first byte of line (1-based).
func (f *File) LineStart(line int) Pos {
	lines := f.lineTable()
	if line < 1 || line > len(lines) {
		return NoPos
	}
	return Pos(lines[line-1] + 1)
}

// Line returns the 1-based line of p.
func (f *File) Line(p Pos) int { return f.Position(p).Line }

// Position converts p to a printable Position.
func (f *File) Position(p Pos) Position {
	if !p.IsValid() {
		return Position{Filename: f.name}
	}
	off := int(p) - 1
	if off > f.size {
		off = f.size
	}
	lines := f.lineTable()
	i := sort.Search(len(lines), func(i int) bool { return lines[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return Position{Filename: f.name, Offset: off, Line: i + 1, Column: off - lines[i] + 1}
}
