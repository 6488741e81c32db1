package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lcptools/lcp/tool"
)

// TestWriteJSONArray checks that the streaming writer of lcp list --json
// writes what writeJSON writes.
func TestWriteJSONArray(t *testing.T) {
	array := func(w *bytes.Buffer, items []json.RawMessage) error {
		return writeJSONArray(w, len(items), func(i int) json.RawMessage { return items[i] })
	}
	big := make([]json.RawMessage, 3000) // more than one buffer's worth
	for i := range big {
		big[i] = json.RawMessage(`{"name":"tool_` + strings.Repeat("x", i%50) + `","input_schema":{"type":"object","properties":{"a":{"type":"string","default":"<&>\u2028"}},"required":[]}}`)
	}
	tests := map[string][]json.RawMessage{
		"empty":      {},
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
			if err := array(&got, items); err != nil {
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
	err := writeJSONArray(&out, len(items), func(i int) json.RawMessage { return items[i] })
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

func TestWriteSpecs(t *testing.T) {
	infos := []tool.Info{
		{Name: "tool_a", Description: "Say \"hi\" <b>.", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`)},
		{Name: "tool_b", Description: "No schema.", ParsedViaRegexFallback: true},
		{Name: "tool_c", Description: "é\u2028", InputSchema: json.RawMessage(`{ "type" : "object" }`)},
	}
	for _, f := range []tool.Format{tool.FormatLCP, tool.FormatOpenAI, tool.FormatAnthropic, tool.FormatMCP} {
		for _, infos := range [][]tool.Info{infos, nil} {
			specs := make([]json.RawMessage, len(infos))
			for i := range infos {
				specs[i] = infos[i].Spec(f)
			}
			var want, got bytes.Buffer
			if err := writeJSON(&want, specs); err != nil {
				t.Fatal(err)
			}
			if err := writeSpecs(&got, infos, f); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%s, %d tools: mismatch\n got %s\nwant %s", f, len(infos), got.String(), want.String())
			}
		}
	}
}
