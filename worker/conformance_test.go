package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
)

// The conformance cases of SPEC.md §7 run end to end through the binding in
// its own package. Here they run through the pool with a minimal stand-in for
// the binding's steps 1-4 and 9 (lookup by a regex, hidden-name removal, the
// normalizer), to prove that the worker's raw replies carry everything the
// binding needs. Cases that depend on schema defaults or coercion are the
// binding's alone and are skipped; a few calls get the arguments the binding
// would send.

var bindingOnly = map[string]string{
	"coercion":             "coercion needs the binding's schema",
	"amb_coercion_grammar": "coercion needs the binding's schema",
	"defaults_filling":     "schema defaults are filled by the binding",
}

// preparedArgs are the arguments the binding sends after coercion.
var preparedArgs = map[string]map[int]string{
	"async_tools":    {0: `{"n": 4}`},
	"sibling_import": {1: `{"n": 5}`},
}

var hiddenNames = []string{"tool_context", "lollms_client_instance", "discussion_instance", "user_interaction_handler",
	"progress_handler", "log_handler", "args", "kwargs"}

type execCase struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Expect json.RawMessage `json:"expect"`
}

var toolDef = regexp.MustCompile(`(?m)^\s*(?:async\s+)?def\s+(tool_\w+)\s*\(`)

// discoverForTest maps tool names to libraries: *.py in the folder and in
// its sub-directories, first definition wins.
func discoverForTest(t *testing.T, dir string) map[string]Library {
	t.Helper()
	var files []string
	top, _ := filepath.Glob(filepath.Join(dir, "*.py"))
	files = append(files, top...)
	subs, _ := filepath.Glob(filepath.Join(dir, "*", "*.py"))
	files = append(files, subs...)
	out := make(map[string]Library)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		abs, _ := filepath.Abs(f)
		lib := Library{Path: abs, Stem: strings.TrimSuffix(filepath.Base(f), ".py")}
		for _, m := range toolDef.FindAllStringSubmatch(string(src), -1) {
			if _, dup := out[m[1]]; !dup && !strings.HasSuffix(m[1], "_prompt") {
				out[m[1]] = lib
			}
		}
	}
	return out
}

func TestConformanceExec(t *testing.T) {
	requirePython(t)
	// The cases live once in the tree, beside the binding that runs them end
	// to end (copied from shared/conformance/exec).
	root := filepath.Join("..", "binding", "testdata", "exec")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		name := d.Name()
		t.Run(name, func(t *testing.T) {
			if why, ok := bindingOnly[name]; ok {
				t.Skip(why)
			}
			t.Parallel()
			dir := filepath.Join(root, name)
			tools := discoverForTest(t, dir)
			configs := map[string]json.RawMessage{}
			if b, err := os.ReadFile(filepath.Join(dir, "host_config.json")); err == nil {
				if err := json.Unmarshal(b, &configs); err != nil {
					t.Fatal(err)
				}
			}
			p, _ := testPool(t, nil)
			ws := t.TempDir()
			for i, c := range readCases(t, filepath.Join(dir, "cases.jsonl")) {
				var expect map[string]any
				decodeNumbers(t, c.Expect, &expect)
				lib, ok := tools[c.Tool]
				if !ok {
					if expect["status_code"] != json.Number("404") {
						t.Fatalf("case %d: tool %q not found but expected %v", i, c.Tool, expect["status_code"])
					}
					continue // lookup is the binding's
				}
				args := c.Args
				if a, ok := preparedArgs[name][i]; ok {
					args = json.RawMessage(a)
				}
				args = withoutHidden(t, args)
				req := &Request{CallID: fmt.Sprint(i), Workspace: ws, Library: lib, Function: c.Tool,
					Args: args, Config: configs[lib.Stem]}
				t0 := time.Now()
				r, err := p.Call(context.Background(), req, nil)
				t.Logf("call %s %v", c.Tool, time.Since(t0))
				if err != nil {
					t.Fatalf("case %d (%s): %v", i, c.Tool, err)
				}
				got := resultFor(t, c.Tool, lib.Stem, r)
				compareResult(t, fmt.Sprintf("case %d (%s %s)", i, c.Tool, c.Args), expect, got)
			}
		})
	}
}

func readCases(t *testing.T, path string) []execCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []execCase
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c execCase
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, c)
	}
	return out
}

