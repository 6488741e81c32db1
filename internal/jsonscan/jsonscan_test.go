package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// walk returns the members WalkObject finds, the last of duplicates
// winning, as decoding into a map gives them.
func walk(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	m := map[string]json.RawMessage{}
	err := WalkObject(b, func(k, v []byte) bool {
		key, err := UnquoteKey(k)
		if err != nil {
			t.Fatalf("%q: key %q: %v", b, k, err)
		}
		m[key] = v
		return true
	})
	if err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return m
}

var seeds = []string{
	`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}], "a": "x\"y" } `, `{"\u00e9\n": null, "é": true}`,
	"{\"\xff\xfe\": 1}", `{"\ud800": -1.5e3}`, `{"a": {"b": {"c": [[], {}]}}}`, `[1, 2]`, `"s"`,
}

func FuzzWalkObject(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		if !json.Valid(b) {
			return
		}
		var want map[string]json.RawMessage
		if json.Unmarshal(b, &want) != nil || bytes.TrimSpace(b)[0] != '{' {
			if err := WalkObject(b, func(k, v []byte) bool { return true }); err != ErrNotObject {
				t.Fatalf("%q: %v, want ErrNotObject", b, err)
			}
			return
		}
		got := walk(t, b)
		if len(got) != len(want) {
			t.Fatalf("%q: %d members, want %d", b, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("%q: %q = %s, want %s", b, k, got[k], v)
			}
		}
	})
}
