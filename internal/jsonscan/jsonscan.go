// Package jsonscan walks JSON text that json.Valid has accepted, without
// decoding it: the hot paths (preparing a call's arguments, normalizing
// its result, checking arguments against a simple schema) only need to
// know where values start and end.
package jsonscan

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// SkipWS returns the index of the first byte at or after i that is not
// JSON whitespace.
func SkipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// SkipValue returns the index after the value starting at b[i].
func SkipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// UnquoteKey returns the text of the JSON string b (quotes included), as
// encoding/json decodes it (escapes resolved, invalid UTF-8 replaced).
func UnquoteKey(b []byte) (string, error) {
	inner := b[1 : len(b)-1]
	ascii := true
	for _, c := range inner {
		if c == '\\' {
			var s string
			err := json.Unmarshal(b, &s)
			return s, err
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(inner) {
		var s string
		err := json.Unmarshal(b, &s)
		return s, err
	}
	return string(inner), nil
}

// ErrNotObject is WalkObject's error for text that is not an object.
var ErrNotObject = errors.New("not a JSON object")

// WalkObject calls fn for each member of the JSON object b, which must be
// valid JSON, in order (duplicates included), until fn returns false; keys
// are quoted and raw values are sub-slices of b.
func WalkObject(b []byte, fn func(key []byte, value []byte) bool) error {
	i := SkipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ErrNotObject
	}
	i = SkipWS(b, i+1)
	for i < len(b) && b[i] != '}' {
		ks := i
		ke := skipString(b, i)
		i = SkipWS(b, ke)
		i = SkipWS(b, i+1) // ':'
		vs := i
		ve := SkipValue(b, i)
		if !fn(b[ks:ke], b[vs:ve]) {
			return nil
		}
		i = SkipWS(b, ve)
		if i < len(b) && b[i] == ',' {
			i = SkipWS(b, i+1)
		}
	}
	return nil
}
