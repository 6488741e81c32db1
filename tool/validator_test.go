package tool

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestValidator(t *testing.T) {
	tests := []struct {
		schema, value string
		want          []string // "pointer: message"
	}{
		{`{"type":"integer"}`, `1.0`, nil},
		{`{"type":"integer"}`, `1.5`, []string{": got number, want integer"}},
		{`{"type":["string","null"]}`, `3`, []string{": got integer, want string or null"}},
		{`{"type":"object","properties":{"n":{"type":"integer"},"mode":{"enum":["fast","slow"]},"tags":{"type":"array","items":{"type":"string"}}},"required":["n","mode","x"]}`,
			`{"n":"x","mode":"warp","tags":["a",1]}`,
			[]string{`: missing property "x"`, `/mode: value must be one of "fast", "slow"`, `/n: got string, want integer`, `/tags/1: got integer, want string`}},
		{`{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"b":2,"c":3}`, []string{`: additional properties "b", "c" not allowed`}},
		{`{"$ref":"#/$defs/p","$defs":{"p":{"type":"integer","minimum":0,"maximum":10}}}`, `11`, []string{": must be <= 10 but found 11"}},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s","type":"integer"}`, `"x"`, nil},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`, `["a",1]`, []string{"/1: no value is allowed here"}},
		{`{"prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`, `["a",1,"b"]`, []string{"/2: got string, want integer"}},
		{`{"anyOf":[{"type":"integer"},{"type":"null"}]}`, `"x"`, []string{": got string, want integer or null"}},
		{`{"oneOf":[{"type":"integer"},{"type":"number"}]}`, `1`, []string{": value matches 2 of the oneOf schemas, want exactly one"}},
		{`{"type":"string","minLength":2,"maxLength":3,"pattern":"^a"}`, `"bcde"`, []string{": length must be <= 3, but got 4", `: "bcde" does not match pattern "^a"`}},
		{`{"type":"integer","multipleOf":3,"exclusiveMinimum":0}`, `0`, []string{": must be > 0 but found 0"}},
		{`{"multipleOf":0.1}`, `0.35`, []string{": 0.35 is not a multiple of 0.1"}},
		{`{"const":{"a":[1,2]}}`, `{"a":[1,2.0]}`, nil},
		{`{"uniqueItems":true,"minItems":1}`, `[1,1.0]`, []string{": items at 0 and 1 are equal"}},
		{`{"if":{"properties":{"k":{"const":"a"}}},"then":{"required":["a"]},"else":{"required":["b"]}}`, `{"k":"a"}`, []string{`: missing property "a"`}},
		{`{"dependentRequired":{"a":["b"]},"propertyNames":{"maxLength":1}}`, `{"a":1,"cc":2}`, []string{`: property "a" requires property "b"`, `: property name "cc" is not allowed: length must be <= 1, but got 2`}},
		{`{"$defs":{"n":{"$anchor":"node","properties":{"next":{"$ref":"#node"}}}},"$ref":"#/$defs/n"}`, `{"next":{"next":{"next":1}}}`, nil},
		{`{"contains":{"type":"string"},"maxContains":1}`, `[1,"a","b"]`, []string{": 2 items match contains, want at most 1"}},
		{`{"not":{"type":"null"}}`, `null`, []string{": value must not match the schema under not"}},
		{`{"type":"integer","maximum":12345678901234567890}`, `12345678901234567891`, []string{": must be <= 12345678901234567890 but found 12345678901234567891"}},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","minimum":1,"exclusiveMinimum":true}`, `1`, []string{": must be > 1 but found 1"}},
		{`false`, `1`, []string{": no value is allowed here"}},
	}
	for _, tt := range tests {
		s, err := CompileSchema(json.RawMessage(tt.schema))
		if err != nil {
			t.Errorf("%s: %v", tt.schema, err)
			continue
		}
		v, err := DecodeJSON([]byte(tt.value))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range s.Validate(v) {
			got = append(got, x.Pointer+": "+x.Message)
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
			t.Errorf("%s on %s:\n got %q\nwant %q", tt.schema, tt.value, got, tt.want)
		}
	}
}

func TestCompileSchemaRefuses(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"$ref":"https://example.com/s.json"}`, "external references are not allowed"},
		{`{"$ref":"other.json#/x"}`, "external references are not allowed"},
		{`{"$ref":"#/$defs/missing"}`, `nothing at "$defs"`},
		{`{"$ref":"#nope"}`, "no such anchor"},
		{`{"type":"text"}`, `unknown type "text"`},
		{`{"pattern":"("}`, "pattern"},
		{`{"required":"a"}`, "required must be a list of strings"},
		{`{"properties":{"a":3}}`, `schema at "/properties/a" is integer`},
		{`[1]`, "want an object or a boolean"},
		{`{"a":`, "schema is not JSON"},
	}
	for _, tt := range tests {
		_, err := CompileSchema(json.RawMessage(tt.schema))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error with %q", tt.schema, err, tt.want)
		}
	}
}

func TestSelfReferenceTerminates(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`))
	if err != nil {
		t.Fatal(err)
	}
	if vs := s.ValidateJSON([]byte(`1`)); len(vs) == 0 || !strings.Contains(vs[0].Message, "nests deeper") {
		t.Errorf("got %v", vs)
	}
}

func FuzzValidator(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`, `{"anyOf":[{"$ref":"#/$defs/x"}],"$defs":{"x":{"items":{"minimum":1}}}}`, `true`} {
		f.Add([]byte(s), []byte(`{"a":[1,"x",{"b":null}]}`))
	}
	f.Fuzz(func(t *testing.T, schema, value []byte) {
		s, err := CompileSchema(schema)
		if err != nil {
			return
		}
		_ = s.ValidateJSON(value)
	})
}
