package pyval

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/token"
)

// LiteralJSON evaluates e as Python's ast.literal_eval would and, when that
// succeeds with a JSON-representable value (str, int of any size, finite
// float, bool, None, and lists, tuples and dicts with str keys made of
// those), returns its JSON text: ints exact, floats as repr() prints them,
// tuples as arrays, duplicate dict keys resolved as Python does (last
// value, first position). Otherwise ok is false.
func LiteralJSON(e ast.Expr) (text string, ok bool) {
	var b strings.Builder
	if !literal(&b, e, 0) {
		return "", false
	}
	return b.String(), true
}

const maxLiteralDepth = 500

func literal(b *strings.Builder, e ast.Expr, depth int) bool {
	if depth > maxLiteralDepth {
		return false
	}
	switch e := e.(type) {
	case *ast.Constant:
		switch e.Kind {
		case ast.Str:
			writeJSONString(b, e.Str)
			return true
		case ast.Int:
			b.WriteString(IntDecimal(e.Raw))
			return true
		case ast.Float:
			return writeFloat(b, ParseFloat(e.Raw), false)
		case ast.True:
			b.WriteString("true")
			return true
		case ast.False:
			b.WriteString("false")
			return true
		case ast.None:
			b.WriteString("null")
			return true
		}
		return false // bytes, complex, Ellipsis
	case *ast.UnaryOp:
		// _convert_signed_num: + or - applied to an int or float constant
		c, isConst := e.Operand.(*ast.Constant)
		if !isConst || (e.Op != token.PLUS && e.Op != token.MINUS) {
			return false
		}
		neg := e.Op == token.MINUS
		switch c.Kind {
		case ast.Int:
			d := IntDecimal(c.Raw)
			if neg && d != "0" {
				b.WriteByte('-')
			}
			b.WriteString(d)
			return true
		case ast.Float:
			return writeFloat(b, ParseFloat(c.Raw), neg)
		}
		return false
	case *ast.Tuple:
		return literalArray(b, e.Elts, depth)
	case *ast.List:
		return literalArray(b, e.Elts, depth)
	case *ast.Dict:
		type item struct {
			key string
			val string
		}
		var items []item
		index := map[string]int{}
		for i, v := range e.Values {
			if i >= len(e.Keys) || e.Keys[i] == nil {
				return false
			}
			k, isConst := e.Keys[i].(*ast.Constant)
			if !isConst || k.Kind != ast.Str {
				return false
			}
			var vb strings.Builder
			if !literal(&vb, v, depth+1) {
				return false
			}
			if j, dup := index[k.Str]; dup {
				items[j].val = vb.String()
				continue
			}
			index[k.Str] = len(items)
			items = append(items, item{k.Str, vb.String()})
		}
		b.WriteByte('{')
		for i, it := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(b, it.key)
			b.WriteString(": ")
			b.WriteString(it.val)
		}
		b.WriteByte('}')
		return true
	}
	return false
}

func literalArray(b *strings.Builder, elts []ast.Expr, depth int) bool {
	b.WriteByte('[')
	for i, x := range elts {
		if i > 0 {
			b.WriteString(", ")
		}
		if !literal(b, x, depth+1) {
			return false
		}
	}
	b.WriteByte(']')
	return true
}

func writeFloat(b *strings.Builder, f float64, neg bool) bool {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return false
	}
	if neg {
		f = -f
	}
	b.WriteString(FloatRepr(f))
	return true
}

// writeJSONString writes s as a JSON string, escaping only what JSON
// requires (non-ASCII text stays as is; invalid UTF-8 becomes U+FFFD).
func writeJSONString(b *strings.Builder, s string) {
	var buf [64]byte
	b.Write(AppendJSONString(buf[:0], s))
}

// JSONString returns s as a JSON string literal: quotes, backslashes and
// control characters escaped, other characters as they are, invalid UTF-8
// (and lone surrogates) replaced by U+FFFD.
func JSONString(s string) string { return string(AppendJSONString(nil, s)) }

// AppendJSONString appends JSONString(s) to dst.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= 0x80 {
			r, n := DecodeChar(s[i:])
			if !(r == utf8.RuneError && n == 1) && !isSurrogate(r) && r != 0x2028 && r != 0x2029 {
				i += n
				continue
			}
			dst = append(dst, s[start:i]...)
			if r == 0x2028 || r == 0x2029 {
				dst = append(dst, `\u`+strconv.FormatInt(int64(r), 16)...)
			} else {
				dst = append(dst, "\ufffd"...)
			}
			i += n
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, `\"`...)
		case '\\':
			dst = append(dst, `\\`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
