package scanner

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lcptools/lcp/pysrc/token"
)

// scanAll returns "TOK" or "TOK:lit" for every token, and the errors.
func scanAll(t testing.TB, src string) ([]string, []string) {
	t.Helper()
	var s Scanner
	var errs []string
	file := token.NewFile("t.py", []byte(src))
	s.Init(file, []byte(src), func(pos token.Position, msg string) {
		errs = append(errs, pos.String()+": "+msg)
	})
	var toks []string
	for i := 0; ; i++ {
		if i > 4*len(src)+100 {
			t.Fatalf("scanner does not terminate on %q", src)
		}
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if lit != "" && !tok.IsKeyword() {
			toks = append(toks, tok.String()+":"+lit)
		} else {
			toks = append(toks, tok.String())
		}
	}
	return toks, errs
}

func TestTokens(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{"x = 1\n", "NAME:x = NUMBER:1 NEWLINE"},
		{"x", "NAME:x NEWLINE"},
		{"", ""},
		{"# only a comment\n", ""},
		{"if x:\n    y\nz\n", "if NAME:x : NEWLINE INDENT NAME:y NEWLINE DEDENT NAME:z NEWLINE"},
		{"if x:\n    y", "if NAME:x : NEWLINE INDENT NAME:y NEWLINE DEDENT"},
		{"if x:\n\n    # c\n    y\n", "if NAME:x : NEWLINE INDENT NAME:y NEWLINE DEDENT"},
		{"(a,\n b)\n", "( NAME:a , NAME:b ) NEWLINE"},
		{"a \\\n b\n", "NAME:a NAME:b NEWLINE"},
		{"a\r\nb\rc\n", "NAME:a NEWLINE NAME:b NEWLINE NAME:c NEWLINE"},
		{"a**=b//=c->d...:=e!=f<<=g\n", "NAME:a **= NAME:b //= NAME:c -> NAME:d ... := NAME:e != NAME:f <<= NAME:g NEWLINE"},
		{"0x_1F 0o17 0b1 1_000 1.5e-3 .5 5. 1j 1E5J 00\n", "NUMBER:0x_1F NUMBER:0o17 NUMBER:0b1 NUMBER:1_000 NUMBER:1.5e-3 NUMBER:.5 NUMBER:5. NUMBER:1j NUMBER:1E5J NUMBER:00 NEWLINE"},
		{"1if x else 2\n", "NUMBER:1 if NAME:x else NUMBER:2 NEWLINE"},
		{`'a' "b" '''c''' r'\d' b"x" Rb'y' u'z'` + "\n", `STRING:'a' STRING:"b" STRING:'''c''' STRING:r'\d' STRING:b"x" STRING:Rb'y' STRING:u'z' NEWLINE`},
		{"'it\\'s'\n", `STRING:'it\'s' NEWLINE`},
		{"ur'x'\n", "NAME:ur STRING:'x' NEWLINE"},
		{"f'a{b!r:>{w}}c'\n", "FSTRING_START:f' FSTRING_MIDDLE:a { NAME:b ! NAME:r : FSTRING_MIDDLE:> { NAME:w } } FSTRING_MIDDLE:c FSTRING_END:' NEWLINE"},
		{`f"{"nested"}"` + "\n", `FSTRING_START:f" { STRING:"nested" } FSTRING_END:" NEWLINE`},
		{"f'{x:=5}'\n", "FSTRING_START:f' { NAME:x : FSTRING_MIDDLE:=5 } FSTRING_END:' NEWLINE"},
		{"f'{{}}'\n", "FSTRING_START:f' FSTRING_MIDDLE:{{}} FSTRING_END:' NEWLINE"},
		{"f'{a!=b}'\n", "FSTRING_START:f' { NAME:a != NAME:b } FSTRING_END:' NEWLINE"},
		{"f'''{\nx\n}'''\n", "FSTRING_START:f''' { NAME:x } FSTRING_END:''' NEWLINE"},
		{"\ufeffx\n", "NAME:x NEWLINE"},
		{"ﬁle = 1\n", "NAME:file = NUMBER:1 NEWLINE"},
		{"match x:\n case 1: pass\n", "NAME:match NAME:x : NEWLINE INDENT NAME:case NUMBER:1 : pass NEWLINE DEDENT"},
		{"if 1:\n  x\n\\\n  y\n", "if NUMBER:1 : NEWLINE INDENT NAME:x NEWLINE NAME:y NEWLINE DEDENT"},
		{"x\n\f\fy\n", "NAME:x NEWLINE NAME:y NEWLINE"},
	}
	for _, tt := range tests {
		got, errs := scanAll(t, tt.src)
		if len(errs) > 0 {
			t.Errorf("%q: unexpected errors %v", tt.src, errs)
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.src, g, tt.want)
		}
	}
}

func TestScanErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"x = (1]\n", "t.py:1:7: closing parenthesis ']' does not match opening parenthesis '('"},
		{")\n", "t.py:1:1: unmatched ')'"},
		{"x = [1,\n2\n", "t.py:1:5: '[' was never closed"},
		{"'abc\n", "t.py:1:1: unterminated string literal (detected at line 1)"},
		{"'''abc\n", "t.py:1:1: unterminated triple-quoted string literal (detected at line 2)"},
		{"f'abc\n", "t.py:1:1: unterminated f-string literal (detected at line 1)"},
		{"f'}'\n", "t.py:1:3: f-string: single '}' is not allowed"},
		{"x = 1 \\ 2\n", "t.py:1:8: unexpected character after line continuation character"},
		{"x = \\", "t.py:1:6: unexpected EOF while parsing"},
		{"€ = 1\n", "t.py:1:1: invalid character '€' (U+20AC)"},
		{"x = 1\u00a0+ 2\n", "t.py:1:6: invalid non-printable character U+00A0"},
		{"07\n", "t.py:1:1: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers"},
		{"0b2\n", "t.py:1:3: invalid digit '2' in binary literal"},
		{"0x\n", "t.py:1:3: invalid hexadecimal literal"},
		{"1__0\n", "t.py:1:2: invalid decimal literal"},
		{"1e\n", "t.py:1:2: invalid decimal literal"},
		{"1.real\n", "t.py:1:3: invalid decimal literal"},
		{"1abc\n", "t.py:1:2: invalid decimal literal"},
		{"if x:\n  a\n b\n", "t.py:3:2: unindent does not match any outer indentation level"},
		{"if x:\n\ta\n        b\n", "t.py:3:9: inconsistent use of tabs and spaces in indentation"},
		{"a\x00b\n", "t.py:1:2: source code cannot contain null bytes"},
	}
	for _, tt := range tests {
		_, errs := scanAll(t, tt.src)
		if len(errs) == 0 || errs[0] != tt.want {
			t.Errorf("%q: errors %v, want first %q", tt.src, errs, tt.want)
		}
	}
}

func TestTokenTable(t *testing.T) {
	for tok := token.Token(0); tok < 200; tok++ {
		s := tok.String()
		if tok.IsKeyword() {
			if token.Lookup(s) != tok {
				t.Errorf("Lookup(%q) = %v, want %v", s, token.Lookup(s), tok)
			}
		}
		if tok.IsOperator() && strings.HasPrefix(s, "token(") {
			t.Errorf("operator %d has no text", tok)
		}
	}
	if token.Lookup("match") != token.NAME || token.Lookup("type") != token.NAME {
		t.Error("soft keywords must scan as NAME")
	}
}

func FuzzScanner(f *testing.F) {
	for _, s := range []string{"x = 1\n", "f'{a!r:{b}}'", "if x:\n\ty\n  z", "'''", "0x_", "\\\n", "\xff\xfe", "f'{f'{f'{", "(((("} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var s Scanner
		file := token.NewFile("f.py", src)
		s.Init(file, src, nil)
		prev := token.Pos(0)
		for i := 0; ; i++ {
			if i > 4*len(src)+100 {
				t.Fatalf("too many tokens for %d bytes", len(src))
			}
			pos, tok, lit := s.Scan()
			if pos < prev || int(pos) > len(src)+1 {
				t.Fatalf("position %d out of order (prev %d, len %d)", pos, prev, len(src))
			}
			if s.TokenEnd() < pos {
				t.Fatalf("token end before start")
			}
			if utf8.Valid(src) && !utf8.ValidString(lit) {
				t.Fatalf("invalid UTF-8 literal %q", lit)
			}
			prev = pos
			if tok == token.EOF {
				break
			}
		}
		checkAppendNext(t, src)
	})
}

// checkAppendNext checks that AppendNext, alone or mixed with Next, gives
// the tokens and literals Next gives, and the same errors.
func checkAppendNext(t *testing.T, src []byte) {
	t.Helper()
	type tokLit struct {
		it  Item
		lit string
	}
	scan := func(bulk func(i int) bool) (toks []tokLit, errs []string) {
		var s Scanner
		s.Init(token.NewFile("f.py", src), src, func(pos token.Position, msg string) {
			errs = append(errs, pos.String()+": "+msg)
		})
		var buf []Item
		for i := 0; len(toks) == 0 || toks[len(toks)-1].it.Tok != token.EOF; i++ {
			if i > 4*len(src)+100 {
				t.Fatalf("too many tokens for %d bytes", len(src))
			}
			if bulk(i) {
				buf = s.AppendNext(buf[:0])
			} else {
				buf = append(buf[:0], s.Next())
			}
			for _, it := range buf {
				toks = append(toks, tokLit{it, s.Lit(it)})
			}
			if last := buf[len(buf)-1]; s.TokenEnd() != last.End {
				t.Fatalf("TokenEnd %d, want the end %d of the last token returned", s.TokenEnd(), last.End)
			}
		}
		return toks, errs
	}
	want, wantErrs := scan(func(int) bool { return false })
	for _, bulk := range []func(int) bool{
		func(int) bool { return true },
		func(i int) bool { return i%2 == 0 },
		func(i int) bool { return i%3 == 2 },
	} {
		got, gotErrs := scan(bulk)
		if !slices.Equal(got, want) {
			t.Fatalf("AppendNext tokens differ from Next's:\n got %v\nwant %v", got, want)
		}
		if !slices.Equal(gotErrs, wantErrs) {
			t.Fatalf("AppendNext errors differ from Next's:\n got %q\nwant %q", gotErrs, wantErrs)
		}
	}
}

func TestAppendNext(t *testing.T) {
	for _, src := range []string{
		"",
		"x = 1\n",
		"if x:\n    if y:\n        a\nb\n",
		"def f():\n    return 1",
		"f'{a!r:{b}} {c}' x\n",
		"(\n1,\n2)\n\tz\n",
		"é = ﬁ\n",
		"'''abc",
	} {
		checkAppendNext(t, []byte(src))
	}
}
