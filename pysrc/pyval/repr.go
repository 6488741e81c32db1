// Package pyval evaluates and prints Python expressions of package ast the
// way Python itself does: ast.literal_eval (LiteralJSON), ast.unparse
// (Unparse), and repr() of floats, ints, strings and bytes.
//
//	mod, _ := parser.ParseFile("x.py", []byte("x = f(1, k=(2, 3))\n"))
//	value := mod.Body[0].(*ast.Assign).Value
//	fmt.Println(pyval.Unparse(value)) // f(1, k=(2, 3))
//
// Python 3.12 semantics are the reference; every difference from it is a
// bug.
package pyval

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FloatRepr formats f as Python's repr(float) does: the shortest string
// that round-trips, in scientific notation when the decimal exponent is
// below -4 or above 16 ("1e+22", "1e-07"), else with at least one
// fractional digit ("1.0", "-0.0"); "inf", "-inf" and "nan" otherwise.
func FloatRepr(f float64) string { return formatFloat(f, true) }

func formatFloat(f float64, addDot0 bool) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±dd
	neg := strings.HasPrefix(e, "-")
	if neg {
		e = e[1:]
	}
	i := strings.IndexByte(e, 'e')
	mant, exp := e[:i], e[i+1:]
	x, _ := strconv.Atoi(exp)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := x + 1
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if decpt <= -4 || decpt > 16 {
		b.WriteByte(digits[0])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if x < 0 {
			b.WriteByte('-')
			x = -x
		} else {
			b.WriteByte('+')
		}
		if x < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(x))
		return b.String()
	}
	switch {
	case decpt <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -decpt))
		b.WriteString(digits)
	case decpt >= len(digits):
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", decpt-len(digits)))
		if addDot0 {
			b.WriteString(".0")
		}
	default:
		b.WriteString(digits[:decpt])
		b.WriteByte('.')
		b.WriteString(digits[decpt:])
	}
	return b.String()
}

// ComplexImagRepr formats the imaginary literal imag*1j as Python's repr
// of a complex number with a zero real part ("1j", "1.5j", "1e+16j").
func ComplexImagRepr(imag float64) string { return formatFloat(imag, false) + "j" }

// ParseFloat converts a Python float literal (underscores allowed) to a
// float64, with Python's rounding; literals too large are +Inf.
func ParseFloat(raw string) float64 {
	raw = strings.ReplaceAll(raw, "_", "")
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f
		}
		return math.NaN()
	}
	return f
}

// IntDecimal converts a Python int literal (decimal, 0x, 0o or 0b,
// underscores allowed) to its exact decimal text, as repr(int) prints it.
func IntDecimal(raw string) string {
	raw = strings.ReplaceAll(raw, "_", "")
	base := 10
	if len(raw) > 1 && raw[0] == '0' {
		switch raw[1] | 0x20 {
		case 'x':
			base = 16
		case 'o':
			base = 8
		case 'b':
			base = 2
		}
	}
	if base == 10 {
		s := strings.TrimLeft(raw, "0")
		if s == "" {
			return "0"
		}
		return s
	}
	var n big.Int
	if _, ok := n.SetString(raw[2:], base); !ok {
		return "0"
	}
	return n.String()
}

// isPrintable is Python's str.isprintable for one character: everything
// except the categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs other than the
// ASCII space. Go's unicode.IsPrint has the same definition.
func isPrintable(r rune) bool { return unicode.IsPrint(r) }

// DecodeChar decodes the character at the start of s like
// utf8.DecodeRuneInString, but also decodes the WTF-8 form of a lone
// surrogate (U+D800..U+DFFF), which the parser uses for surrogates that
// come from escapes.
func DecodeChar(s string) (rune, int) {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n == 1 && len(s) >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF {
		return rune(0xD000 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F)), 3
	}
	return r, n
}

func isSurrogate(r rune) bool { return r >= 0xD800 && r <= 0xDFFF }

// StrRepr returns Python's repr() of a str.
func StrRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, n := DecodeChar(s[i:])
		i += n
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			writeHex(&b, `\x`, r, 2)
		case r < 0x7f:
			b.WriteRune(r)
		case isPrintable(r) && !isSurrogate(r):
			b.WriteRune(r)
		case r <= 0xff:
			writeHex(&b, `\x`, r, 2)
		case r <= 0xffff:
			writeHex(&b, `\u`, r, 4)
		default:
			writeHex(&b, `\U`, r, 8)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// BytesRepr returns Python's repr() of a bytes value (one byte per char
// of s).
func BytesRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.WriteString("b")
	b.WriteByte(quote)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == quote || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < ' ' || c >= 0x7f:
			writeHex(&b, `\x`, rune(c), 2)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

const hexDigits = "0123456789abcdef"

func writeHex(b *strings.Builder, prefix string, r rune, n int) {
	b.WriteString(prefix)
	for i := n - 1; i >= 0; i-- {
		b.WriteByte(hexDigits[(r>>(4*uint(i)))&0xf])
	}
}

// unicodeEscape is Python's c.encode("unicode_escape") for one character.
func unicodeEscape(r rune) string {
	var b strings.Builder
	switch {
	case r == '\\':
		return `\\`
	case r == '\t':
		return `\t`
	case r == '\n':
		return `\n`
	case r == '\r':
		return `\r`
	case r < ' ' || r >= 0x7f && r <= 0xff:
		writeHex(&b, `\x`, r, 2)
	case r < 0x7f:
		return string(r)
	case r <= 0xffff:
		writeHex(&b, `\u`, r, 4)
	default:
		writeHex(&b, `\U`, r, 8)
	}
	return b.String()
}

// ValidUTF8 replaces each lone surrogate (WTF-8) by U+FFFD, and any other
// invalid UTF-8 sequence too.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := DecodeChar(s[i:])
		i += n
		if isSurrogate(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}
