package tool

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// isInt reports whether s is `[+-]?[0-9]+` (the test runs on every
// argument string of a call, so it is written out rather than a regexp
// compiled at start-up).
func isInt(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return s != "" && digits(s) == len(s)
}

// digits is the length of the run of ASCII digits s starts with.
func digits(s string) int {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// isDecimal reports whether s is
// `[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`.
func isDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	n := digits(s)
	s = s[n:]
	if s != "" && s[0] == '.' {
		f := digits(s[1:])
		if n == 0 && f == 0 {
			return false
		}
		s = s[1+f:]
	} else if n == 0 {
		return false
	}
	if s != "" && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s != "" && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		e := digits(s)
		if e == 0 {
			return false
		}
		s = s[e:]
	}
	return s == ""
}

// Coerce converts a value the LLM sent for a property of JSON Schema type
// typ, as SPEC §7 (step 4) and §16 say — the one coercion rule of every
// backend (Python tools, the built-ins, MCP tools):
//
//   - integer: a string matching [+-]?[0-9]+ (any size) becomes that
//     integer; a JSON number with an integral value becomes an integer
//     (5.0 and 1e2 are 5 and 100);
//   - number: a string matching [+-]?[0-9]+ becomes an integer, a decimal
//     string (2.5, -.25, 1e3, 5.) a float, when it is finite;
//   - boolean: "true" and "false" in any ASCII case become booleans.
//
// A string converts only when it is exactly such a literal: " 5", "1_000",
// "5.0" for an integer, "inf", "yes" stay strings. Anything else is
// returned unchanged (validation, where a backend has it, reports it).
func Coerce(typ string, raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return raw
	}
	switch typ {
	case "integer":
		if raw[0] == '"' {
			if s, ok := jsonString(raw); ok && isInt(s) {
				return bigInt(s)
			}
			return raw
		}
		if isNumber(raw) {
			return integral(raw)
		}
	case "number":
		if raw[0] != '"' {
			return raw
		}
		s, ok := jsonString(raw)
		if !ok {
			return raw
		}
		if isInt(s) {
			return bigInt(s)
		}
		if isDecimal(s) {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return raw
			}
			return floatLiteral(f)
		}
	case "boolean":
		if raw[0] != '"' {
			return raw
		}
		if s, ok := jsonString(raw); ok {
			switch asciiLower(s) {
			case "true":
				return json.RawMessage("true")
			case "false":
				return json.RawMessage("false")
			}
		}
	}
	return raw
}

// PropertyTypes maps the properties of an input schema to their JSON
// Schema type, for the types Coerce converts to (integer, number,
// boolean). Backends read it once per tool.
type PropertyTypes map[string]string

// PropertyTypesOf reads the coercible property types of an object schema:
// properties whose "type" is "integer", "number" or "boolean". A schema
// that is not an object schema has none.
func PropertyTypesOf(schema json.RawMessage) PropertyTypes {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out PropertyTypes
	for k, p := range s.Properties {
		switch t, _ := p.Type.(string); t {
		case "integer", "number", "boolean":
			if out == nil {
				out = PropertyTypes{}
			}
			out[k] = t
		}
	}
	return out
}

// CoerceArguments applies Coerce to each property of an arguments object
// that p types. Arguments that are not a JSON object, or need no change,
// are returned as they are.
func (p PropertyTypes) CoerceArguments(args json.RawMessage) json.RawMessage {
	if len(p) == 0 {
		return args
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || m == nil {
		return args
	}
	changed := false
	for k, typ := range p {
		v, ok := m[k]
		if !ok {
			continue
		}
		if c := Coerce(typ, v); !bytes.Equal(c, v) {
			m[k] = c
			changed = true
		}
	}
	if !changed {
		return args
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}

func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func isNumber(raw json.RawMessage) bool {
	c := raw[0]
	return c == '-' || (c >= '0' && c <= '9')
}

// bigInt returns the JSON integer for a string of digits with an optional
// sign (Python's int() of it).
func bigInt(s string) json.RawMessage {
	n, ok := new(big.Int).SetString(strings.TrimPrefix(s, "+"), 10)
	if !ok {
		return json.RawMessage(strconv.Quote(s))
	}
	return json.RawMessage(n.String())
}

// integral turns a JSON number with an integral value into an integer
// literal, reading it as Python's json module does (a float when it has a
// fraction or an exponent); other numbers are returned unchanged.
func integral(raw json.RawMessage) json.RawMessage {
	if !bytes.ContainsAny(raw, ".eE") {
		return raw
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) {
		return raw
	}
	n, _ := new(big.Float).SetFloat64(f).Int(nil)
	return json.RawMessage(n.String())
}

// floatLiteral writes f so that Python's json module reads a float.
func floatLiteral(f float64) json.RawMessage {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return json.RawMessage(s)
}
