package tool

import (
	"encoding/json"
	"regexp"
	"testing"
)

// The coercion rule of SPEC §7 step 4 and §16, case by case: the
// conformance corpora coercion and amb_coercion_grammar (which check it
// through Python), and the disagreements the built-ins once had.
func TestCoerce(t *testing.T) {
	tests := []struct {
		typ, in, want string
	}{
		// integer: exactly [+-]?[0-9]+, any size; integral numbers.
		{"integer", `"5"`, `5`},
		{"integer", `"-5"`, `-5`},
		{"integer", `"+5"`, `5`},
		{"integer", `"05"`, `5`},
		{"integer", `"123456789012345678901234567890"`, `123456789012345678901234567890`},
		{"integer", `5.0`, `5`},
		{"integer", `1e+20`, `100000000000000000000`},
		{"integer", `1e2`, `100`},
		{"integer", `7`, `7`},
		{"integer", `5.5`, `5.5`},
		{"integer", `1e400`, `1e400`}, // not finite in Python: unchanged
		{"integer", `" 5"`, `" 5"`},   // not exact
		{"integer", `"5 "`, `"5 "`},
		{"integer", `"1_000"`, `"1_000"`},
		{"integer", `"5.0"`, `"5.0"`},
		{"integer", `"١٢"`, `"١٢"`}, // ASCII digits only
		{"integer", `"abc"`, `"abc"`},
		{"integer", `""`, `""`},
		{"integer", `true`, `true`},
		// number: integers stay integers, decimals become finite floats.
		{"number", `"2.5"`, `2.5`},
		{"number", `"-0.25"`, `-0.25`},
		{"number", `"-.25"`, `-0.25`},
		{"number", `"5"`, `5`},
		{"number", `"1e3"`, `1000.0`},
		{"number", `".5"`, `0.5`},
		{"number", `"5."`, `5.0`},
		{"number", `"inf"`, `"inf"`},
		{"number", `"NaN"`, `"NaN"`},
		{"number", `"1e400"`, `"1e400"`},
		{"number", `" 2.5"`, `" 2.5"`},
		{"number", `3`, `3`},
		{"number", `""`, `""`},
		// boolean: true/false in any ASCII case, nothing else.
		{"boolean", `"true"`, `true`},
		{"boolean", `"FALSE"`, `false`},
		{"boolean", `"True"`, `true`},
		{"boolean", `"falſe"`, `"falſe"`}, // ſ folds to s in Unicode, not in ASCII
		{"boolean", `"1"`, `"1"`},
		{"boolean", `"yes"`, `"yes"`},
		{"boolean", `" true"`, `" true"`},
		{"boolean", `1`, `1`},
		// other types are never touched.
		{"string", `"5"`, `"5"`},
		{"array", `"[1]"`, `"[1]"`},
		{"object", `"{}"`, `"{}"`},
		{"", `"5"`, `"5"`},
	}
	for _, tt := range tests {
		if got := string(Coerce(tt.typ, json.RawMessage(tt.in))); got != tt.want {
			t.Errorf("Coerce(%s, %s) = %s, want %s", tt.typ, tt.in, got, tt.want)
		}
	}
}

func TestCoerceArguments(t *testing.T) {
	p := PropertyTypesOf(json.RawMessage(`{"type":"object","properties":{
		"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},"s":{"type":"string"},"u":{"type":["integer","null"]}}}`))
	if len(p) != 3 {
		t.Fatalf("PropertyTypesOf = %v", p)
	}
	tests := []struct{ in, want string }{
		{`{"i":"50","n":"2.5","b":"TRUE","s":"5"}`, `{"b":true,"i":50,"n":2.5,"s":"5"}`},
		{`{"i":" 5"}`, `{"i":" 5"}`},
		{`{"s":"5","u":"3"}`, `{"s":"5","u":"3"}`}, // unchanged: the same bytes
		{`not json`, `not json`},
		{`[1]`, `[1]`},
		{`null`, `null`},
	}
	for _, tt := range tests {
		if got := string(p.CoerceArguments(json.RawMessage(tt.in))); got != tt.want {
			t.Errorf("CoerceArguments(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := string(PropertyTypes(nil).CoerceArguments(json.RawMessage(`{"i":"5"}`))); got != `{"i":"5"}` {
		t.Errorf("no types: %s", got)
	}
}

func FuzzCoerceArguments(f *testing.F) {
	for _, s := range []string{`{"i":"50"}`, `{"n":"-.5e3"}`, `{"b":"true"}`, `{"i":1e400}`, `[1]`, `{"i":"99999999999999999999999"}`} {
		f.Add(s)
	}
	p := PropertyTypes{"i": "integer", "n": "number", "b": "boolean"}
	f.Fuzz(func(t *testing.T, in string) {
		out := p.CoerceArguments(json.RawMessage(in))
		if json.Valid([]byte(in)) && !json.Valid(out) {
			t.Fatalf("CoerceArguments(%s) = %s, not JSON", in, out)
		}
	})
}

// The hand-written literal tests against the patterns they replace.
var (
	intPattern     = regexp.MustCompile(`^[+-]?[0-9]+$`)
	decimalPattern = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)
)

var literalSeeds = []string{"", "+", "-", "5", "-5", "+05", "5.", ".5", ".", "-.", "+.e1", "1e", "1e+", "1e+5", "1E-05",
	"2.5", "-.25", "1e3", "5.e2", ".e2", "1.2.3", "1e2e3", " 5", "5 ", "1_000", "inf", "0x10", "٣", "1e5x", "--5"}

func TestLiteralTests(t *testing.T) {
	for _, s := range literalSeeds {
		if got, want := isInt(s), intPattern.MatchString(s); got != want {
			t.Errorf("isInt(%q) = %v, want %v", s, got, want)
		}
		if got, want := isDecimal(s), decimalPattern.MatchString(s); got != want {
			t.Errorf("isDecimal(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzLiteralTests(f *testing.F) {
	for _, s := range literalSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isInt(s), intPattern.MatchString(s); got != want {
			t.Fatalf("isInt(%q) = %v, want %v", s, got, want)
		}
		if got, want := isDecimal(s), decimalPattern.MatchString(s); got != want {
			t.Fatalf("isDecimal(%q) = %v, want %v", s, got, want)
		}
	})
}
