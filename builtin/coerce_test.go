package builtin

import (
	"encoding/json"
	"testing"
)

func TestCoerce(t *testing.T) {
	props := map[string]string{"i": "integer", "n": "number", "b": "boolean", "s": "string"}
	tests := []struct{ in, want string }{
		{`{"i":"50"}`, `{"i":50}`},
		{`{"i":"+7"}`, `{"i":7}`},
		{`{"i":5.0}`, `{"i":5}`},
		{`{"i":"5.5"}`, `{"i":"5.5"}`},
		{`{"i":1e2}`, `{"i":100}`},
		{`{"n":"2.5"}`, `{"n":2.5}`},
		{`{"n":"-.25"}`, `{"n":-0.25}`},
		{`{"n":"1e3"}`, `{"n":1e3}`},
		{`{"n":"3"}`, `{"n":3}`},
		{`{"b":"TRUE"}`, `{"b":true}`},
		{`{"b":"False"}`, `{"b":false}`},
		{`{"b":"yes"}`, `{"b":"yes"}`},
		{`{"s":"5"}`, `{"s":"5"}`},
		{`not json`, `not json`},
	}
	for _, tt := range tests {
		if got := string(coerce(props, json.RawMessage(tt.in))); got != tt.want {
			t.Errorf("coerce(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func FuzzCoerce(f *testing.F) {
	for _, s := range []string{`{"i":"50"}`, `{"n":"-.5e3"}`, `{"b":"true"}`, `{"i":1e400}`, `[1]`, `{"i":"99999999999999999999999"}`} {
		f.Add(s)
	}
	props := map[string]string{"i": "integer", "n": "number", "b": "boolean"}
	f.Fuzz(func(t *testing.T, in string) {
		out := coerce(props, json.RawMessage(in))
		if json.Valid([]byte(in)) && !json.Valid(out) {
			t.Fatalf("coerce(%s) = %s, not JSON", in, out)
		}
	})
}
