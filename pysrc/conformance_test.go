package pysrc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// listJSON is what `lcp list --json --file F` prints for one file: its
// tools, the first of each name kept.
func listJSON(t *testing.T, name string, src []byte) []json.RawMessage {
	t.Helper()
	f, err := ReadFile(name, src)
	if err != nil {
		if !errors.Is(err, ErrNotUTF8) {
			t.Fatalf("ReadFile(%s): unexpected error %v", name, err)
		}
		return nil
	}
	seen := map[string]bool{}
	var out []json.RawMessage
	for _, tool := range f.Tools {
		if seen[tool.Name] {
			continue
		}
		seen[tool.Name] = true
		b, err := tool.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("%s: invalid JSON for %s: %s", name, tool.Name, b)
		}
		out = append(out, b)
	}
	return out
}

// jsonTokens flattens a JSON text to its token stream: key order, strings
// and the literal text of numbers are all kept, so equal streams mean
// equal documents under the conformance README's rules.
func jsonTokens(b []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var toks []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return toks, nil
		}
		if err != nil {
			return nil, err
		}
		switch v := tok.(type) {
		case json.Delim:
			toks = append(toks, v.String())
		case string:
			toks = append(toks, fmt.Sprintf("s%q", v))
		case json.Number:
			toks = append(toks, "n"+v.String())
		case bool:
			toks = append(toks, fmt.Sprint(v))
		case nil:
			toks = append(toks, "null")
		}
	}
}

// compareTool compares one tool object with its expectation; for a
// fallback tool only the name and the mark are compared.
func compareTool(want, got []byte) error {
	var w, g map[string]any
	if err := json.Unmarshal(want, &w); err != nil {
		return err
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return err
	}
	if w["_parsed_via_regex_fallback"] == true {
		if g["name"] != w["name"] || g["_parsed_via_regex_fallback"] != true {
			return fmt.Errorf("fallback tool mismatch: want name %v marked, got %s", w["name"], got)
		}
		return nil
	}
	wt, err := jsonTokens(want)
	if err != nil {
		return err
	}
	gt, err := jsonTokens(got)
	if err != nil {
		return err
	}
	if strings.Join(wt, " ") != strings.Join(gt, " ") {
		return fmt.Errorf("mismatch\n want %s\n  got %s", want, got)
	}
	return nil
}

func TestConformanceReader(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "conformance", "adversarial.expected.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c struct {
			File  string            `json:"file"`
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(c.File), ".py"), func(t *testing.T) {
			path := filepath.Join("testdata", "conformance", filepath.FromSlash(c.File))
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := listJSON(t, filepath.Base(path), src)
			if len(got) != len(c.Tools) {
				var names []string
				for _, g := range got {
					var m map[string]any
					json.Unmarshal(g, &m)
					names = append(names, fmt.Sprint(m["name"]))
				}
				t.Fatalf("got %d tools %v, want %d", len(got), names, len(c.Tools))
			}
			for i := range got {
				if err := compareTool(c.Tools[i], got[i]); err != nil {
					t.Errorf("tool %d: %v", i, err)
				}
			}
		})
	}
	if n < 60 {
		t.Fatalf("only %d conformance cases read", n)
	}
}
