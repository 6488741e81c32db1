package binding

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"testing"

	"github.com/lcptools/lcp/pysrc"
	"github.com/lcptools/lcp/tool"
)

// referenceArgs is the arguments preparation as it was first written:
// decoded into a map, re-encoded with sorted keys. prepareArgs walks the
// object instead and must give the same bytes and the same errors.
func referenceArgs(b *Binding, e *entry, raw json.RawMessage) (json.RawMessage, error) {
	name := e.info.Name
	args := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && string(t) != "null" {
		if t[0] != '{' {
			return nil, &tool.InvalidArgumentsError{Tool: name, Message: "arguments must be a JSON object"}
		}
		if err := json.Unmarshal(t, &args); err != nil {
			return nil, &tool.InvalidArgumentsError{Tool: name, Message: "arguments are not valid JSON: " + err.Error()}
		}
		if args == nil {
			args = map[string]json.RawMessage{}
		}
	}
	for k := range args {
		if pysrc.IsHiddenParam(k) {
			delete(args, k)
		}
	}
	var filled []string
	for _, p := range e.src.Params {
		v, ok := args[p.Name]
		if !ok {
			switch {
			case p.Default != nil:
				v = p.Default
			case p.NoneIfOmitted:
				v = json.RawMessage("null")
			default:
				continue
			}
			filled = append(filled, p.Name)
		}
		if !b.opts.NoCoercion {
			v = tool.Coerce(p.Type, v)
		}
		args[p.Name] = v
	}
	sorted := func(m map[string]json.RawMessage) json.RawMessage {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var buf bytes.Buffer
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteByte(':')
			buf.Write(m[k])
		}
		buf.WriteByte('}')
		return buf.Bytes()
	}
	if e.schema != nil {
		given := map[string]json.RawMessage{}
		for k, v := range args {
			given[k] = v
		}
		for _, k := range filled {
			delete(given, k)
		}
		if vs := e.schema.ValidateValidJSON(sorted(given)); len(vs) > 0 {
			return nil, &tool.InvalidArgumentsError{Tool: name, Message: "arguments do not match the input schema", Violations: vs}
		}
	}
	return sorted(args), nil
}

// argsEntries are tools of every kind of parameter: typed, with and
// without defaults, None if omitted, and one whose arguments are
// validated against its schema.
func argsEntries(t testing.TB) []*entry {
	params := []pysrc.Param{
		{Name: "n", Type: "integer", Default: json.RawMessage(`3`)},
		{Name: "x", Type: "number"},
		{Name: "flag", Type: "boolean", Default: json.RawMessage(`false`)},
		{Name: "s", Type: "string", Default: json.RawMessage(`"a<b>"`)},
		{Name: "opt", Type: "string", NoneIfOmitted: true},
		{Name: "<k>", Type: "integer"},
	}
	schema, err := tool.CompileSchema(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"},"flag":{"type":"boolean"}},"required":["x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	plain := &entry{src: &pysrc.Tool{Name: "tool_p", Params: params}, info: tool.Info{Name: "tool_p"}}
	checked := &entry{src: &pysrc.Tool{Name: "tool_v", Params: params}, info: tool.Info{Name: "tool_v"}, schema: schema}
	none := &entry{src: &pysrc.Tool{Name: "tool_n"}, info: tool.Info{Name: "tool_n"}}
	return []*entry{plain, checked, none}
}

var argsSeeds = []string{
	``, `null`, ` {} `, `{"x": 1}`, `{"x": "2.5", "n": "7", "flag": "TRUE"}`, `{"n": 5.0, "x": 1e2}`,
	`{"x": 1, "x": 2}`, `{"\u0078": "3", "n": 1}`, `{"b": [1, {"c": 2}], "a": {"z": " y "}}`,
	`{"tool_context": {"a": 1}, "progress_handler": 1, "x": 0}`, `{"<k>": "4", "&": 1, "é": 2}`,
	"{\"\xff\": 1}", `{"\ud800": 1}`, `[1]`, `"x"`, `5`, `{"x": }`, `{"x": 1} {"y": 2}`, `{"x": 1`,
	`{"a":1,}`, `{"n": "99999999999999999999999"}`, `{"flag": "no", "x": "abc"}`, `{"x": null}`,
}

func TestPrepareArgsMatchesDecoding(t *testing.T) {
	for _, b := range []*Binding{{}, {opts: Options{NoCoercion: true}}} {
		for _, e := range argsEntries(t) {
			for _, in := range argsSeeds {
				checkArgs(t, b, e, []byte(in))
			}
		}
	}
}

func checkArgs(t *testing.T, b *Binding, e *entry, in []byte) {
	t.Helper()
	got, gotErr := b.prepareArgs(e, in)
	want, wantErr := referenceArgs(b, e, in)
	var g, w *tool.InvalidArgumentsError
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && (!errors.As(gotErr, &g) || !errors.As(wantErr, &w) || g.Message != w.Message || len(g.Violations) != len(w.Violations))) {
		t.Fatalf("%s %q: error %v, want %v", e.info.Name, in, gotErr, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s %q: %s, want %s", e.info.Name, in, got, want)
	}
}

func FuzzPrepareArgs(f *testing.F) {
	for _, s := range argsSeeds {
		f.Add(s, false)
	}
	entries := argsEntries(f)
	f.Fuzz(func(t *testing.T, in string, noCoercion bool) {
		b := &Binding{opts: Options{NoCoercion: noCoercion}}
		for _, e := range entries {
			checkArgs(t, b, e, []byte(in))
		}
	})
}
