package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/internal/jsontest"
)

// run runs the lcp command with the given stdin and returns what it
// printed and its exit code.
func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Args: args}
	code = Main(env)
	return out.String(), errb.String(), code
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

// TestListReaderConformance runs `lcp list --json --file F` on every
// reader conformance file and compares with the expected tools.
func TestListReaderConformance(t *testing.T) {
	dir := "../../pysrc/testdata/conformance"
	f, err := os.Open(filepath.Join(dir, "adversarial.expected.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		var c struct {
			File  string            `json:"file"`
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		out, errOut, code := run(t, "", "list", "--json", "--file", filepath.Join(dir, c.File))
		if code != 0 {
			t.Errorf("%s: exit %d: %s", c.File, code, errOut)
			continue
		}
		var got []json.RawMessage
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Errorf("%s: stdout is not a JSON array: %v\n%s", c.File, err, out)
			continue
		}
		compareTools(t, c.File, got, c.Tools)
	}
	if n < 50 {
		t.Fatalf("only %d cases", n)
	}
}

func compareTools(t *testing.T, name string, got, want []json.RawMessage) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d tools, want %d", name, len(got), len(want))
		return
	}
	for i := range want {
		var w, g struct {
			Name     string `json:"name"`
			Fallback bool   `json:"_parsed_via_regex_fallback"`
		}
		_ = json.Unmarshal(want[i], &w)
		_ = json.Unmarshal(got[i], &g)
		if w.Fallback {
			if g != w {
				t.Errorf("%s tool %d: got %+v, want %+v", name, i, g, w)
			}
			continue
		}
		gc, _ := jsontest.Canonical(got[i])
		wc, _ := jsontest.Canonical(want[i])
		if gc != wc {
			t.Errorf("%s tool %d:\n got  %s\n want %s", name, i, gc, wc)
		}
	}
}

// lcp list --format F prints JSON in that format, --json or not.
func TestListFormatWithoutJSON(t *testing.T) {
	for format, key := range map[string]string{"openai": `"type": "function"`, "anthropic": `"input_schema"`, "mcp": `"inputSchema"`, "lcp": `"input_schema"`} {
		out, errOut, code := run(t, "", "list", "--format", format)
		var specs []map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &specs) != nil || len(specs) == 0 || !strings.Contains(out, key) {
			t.Errorf("list --format %s: exit %d, %q, stdout %.200s", format, code, errOut, out)
		}
	}
	if out, _, code := run(t, "", "list"); code != 0 || !strings.HasPrefix(out, "TOOL") {
		t.Errorf("list without --format prints a table: %.100s", out)
	}
}
