package tool

import (
	"encoding/json"
	"errors"
)

// The functions here walk JSON text that json.Valid has accepted, without
// decoding it: the hot paths (normalizing a result, checking arguments
// against a simple schema) only need to know where values start and end.

func skipWS(b []byte, i int) int {
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

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
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

// unquoteKey returns the text of the JSON string b (quotes included).
func unquoteKey(b []byte) (string, error) {
	for _, c := range b[1 : len(b)-1] {
		if c == '\\' {
			var s string
			err := json.Unmarshal(b, &s)
			return s, err
		}
	}
	return string(b[1 : len(b)-1]), nil
}

var errNotObject = errors.New("not a JSON object")

// walkObject calls fn for each member of the JSON object b, which must be
// valid JSON; raw values are sub-slices of b.
func walkObject(b []byte, fn func(key []byte, value []byte) bool) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i = skipWS(b, i+1)
	for i < len(b) && b[i] != '}' {
		ks := i
		ke := skipString(b, i)
		i = skipWS(b, ke)
		i = skipWS(b, i+1) // ':'
		vs := i
		ve := skipValue(b, i)
		if !fn(b[ks:ke], b[vs:ve]) {
			return nil
		}
		i = skipWS(b, ve)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	return nil
}
