package tool

import (
	"bytes"
	"encoding/json"
	"testing"
)

var fastSchemas = []string{
	`{"type":"object","properties":{"a":{"type":"integer","description":"x"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`,
	`{"type":"object","properties":{"b":{"type":["null","array"],"items":{"type":"string"}},"c":{"type":["null","number"]},"d":{"type":"object","additionalProperties":{"type":"integer"}},"e":{"type":"integer","minimum":0,"maximum":255}},"required":["c","d","e"],"additionalProperties":false}`,
	`{"type":"object","properties":{"s":{"type":"string","default":"x"},"f":{"type":"boolean"}}}`,
	`{"type":"object"}`,
	`{"type":"array","items":{"type":"number","minimum":-1.5}}`,
	`{"type":"object","properties":{"n":{"type":"number","maximum":1e300}},"required":["n"]}`,
}

var fastValues = []string{
	`{"a":1,"b":2}`, `{"a":1.0,"b":2}`, `{"a":1}`, `{"a":1,"b":2,"c":3}`, `{"a":"1","b":2}`,
	`{"c":null,"d":{},"e":255}`, `{"c":1.5,"d":{"x":1},"e":256}`, `{"c":1,"d":{"x":"y"},"e":0,"b":["a"]}`,
	`{"b":null,"c":null,"d":{},"e":-0}`, `{"s":"x","f":true}`, `{"s":1}`, `[]`, `[1,-1.5,-2]`, `{"n":1e400}`,
	`{"\u0061":1,"b":2}`, `{"a":1,"a":"x","b":2}`, `{"e":255.0000000000000000001,"c":1,"d":{}}`, `null`, `"x"`, `{}`,
}

// TestFastSchemaAgreesWithValidator checks that the fast path never calls
// valid what the full validator rejects (and says how often it decides).
func TestFastSchemaAgreesWithValidator(t *testing.T) {
	decided := 0
	for _, sch := range fastSchemas {
		s, err := CompileSchema(json.RawMessage(sch))
		if err != nil {
			t.Fatal(err)
		}
		if s.fast == nil {
			t.Fatalf("schema not in the fast subset: %s", sch)
		}
		for _, v := range fastValues {
			fast := s.fast.valid([]byte(v))
			dv, _ := DecodeJSON([]byte(v))
			full := len(s.Validate(dv)) == 0
			if fast && !full {
				t.Errorf("schema %s: fast path accepts %s, the validator rejects it", sch, v)
			}
			if fast == full {
				decided++
			}
			if got := len(s.ValidateJSON([]byte(v))) == 0; got != full {
				t.Errorf("schema %s value %s: ValidateJSON says %v, the validator %v", sch, v, got, full)
			}
		}
	}
	t.Logf("fast path agreed on %d of %d cases", decided, len(fastSchemas)*len(fastValues))
}

func TestFastSchemaSubset(t *testing.T) {
	for _, sch := range []string{
		`{"type":"object","properties":{"a":{"type":"string","pattern":"^x"}}}`,
		`{"$ref":"#/$defs/x","$defs":{"x":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"enum":[1,2]}}}`,
		`{"type":"integer","minimum":12345678901234567890}`,
	} {
		s, err := CompileSchema(json.RawMessage(sch))
		if err != nil {
			t.Fatal(err)
		}
		if s.fast != nil {
			t.Errorf("schema %s should not take the fast path", sch)
		}
	}
}

func FuzzFastSchema(f *testing.F) {
	for i := range fastSchemas {
		for _, v := range fastValues {
			f.Add(uint8(i), []byte(v))
		}
	}
	compiled := make([]*Schema, len(fastSchemas))
	for i, sch := range fastSchemas {
		s, err := CompileSchema(json.RawMessage(sch))
		if err != nil {
			f.Fatal(err)
		}
		compiled[i] = s
	}
	f.Fuzz(func(t *testing.T, which uint8, v []byte) {
		s := compiled[int(which)%len(compiled)]
		if !json.Valid(v) {
			if len(s.ValidateJSON(v)) == 0 {
				t.Fatalf("invalid JSON %q accepted", v)
			}
			return
		}
		dv, err := DecodeJSON(v)
		if err != nil {
			return
		}
		full := len(s.Validate(dv)) == 0
		if s.fast.valid(trim(v)) && !full {
			t.Fatalf("fast path accepts %s, the validator rejects it", v)
		}
	})
}

func trim(b []byte) []byte { return bytes.TrimSpace(b) }
