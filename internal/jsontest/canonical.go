package jsontest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// Canonical re-encodes a JSON document keeping its key order and number
// literals, with strings in one escaping, so that two documents compare
// "exactly" (same keys in the same order, numbers as written) by string
// equality.
func Canonical(raw []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b strings.Builder
	// stack of containers: true for objects; counts of items written
	type frame struct {
		object bool
		n      int
	}
	var stack []frame
	enc := func(s string) {
		var buf bytes.Buffer
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false)
		_ = e.Encode(s)
		b.WriteString(strings.TrimSuffix(buf.String(), "\n"))
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		// separators
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			isEnd := false
			if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
				isEnd = true
			}
			if !isEnd {
				if top.object {
					if top.n%2 == 0 && top.n > 0 {
						b.WriteByte(',')
					} else if top.n%2 == 1 {
						b.WriteByte(':')
					}
				} else if top.n > 0 {
					b.WriteByte(',')
				}
				top.n++
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				b.WriteByte(byte(v))
				stack = append(stack, frame{object: v == '{'})
			case '}', ']':
				b.WriteByte(byte(v))
				stack = stack[:len(stack)-1]
			}
		case string:
			enc(v)
		case json.Number:
			b.WriteString(string(v))
		case bool:
			if v {
				b.WriteString("true")
			} else {
				b.WriteString("false")
			}
		case nil:
			b.WriteString("null")
		default:
			return "", errors.New("unexpected token")
		}
	}
	return b.String(), nil
}
