package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestWriteJSONArray checks that the streaming writer of lcp list --json
// writes what writeJSON writes.
func TestWriteJSONArray(t *testing.T) {
	big := make([]json.RawMessage, 3000) // more than one buffer's worth
	for i := range big {
		big[i] = json.RawMessage(`{"name":"tool_` + strings.Repeat("x", i%50) + `","input_schema":{"type":"object","properties":{"a":{"type":"string","default":"<&>\u2028"}},"required":[]}}`)
	}
	tests := map[string][]json.RawMessage{
		"empty":      {},
		"nil":        nil,
		"nil item":   {nil, json.RawMessage(`1`)},
		"spaces":     {json.RawMessage(` { "a" : [ 1 , { } , [ ] ] , "b" : "x y" } `)},
		"scalars":    {json.RawMessage(`"s"`), json.RawMessage(`-1.5e3`), json.RawMessage(`null`)},
		"many specs": big,
	}
	for name, items := range tests {
		t.Run(name, func(t *testing.T) {
			var want, got bytes.Buffer
			if err := writeJSON(&want, items); err != nil {
				t.Fatal(err)
			}
			if err := writeJSONArray(&got, items); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("mismatch:\n got %q\nwant %q", trim(got.String()), trim(want.String()))
			}
		})
	}
}

func TestWriteJSONArrayInvalid(t *testing.T) {
	items := []json.RawMessage{json.RawMessage(`{}`), json.RawMessage(`{"a":}`)}
	if err := writeJSON(&bytes.Buffer{}, items); err == nil {
		t.Fatal("writeJSON accepts invalid JSON")
	}
	var out bytes.Buffer
	err := writeJSONArray(&out, items)
	if err == nil || !strings.Contains(err.Error(), "item 1") {
		t.Fatalf("err = %v, want an error naming item 1", err)
	}
}

func trim(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
