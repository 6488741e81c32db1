// Package jsonindent indents JSON documents in one pass, exactly as
// encoding/json does (json.Compact, then json.Indent with an empty prefix)
// but several times faster: a command that prints thousands of tool specs
// (lcp list --json) indents each one as it streams it out, instead of
// compacting, validating and indenting the whole document three times.
//
//	out, err := jsonindent.Append(nil, []byte(`{"a":[1,2],"b":{}}`), "  ", 0)
//	// {
//	//   "a": [
//	//     1,
//	//     2
//	//   ],
//	//   "b": {}
//	// }
//
// The input is validated as it is read: a document json.Valid rejects is
// an error here too, and nothing of it is appended.
package jsonindent

import (
	"errors"
	"fmt"
)

// maxDepth is encoding/json's nesting limit, so that the two agree on what
// is valid.
const maxDepth = 10000

// SyntaxError is the error of a document that is not valid JSON.
type SyntaxError struct {
	// Offset is the byte offset in the document where the error was
	// found (its length for an unexpected end).
	Offset int
	msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.msg)
}

// ErrTooDeep is wrapped by the error of a document nested deeper than
// encoding/json accepts (10,000 levels).
var ErrTooDeep = errors.New("nested too deeply")

// What the next token may be.
const (
	wantValue      = iota // a value
	wantFirstValue        // a value or ']' (just after '[')
	wantKey               // an object key
	wantFirstKey          // an object key or '}' (just after '{')
	wantColon             // ':' after a key
	wantComma             // ',' or the end of the enclosing container or of the document
)

// Append appends src, one JSON value, indented: each element of an object
// or array on its own line, indented by depth+1 copies of indent (depth+2
// inside a nested one...), ": " after keys, "{}" and "[]" for empty
// containers, insignificant white space dropped and every string copied
// as it is. depth is the level of the value in an enclosing document
// being written: 0 for a document of its own, 1 for the elements of a
// top-level array. On error, dst is returned unchanged with a
// *SyntaxError.
func Append(dst, src []byte, indent string, depth int) ([]byte, error) {
	orig := len(dst)
	fail := func(off int, msg string) ([]byte, error) {
		return dst[:orig], &SyntaxError{Offset: off, msg: msg}
	}
	var stackBuf [32]byte
	stack := stackBuf[:0] // the open containers, '{' or '['
	state := wantValue
	i, n := 0, len(src)
	for {
		for i < n && isSpace(src[i]) {
			i++
		}
		if i == n {
			break
		}
		c := src[i]
		switch state {
		case wantColon:
			if c != ':' {
				return fail(i, fmt.Sprintf("%q after an object key", c))
			}
			dst = append(dst, ':', ' ')
			state = wantValue
			i++
			continue
		case wantComma:
			if len(stack) == 0 {
				return fail(i, fmt.Sprintf("%q after the top-level value", c))
			}
			top := stack[len(stack)-1]
			switch {
			case c == ',':
				dst = newline(append(dst, ','), indent, depth)
				state = wantValue
				if top == '{' {
					state = wantKey
				}
			case c == '}' && top == '{', c == ']' && top == '[':
				stack = stack[:len(stack)-1]
				depth--
				dst = append(newline(dst, indent, depth), c)
			default:
				return fail(i, fmt.Sprintf("%q after a value", c))
			}
			i++
			continue
		}
		// A value or a key, or the end of an empty container.
		if state == wantFirstValue || state == wantFirstKey {
			if c == ']' && state == wantFirstValue || c == '}' && state == wantFirstKey {
				stack = stack[:len(stack)-1]
				dst = append(dst, c)
				state = wantComma
				i++
				continue
			}
			depth++
			dst = newline(dst, indent, depth)
		}
		if state == wantKey || state == wantFirstKey {
			if c != '"' {
				return fail(i, fmt.Sprintf("%q where an object key belongs", c))
			}
			j, msg := scanString(src, i)
			if msg != "" {
				return fail(j, msg)
			}
			dst = append(dst, src[i:j]...)
			state, i = wantColon, j
			continue
		}
		state = wantComma
		switch {
		case c == '"':
			j, msg := scanString(src, i)
			if msg != "" {
				return fail(j, msg)
			}
			dst = append(dst, src[i:j]...)
			i = j
		case c == '{' || c == '[':
			if len(stack) >= maxDepth {
				return dst[:orig], fmt.Errorf("invalid JSON at offset %d: %w", i, ErrTooDeep)
			}
			stack = append(stack, c)
			dst = append(dst, c)
			state = wantFirstValue
			if c == '{' {
				state = wantFirstKey
			}
			i++
		case c == '-' || '0' <= c && c <= '9':
			j, msg := scanNumber(src, i)
			if msg != "" {
				return fail(j, msg)
			}
			dst = append(dst, src[i:j]...)
			i = j
		case c == 't' || c == 'f' || c == 'n':
			lit := "null"
			if c == 't' {
				lit = "true"
			} else if c == 'f' {
				lit = "false"
			}
			if n-i < len(lit) || string(src[i:i+len(lit)]) != lit {
				return fail(i, "invalid literal")
			}
			dst = append(dst, lit...)
			i += len(lit)
		default:
			return fail(i, fmt.Sprintf("%q where a value belongs", c))
		}
	}
	if state != wantComma || len(stack) != 0 {
		return fail(n, "unexpected end")
	}
	return dst, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// newlineSpaces is a new line and the spaces of most indentations.
const newlineSpaces = "\n                                                                "

// newline starts a line indented depth times.
func newline(dst []byte, indent string, depth int) []byte {
	if n := 1 + depth*len(indent); n <= len(newlineSpaces) && isSpaces(indent) {
		return append(dst, newlineSpaces[:n]...)
	}
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, indent...)
	}
	return dst
}

func isSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			return false
		}
	}
	return true
}

// plain marks the bytes a string copies without a look: not '"', not
// '\\', not a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString returns the end of the string starting at src[i] (a '"'),
// or where it goes wrong and why. Bytes are not checked for UTF-8, as
// encoding/json does not.
func scanString(src []byte, i int) (int, string) {
	n := len(src)
	for i++; i < n; i++ {
		for i < n && plain[src[i]] {
			i++
		}
		if i == n {
			break
		}
		switch c := src[i]; {
		case c == '"':
			return i + 1, ""
		case c == '\\':
			i++
			if i == n {
				return n, "unexpected end in a string"
			}
			switch src[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if n-i <= 4 {
					return n, "unexpected end in a string escape"
				}
				for k := 1; k <= 4; k++ {
					if !isHex(src[i+k]) {
						return i + k, "invalid \\u escape"
					}
				}
				i += 4
			default:
				return i, "invalid escape"
			}
		case c < 0x20:
			return i, "control character in a string"
		}
	}
	return n, "unexpected end in a string"
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanNumber returns the end of the number starting at src[i], or where
// it goes wrong and why.
func scanNumber(src []byte, i int) (int, string) {
	n := len(src)
	digits := func(i int) int {
		for i < n && '0' <= src[i] && src[i] <= '9' {
			i++
		}
		return i
	}
	if src[i] == '-' {
		i++
	}
	switch {
	case i < n && src[i] == '0':
		i++
	case i < n && '1' <= src[i] && src[i] <= '9':
		i = digits(i)
	default:
		return i, "invalid number"
	}
	if i < n && src[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, "invalid number"
		}
		i = j
	}
	if i < n && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < n && (src[i] == '+' || src[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, "invalid number"
		}
		i = j
	}
	return i, ""
}
