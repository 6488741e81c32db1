// Package jsontest compares JSON documents the way the conformance cases
// say: as values, numbers by value (big integers exact), booleans never
// equal to numbers, object key order ignored.
package jsontest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// Decode decodes a JSON document with exact numbers.
func Decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Equal reports whether a and b are the same JSON value.
func Equal(a, b []byte) (bool, error) {
	va, err := Decode(a)
	if err != nil {
		return false, fmt.Errorf("first document: %w", err)
	}
	vb, err := Decode(b)
	if err != nil {
		return false, fmt.Errorf("second document: %w", err)
	}
	return ValueEqual(va, vb), nil
}

// ValueEqual compares two decoded values (as Decode gives them).
func ValueEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && fixSurrogates(x) == fixSurrogates(y)
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numberEqual(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !ValueEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !ValueEqual(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// fixSurrogates makes a lone surrogate (decoded by encoding/json as
// U+FFFD already) compare equal to U+FFFD.
func fixSurrogates(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func numberEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, ok1 := new(big.Float).SetPrec(2000).SetString(string(a))
	y, ok2 := new(big.Float).SetPrec(2000).SetString(string(b))
	return ok1 && ok2 && x.Cmp(y) == 0
}

// Keys returns the sorted keys of a JSON object document.
func Keys(raw []byte) ([]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}
