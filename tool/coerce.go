package binding

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

var (
	intRe     = regexp.MustCompile(`^[+-]?[0-9]+$`)
	decimalRe = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)
)

// coerce converts a value the LLM sent for a property of the given schema
// type, as SPEC §16 says: a string that is exactly an integer, a decimal
// or true/false (any ASCII case) becomes one for integer, number and
// boolean properties; an integral JSON number becomes an integer for an
// integer property. Anything else is returned unchanged.
func coerce(typ string, raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return raw
	}
	switch typ {
	case "integer":
		if raw[0] == '"' {
			if s, ok := jsonString(raw); ok && intRe.MatchString(s) {
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
		if intRe.MatchString(s) {
			return bigInt(s)
		}
		if decimalRe.MatchString(s) {
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

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