func decodeNumbers(t testing.TB, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

func withoutHidden(t *testing.T, args json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		t.Fatal(err)
	}
	for _, h := range hiddenNames {
		delete(m, h)
	}
	// Keep the order of the remaining keys as sent.
	var buf bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.Token()
	buf.WriteByte('{')
	first := true
	for dec.More() {
		tok, _ := dec.Token()
		var raw json.RawMessage
		dec.Decode(&raw)
		k := tok.(string)
		if _, ok := m[k]; !ok {
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(raw)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// resultFor turns a reply into the §7 result object, as the binding does.
func resultFor(t *testing.T, tool, stem string, r *Reply) map[string]any {
	t.Helper()
	fail := func(msg, tb string) map[string]any {
		m := map[string]any{"success": false, "status_code": json.Number("500"), "error": msg, "output": msg}
		if tb != "" {
			m["traceback"] = tb
		}
		return m
	}
	switch {
	case r.LoadError != nil:
		return fail(fmt.Sprintf("Error loading tool library '%s': %s: %s", stem, r.LoadError.Type, r.LoadError.Message), r.LoadError.Traceback)
	case r.Exception != nil:
		return fail(fmt.Sprintf("Error executing '%s': %s: %s", tool, r.Exception.Type, r.Exception.Message), r.Exception.Traceback)
	case r.NotModuleLevel:
		return fail(fmt.Sprintf("Tool function '%s' is not defined at module level of '%s'.", tool, stem), "")
	}
	var v any
	decodeNumbers(t, r.Value, &v)
	res := normalizeForTest(v)
	if r.Converted != nil {
		var notes any
		decodeNumbers(t, r.Converted, &notes)
		res["_converted"] = notes
	}
	return res
}

var metaKeys = map[string]bool{"success": true, "status": true, "status_code": true, "error": true,
	"traceback": true, "return_code": true, "prompt_injection": true}

// normalizeForTest is SPEC.md §7 step 9.
func normalizeForTest(v any) map[string]any {
	d, ok := v.(map[string]any)
	if !ok {
		return map[string]any{"success": true, "status_code": json.Number("200"), "output": v}
	}
	out := make(map[string]any, len(d)+3)
	for k, x := range d {
		out[k] = x
	}
	rc, hasRC := d["return_code"]
	rcFail := hasRC && rc != nil && !isZeroNumber(rc)
	st, _ := d["status"].(string)
	stFail := false
	switch strings.ToLower(strings.TrimFunc(st, pyIsSpace)) {
	case "error", "failure", "failed":
		stFail = true
	}
	failed := d["success"] == false || stFail || rcFail || (truthy(d["error"]) && d["success"] != true)
	if o, ok := d["output"]; ok {
		out["output"] = o
	} else {
		found := false
		for _, k := range []string{"result", "data", "response", "papers", "content", "text"} {
			if x, ok := d[k]; ok {
				out["output"], found = x, true
				break
			}
		}
		if !found {
			rest := map[string]any{}
			for k, x := range d {
				if !metaKeys[k] {
					rest[k] = x
				}
			}
			out["output"] = rest
		}
	}
	out["success"] = !failed
	out["status_code"] = json.Number("200")
	if failed {
		out["status_code"] = json.Number("500")
		switch e := d["error"]; {
		case truthy(e):
			if s, ok := e.(string); ok {
				out["error"] = s
			} else {
				b, _ := json.Marshal(e)
				out["error"] = string(b)
			}
		case rcFail:
			if s, ok := rc.(string); ok {
				out["error"] = "Tool failed with return_code " + s
			} else {
				b, _ := json.Marshal(rc)
				out["error"] = "Tool failed with return_code " + string(b)
			}
		case stFail:
			out["error"] = "Tool reported status '" + st + "'"
		default:
			out["error"] = "Tool reported failure"
		}
	}
	return out
}

func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

func isZeroNumber(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	f, err := n.Float64()
	return err == nil && f == 0
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// compareResult applies conformance/README.md's comparison rules.
func compareResult(t *testing.T, what string, want, got map[string]any) {
	t.Helper()
	for k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("%s: key %q missing; got %v", what, k, got)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected key %q = %v", what, k, got[k])
		}
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			continue
		}
		switch k {
		case "traceback", "_converted":
			if isEmpty(g) {
				t.Errorf("%s: %s is empty", what, k)
			}
			continue
		case "error", "output":
			ws, wok := w.(string)
			gs, gok := g.(string)
			if wok && gok {
				switch {
				case strings.HasPrefix(ws, "Error loading tool library"):
					part := ws[strings.Index(ws, "': ")+3:]
					if !strings.Contains(gs, part) {
						t.Errorf("%s: %s = %q, want it to contain %q", what, k, gs, part)
					}
				case strings.Contains(ws, "is not defined at module level"):
					if gs == "" {
						t.Errorf("%s: %s is empty", what, k)
					}
				case k == "error" && jsonText(ws) && jsonText(gs):
					if !jsonEqual([]byte(ws), []byte(gs)) {
						t.Errorf("%s: error = %s, want %s", what, gs, ws)
					}
				case gs != ws:
					t.Errorf("%s: %s = %q, want %q", what, k, gs, ws)
				}
				continue
			}
		}
		if !valueEqual(w, g) {
			t.Errorf("%s: %s = %#v, want %#v", what, k, g, w)
		}
	}
}

func jsonText(s string) bool {
	return (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")) && json.Valid([]byte(s))
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	}
	return false
}

// valueEqual compares JSON values, numbers by value, booleans apart.
func valueEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		return e1 == nil && e2 == nil && fx == fy
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !valueEqual(v, y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valueEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && strings.ToValidUTF8(x, "\uFFFD") == strings.ToValidUTF8(y, "\uFFFD")
	default:
		return a == b
	}
}

var _ = bufio.NewReader
