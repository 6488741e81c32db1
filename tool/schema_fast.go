package tool

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/lcptools/lcp/internal/jsonscan"
)

// fastSchema is a compiled form of the JSON schemas most tools have — an
// object of typed properties, required names, additionalProperties, items,
// numeric bounds — checked directly on the JSON text. It only ever answers
// "valid" when the full validator would; anything it is unsure about (a
// keyword it does not know, a number it cannot compare exactly) sends the
// value to the full validator, which also words the violations.
type fastSchema struct {
	types     uint8 // bit set of fastNull..fastString; 0 = any type
	props     map[string]*fastSchema
	required  []string
	addl      *fastSchema // additionalProperties as a schema
	addlFalse bool
	items     *fastSchema
	min, max  *float64
}

const (
	fastNull uint8 = 1 << iota
	fastBool
	fastObject
	fastArray
	fastNumber
	fastInteger
	fastString
)

var fastTypes = sync.OnceValue(func() map[string]uint8 {
	return map[string]uint8{
		"null": fastNull, "boolean": fastBool, "object": fastObject, "array": fastArray,
		"number": fastNumber, "integer": fastInteger, "string": fastString,
	}
})

// annotations never change validity.
var annotations = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"description": true, "title": true, "default": true, "examples": true,
		"$schema": true, "$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	}
})

// compileFast returns the fast form of a schema, or nil when the schema
// uses anything outside the subset.
func compileFast(raw []byte) *fastSchema {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	s := &fastSchema{}
	for k, v := range m {
		switch {
		case annotations()[k]:
		case k == "type":
			var one string
			var many []string
			if json.Unmarshal(v, &one) == nil {
				many = []string{one}
			} else if json.Unmarshal(v, &many) != nil {
				return nil
			}
			for _, t := range many {
				bit, ok := fastTypes()[t]
				if !ok {
					return nil
				}
				s.types |= bit
			}
		case k == "properties":
			var props map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil {
				return nil
			}
			s.props = make(map[string]*fastSchema, len(props))
			for name, ps := range props {
				if s.props[name] = compileFast(ps); s.props[name] == nil {
					return nil
				}
			}
		case k == "required":
			if json.Unmarshal(v, &s.required) != nil {
				return nil
			}
		case k == "additionalProperties":
			switch string(bytes.TrimSpace(v)) {
			case "true":
			case "false":
				s.addlFalse = true
			default:
				if s.addl = compileFast(v); s.addl == nil {
					return nil
				}
			}
		case k == "items":
			if s.items = compileFast(v); s.items == nil {
				return nil
			}
		case k == "minimum" || k == "maximum":
			f, ok := exactFloat(v)
			if !ok {
				return nil
			}
			if k == "minimum" {
				s.min = &f
			} else {
				s.max = &f
			}
		default:
			return nil
		}
	}
	return s
}

// exactFloat parses a JSON number that float64 holds exactly enough to
// compare: at most 15 significant digits.
func exactFloat(raw []byte) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	digits := 0
	for _, c := range raw {
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	if digits > 15 {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

// valid reports whether v (valid JSON text) surely satisfies s.
func (s *fastSchema) valid(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	var kind uint8
	switch c := v[0]; {
	case c == 'n':
		kind = fastNull
	case c == 't' || c == 'f':
		kind = fastBool
	case c == '{':
		kind = fastObject
	case c == '[':
		kind = fastArray
	case c == '"':
		kind = fastString
	default:
		kind = fastNumber
		if !bytes.ContainsAny(v, ".eE") {
			kind |= fastInteger
		}
	}
	if s.types != 0 {
		ok := s.types&kind != 0
		if !ok && kind&fastNumber != 0 && s.types&fastInteger != 0 {
			return false // 1.0 is an integer to JSON Schema: let the full validator decide
		}
		if !ok {
			return false
		}
	}
	switch {
	case kind&fastNumber != 0:
		if s.min != nil || s.max != nil {
			f, ok := exactFloat(v)
			if !ok || (s.min != nil && f < *s.min) || (s.max != nil && f > *s.max) {
				return false
			}
		}
	case kind == fastObject:
		return s.validObject(v)
	case kind == fastArray:
		if s.items == nil {
			return true
		}
		i := jsonscan.SkipWS(v, 1)
		for i < len(v) && v[i] != ']' {
			e := jsonscan.SkipValue(v, i)
			if !s.items.valid(v[i:e]) {
				return false
			}
			i = jsonscan.SkipWS(v, e)
			if i < len(v) && v[i] == ',' {
				i = jsonscan.SkipWS(v, i+1)
			}
		}
	}
	return true
}

func (s *fastSchema) validObject(v []byte) bool {
	if s.props == nil && s.required == nil && s.addl == nil && !s.addlFalse {
		return true
	}
	var seen uint64 // required names seen, by index (up to 64)
	if len(s.required) > 64 {
		return false
	}
	ok := true
	_ = jsonscan.WalkObject(v, func(k, val []byte) bool {
		key := k[1 : len(k)-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			ok = false // escaped names: let the full validator compare them
			return false
		}
		for i, r := range s.required {
			if r == string(key) {
				seen |= 1 << i
			}
		}
		if ps, known := s.props[string(key)]; known {
			ok = ps.valid(val)
		} else if s.addlFalse {
			ok = false
		} else if s.addl != nil {
			ok = s.addl.valid(val)
		}
		return ok
	})
	return ok && seen == (uint64(1)<<len(s.required))-1
}
