package term

import (
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzFormFields reads form schemas as MCP servers send them: whatever
// they are, reading never panics, a multi-select has options, and every
// option shows a title.
func FuzzFormFields(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"integer","default":3}},"required":["a"]}`,
		`{"properties":{"c":{"type":"string","oneOf":[{"const":"x","title":"X"},{"title":"no const"}]}}}`,
		`{"properties":{"m":{"type":"array","items":{"anyOf":[{"const":1}]},"minItems":1,"maxItems":2,"default":[1]}}}`,
		`{"properties":{"e":{"enum":["a","b"],"enumNames":["A"]}}}`,
		`{"properties":{"t":{"type":["string","null"]}}}`,
		`{"properties":[]}`, `[]`, `{"properties":{"x":{"items":5}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fields, err := formFields(json.RawMessage(data))
		if err != nil {
			return
		}
		for _, fl := range fields {
			if fl.multi && len(fl.options) == 0 {
				t.Fatalf("field %q is a multi-select without options", fl.name)
			}
			for _, o := range fl.options {
				if o.title == "" && fmt.Sprint(o.value) != "" {
					t.Fatalf("field %q shows an option of value %v without a title", fl.name, o.value)
				}
			}
		}
	})
}
