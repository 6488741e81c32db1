package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/lcptools/lcp/tool"
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
		"nil item":   {nil, json.RawMessage(`1`)},
		"spaces":     {json.RawMessage(` { "a" : [ 1 , { } , [ ] ] , "b" : "x y" } `)},
		"scalars":    {json.RawMessage(`"s"`), json.RawMessage(`-1.5e3`), json.RawMessage(`null`)},
		"many specs": big,
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for name, items := range tests {
		for _, procs := range []int{1, 4} {
			runtime.GOMAXPROCS(procs)
			t.Run(fmt.Sprintf("%s/GOMAXPROCS=%d", name, procs), func(t *testing.T) {
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
}

func TestWriteJSONArrayInvalid(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		items := make([]json.RawMessage, 2000)
		for i := range items {
			items[i] = json.RawMessage(`{"a":[1,2]}`)
		}
		items[1000] = json.RawMessage(`{"a":}`)
		if err := writeJSON(&bytes.Buffer{}, items); err == nil {
			t.Fatal("writeJSON accepts invalid JSON")
		}
		var out bytes.Buffer
		err := writeJSONArray(&out, items)
		if err == nil || !strings.Contains(err.Error(), "item 1000") {
			t.Fatalf("GOMAXPROCS=%d: err = %v, want an error naming item 1000", procs, err)
		}
		if n := strings.Count(out.String(), `"a"`); n != 1000 || strings.HasSuffix(out.String(), "  ") {
			t.Errorf("GOMAXPROCS=%d: %d items written, want the 1000 before the bad one, complete", procs, n)
		}
	}
}

// TestWriteJSONArrayWriteError: a failing writer stops the writing with
// its error.
func TestWriteJSONArrayWriteError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	items := make([]json.RawMessage, 5000)
	for i := range items {
		items[i] = json.RawMessage(`{"name":"tool_x","input_schema":{"type":"object"}}`)
	}
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		w := &failingWriter{after: 100 << 10}
		if err := writeJSONArray(w, items); !errors.Is(err, errFull) {
			t.Errorf("GOMAXPROCS=%d: err = %v, want %v", procs, err, errFull)
		}
	}
}

var errFull = errors.New("disk full")

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after -= len(p); w.after < 0 {
		return 0, errFull
	}
	return len(p), nil
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
	many := make([]tool.Info, 1000) // made on every CPU
	for i := range many {
		many[i] = infos[i%len(infos)]
		many[i].Name = fmt.Sprintf("tool_%d", i)
	}
	for _, f := range []tool.Format{tool.FormatLCP, tool.FormatOpenAI, tool.FormatAnthropic, tool.FormatMCP} {
		for _, infos := range [][]tool.Info{infos, nil, many} {
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
