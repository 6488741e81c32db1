package pysrc

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestCleandoc(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"One line.", "One line."},
		{"  Lead.\n    body\n      deeper\n", "Lead.\nbody\n  deeper"},
		{"\n\n    Start late.\n    x\n\n", "Start late.\nx"},
		{"T.\n\tTabbed.\n\t\tTwice.", "T.\nTabbed.\n        Twice."},
		{"a\tb", "a       b"},
		{"S.\n      \n    P2.", "S.\n  \nP2."},
		{"\u3000Wide.\n\u00a0 x", "Wide.\nx"},
		{"x\r\ty", "x\r        y"},
	}
	for _, tt := range tests {
		if got := cleandoc(tt.in); got != tt.want {
			t.Errorf("cleandoc(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPyStrings(t *testing.T) {
	if got := slices.Collect(pyLines("a\nb\r\nc\rd\ve\ff\x1cg\u0085h\u2028i\u2029j\n")); strings.Join(got, "|") != "a|b|c|d|e|f|g|h|i|j" {
		t.Errorf("pyLines = %q", got)
	}
	if got := slices.Collect(pyLines("a\n\nb")); len(got) != 3 || got[1] != "" {
		t.Errorf("pyLines keeps empty lines: %q", got)
	}
	if got := pyStrip("\x1c\u3000 x \u00a0\u2028"); got != "x" {
		t.Errorf("pyStrip = %q", got)
	}
	if got := pyStrip("\u200bx"); got != "\u200bx" {
		t.Errorf("pyStrip strips ZWSP: %q", got)
	}
	for in, want := range map[string]string{"İnt": "i\u0307nt", "ΟΔΟΣ": "οδος", "ǅ": "ǆ", "ABC": "abc", "Σ": "σ"} {
		if got := pyLower(in); got != want {
			t.Errorf("pyLower(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJSONType(t *testing.T) {
	for ann, want := range map[string]string{
		"int": "integer", "List[int]": "integer", "Point": "integer", "float": "number", "Number": "number",
		"bool": "boolean", "list": "array", "NDArray": "array", "dict": "object", "MyObject": "object",
		"str": "string", "bytes": "string", "'İnt'": "string", "None": "string", "Optional[float]": "number",
	} {
		if got := jsonType(ann); got != want {
			t.Errorf("jsonType(%q) = %s, want %s", ann, got, want)
		}
	}
}

func TestParamDocs(t *testing.T) {
	doc := "Summary.\n\nArgs:\n    a (int): first\n    b: second\n- c - dash\n1. d: numbered\n١٢. e: arabic digits bullet\nf\u2003: em space\n(g): not a param\nh:"
	got := paramDocs(doc)
	want := map[string]string{"a": "first", "b": "second", "c": "dash", "d": "numbered", "e": "arabic digits bullet", "f": "em space", "Args": ""}
	delete(want, "Args")
	for k, v := range want {
		if got[k] != v {
			t.Errorf("param %s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["g"]; ok {
		t.Error("(g) must not match")
	}
	if _, ok := got["h"]; ok {
		t.Error("h: with no text must not match")
	}
}

const sample = `"""Module doc."""
TOOL_LIBRARY_NAME = "Weather"
TOOL_LIBRARY_DESC = 'Forecasts.'
TOOL_LIBRARY_ICON = f"no"

def tool_forecast(city: str, days: int = 3, *, units="metric", tool_context=None, **kwargs):
    """Forecast for a city.

    Args:
        city: the city
    """

async def tool_alerts(region):
    pass

def tool_forecast_prompt():
    return "x"

def tool_sample_prompt():
    return "library prompt"

def tool_orphan_prompt():
    return "no tool"

class Helpers:
    def tool_method(self):
        """Not callable as a module attribute."""

if True:
    def tool_conditional(x=[1, 2.5, None]):
        """Defined at module level inside an if."""
`

func TestReadFile(t *testing.T) {
	f, err := ReadFile("tools/sample.py", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if f.SyntaxErrors != nil {
		t.Fatalf("syntax errors: %v", f.SyntaxErrors)
	}
	if want := (Library{Name: "Weather", Description: "Forecasts."}); f.Library != want {
		t.Errorf("Library = %+v, want %+v", f.Library, want)
	}
	var names []string
	for _, tool := range f.Tools {
		names = append(names, fmt.Sprintf("%s:%d:%v", tool.Name, tool.Line, tool.TopLevel))
	}
	if got := strings.Join(names, " "); got != "tool_forecast:6:true tool_alerts:13:true tool_method:26:false tool_conditional:30:true" {
		t.Errorf("tools = %s", got)
	}
	fc := f.Tools[0]
	if !fc.AcceptsKwargs || fc.Async || !reflect.DeepEqual(fc.Required, []string{"city"}) {
		t.Errorf("tool_forecast: kwargs %v async %v required %v", fc.AcceptsKwargs, fc.Async, fc.Required)
	}
	if !reflect.DeepEqual(fc.Declared, []string{"city", "days", "units", "tool_context", "**kwargs"}) {
		t.Errorf("Declared = %v", fc.Declared)
	}
	wantSchema := `{"type": "object", "properties": {"city": {"type": "string", "description": "the city"}, "days": {"type": "integer", "description": "Parameter 'days'", "default": 3}, "units": {"type": "string", "description": "Parameter 'units'", "default": "metric"}}, "required": ["city"]}`
	if got := string(fc.InputSchema()); got != wantSchema {
		t.Errorf("InputSchema:\n got %s\nwant %s", got, wantSchema)
	}
	if !f.Tools[1].Async {
		t.Error("tool_alerts must be async")
	}
	if got := string(f.Tools[3].Params[0].Default); got != "[1, 2.5, null]" {
		t.Errorf("default = %s", got)
	}
	if len(f.Prompts) != 3 || f.Prompts[0].Name != "tool_forecast_prompt" {
		t.Errorf("Prompts = %+v", f.Prompts)
	}
	kinds := map[DiagnosticKind][]string{}
	for _, d := range f.Diagnostics() {
		kinds[d.Kind] = append(kinds[d.Kind], d.Message)
	}
	if len(kinds[DiagNestedTool]) != 1 || !strings.Contains(kinds[DiagNestedTool][0], "tool_method") {
		t.Errorf("nested-tool diagnostics: %v", kinds[DiagNestedTool])
	}
	if len(kinds[DiagOrphanPrompt]) != 1 || !strings.Contains(kinds[DiagOrphanPrompt][0], "tool_orphan_prompt") {
		t.Errorf("orphan-prompt diagnostics: %v", kinds[DiagOrphanPrompt])
	}
	if len(kinds[DiagUndocumented]) != 4 || !strings.Contains(kinds[DiagUndocumented][0], "'days', 'units'") {
		t.Errorf("undocumented-parameter diagnostics: %v", kinds[DiagUndocumented])
	}
}

func TestReadFileFallback(t *testing.T) {
	src := "def tool_a(x: int, y=2):\n    \"\"\"Broken file.\n\n    x: the x\n    \"\"\"\n    return x +\n\ndef tool_b_prompt():\n    pass\n"
	f, err := ReadFile("broken.py", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if f.SyntaxErrors == nil {
		t.Fatal("no syntax error")
	}
	if len(f.Tools) != 1 || !f.Tools[0].ParsedViaRegexFallback {
		t.Fatalf("tools = %+v", f.Tools)
	}
	b, _ := json.Marshal(f.Tools[0])
	want := `{"name": "tool_a", "description": "Broken file.", "input_schema": {"type": "object", "properties": {"x": {"type": "integer", "description": "the x"}, "y": {"type": "string", "description": "Parameter 'y'", "default": 2}}, "required": ["x"]}, "_parsed_via_regex_fallback": true}`
	if got := string(f.Tools[0].mustJSON(t)); got != want {
		t.Errorf("fallback tool:\n got %s\nwant %s", got, want)
	}
	if !json.Valid(b) {
		t.Errorf("json.Marshal output is not valid: %s", b)
	}
}

func (tool *Tool) mustJSON(t *testing.T) []byte {
	t.Helper()
	b, err := tool.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadFileNotUTF8(t *testing.T) {
	_, err := ReadFile("latin1.py", []byte("def tool_x():\n    \"\"\"Caf\xe9\"\"\"\n"))
	if !errors.Is(err, ErrNotUTF8) {
		t.Fatalf("err = %v, want ErrNotUTF8", err)
	}
	f, err := ReadFile("bom.py", []byte("\xef\xbb\xbfdef tool_x(): pass\n"))
	if err != nil || f.SyntaxErrors != nil || len(f.Tools) != 1 {
		t.Fatalf("BOM file: %v %v %v", err, f.SyntaxErrors, f.Tools)
	}
}

func TestFallbackToolsBounded(t *testing.T) {
	// many unclosed defs: linear, and every one is found
	src := strings.Repeat("def tool_a(x, y\n", 20000)
	tools := FallbackTools(src)
	if len(tools) != 20000 {
		t.Fatalf("%d tools", len(tools))
	}
}

func FuzzReadFile(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("def tool_a(x: 'int' = f'{1}', *, y: List[int] = (1, 2)):\n\t'''Doc.\n\n\tx: the x'''\n"))
	f.Add([]byte("def tool_b(a=\")\", b=(1,\n\n"))
	f.Add([]byte("async def tool_c(*args, **kw): ...\n\x00"))
	// What a tool asks (asks.go) is read when a handler is named.
	f.Add([]byte("def _h(k):\n    return _USER_INTERACTION_HANDLER({\"type\": k, \"prompt\": 1})\ndef tool_d(user_interaction_handler=None):\n    _h('x'); _CONFIRM_HANDLER('a', 'b')\n    return {\"type\": \"secret\", **kw}\n"))
	f.Add([]byte("def tool_e(x):\n    return tool_e(x) or lollms_client_instance.tools.execute_tool('t', {})\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := ReadFile("fuzz.py", src)
		if err != nil {
			if !errors.Is(err, ErrNotUTF8) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		for _, tool := range file.Tools {
			b, err := tool.MarshalJSON()
			if err != nil || !json.Valid(b) {
				t.Fatalf("invalid JSON %s: %v", b, err)
			}
			if !json.Valid(tool.InputSchema()) {
				t.Fatalf("invalid schema %s", tool.InputSchema())
			}
		}
	})
}

func TestPreciseTypes(t *testing.T) {
	src := `def tool_p(a: list[int], b: Optional[str] = None, c: Literal["x", "y"] = "x", d: dict[str, float] = {},
           e: int | None = 1, f: "List[bool]" = (), g: tuple[int, str] = (1, "a"), h: Any = 1, i: Point = None, j=1):
    """Precise."""
`
	f, err := ReadFileOptions("p.py", []byte(src), &Options{PreciseTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	var props map[string]map[string]any
	var schema struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(f.Tools[0].InputSchema(), &schema); err != nil {
		t.Fatalf("%v: %s", err, f.Tools[0].InputSchema())
	}
	json.Unmarshal(schema.Properties, &props)
	want := map[string]string{
		"a": `{"type":"array","items":{"type":"integer"},"description":"Parameter 'a'"}`,
		"b": `{"anyOf":[{"type":"string"},{"type":"null"}],"description":"Parameter 'b'","default":null}`,
		"c": `{"type":"string","enum":["x","y"],"description":"Parameter 'c'","default":"x"}`,
		"d": `{"type":"object","additionalProperties":{"type":"number"},"description":"Parameter 'd'","default":{}}`,
		"e": `{"anyOf":[{"type":"integer"},{"type":"null"}],"description":"Parameter 'e'","default":1}`,
		"f": `{"type":"array","items":{"type":"boolean"},"description":"Parameter 'f'","default":[]}`,
		"g": `{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"minItems":2,"maxItems":2,"description":"Parameter 'g'","default":[1,"a"]}`,
		"h": `{"description":"Parameter 'h'","default":1}`,
		"i": `{"type":"string","description":"Parameter 'i'","default":null}`,
		"j": `{"type":"string","description":"Parameter 'j'","default":1}`,
	}
	for name, w := range want {
		var wv, gv any
		json.Unmarshal([]byte(w), &wv)
		b, _ := json.Marshal(props[name])
		json.Unmarshal(b, &gv)
		if !reflect.DeepEqual(wv, gv) {
			t.Errorf("%s: got %s, want %s", name, b, w)
		}
	}
	// Optional without a default: not required, None when left out
	src2 := "def tool_o(a: Optional[int], b: str | None, c: int, d: Optional[str] = 'x'):\n    \"\"\"O.\"\"\"\n"
	f2, err := ReadFileOptions("o.py", []byte(src2), &Options{PreciseTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	o := f2.Tools[0]
	if !reflect.DeepEqual(o.Required, []string{"c"}) {
		t.Errorf("required = %v, want [c]", o.Required)
	}
	if !o.Params[0].NoneIfOmitted || !o.Params[1].NoneIfOmitted || o.Params[2].NoneIfOmitted || o.Params[3].NoneIfOmitted {
		t.Errorf("NoneIfOmitted: %+v", o.Params)
	}
	if o.Params[0].Type != "integer" || o.Params[1].Type != "string" {
		t.Errorf("types of the optional parameters: %q %q", o.Params[0].Type, o.Params[1].Type)
	}
	// the default mode keeps the LCP rule
	f, _ = ReadFile("p.py", []byte(src))
	if f.Tools[0].Params[0].Type != "integer" || f.Tools[0].Params[8].Type != "integer" {
		t.Errorf("default mode types: %+v", f.Tools[0].Params)
	}
}

// TestReadFileOwnsItsData checks that a File shares no memory with the
// source buffer or with the recycled syntax trees: results stay the same
// after the buffer is overwritten and other files are read.
func TestReadFileOwnsItsData(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	var files []*File
	var want []string
	// a long parameter list (more than 16 names), a prompt and library
	// metadata besides the generated files
	var long strings.Builder
	long.WriteString("TOOL_LIBRARY_NAME = \"many\"\nTOOL_LIBRARY_DESC = \"Many.\"\nTOOL_LIBRARY_ICON = \"i.png\"\n\ndef tool_many(")
	for k := 0; k < 20; k++ {
		fmt.Fprintf(&long, "p%d, ", k)
	}
	long.WriteString("q=1, *args, tool_context=None, **kwargs):\n    \"\"\"Many.\n\n    Args:\n        p3: the third\n    \"\"\"\n\ndef tool_many_prompt():\n    return 'x'\n")
	for i := 0; i < 51; i++ {
		src := []byte(genToolFile(r))
		if i == 50 {
			src = []byte(long.String())
		}
		f, err := ReadFile("own.py", src)
		if err != nil {
			t.Fatal(err)
		}
		if i == 50 && (len(f.Tools) != 1 || len(f.Tools[0].Params) != 21 || len(f.Prompts) != 1 || f.Library.Description != "Many.") {
			t.Fatalf("the long file read as %s", fileJSON(f))
		}
		files = append(files, f)
		want = append(want, fileJSON(f))
		for k := range src {
			src[k] = 'X'
		}
	}
	for i, f := range files {
		if got := fileJSON(f); got != want[i] {
			t.Fatalf("file %d changed after later reads:\n got %s\nwant %s", i, got, want[i])
		}
	}
}

func fileJSON(f *File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%+v %+v ", f.Library, f.Prompts)
	for _, tool := range f.Tools {
		j, _ := tool.MarshalJSON()
		b.Write(j)
		fmt.Fprintf(&b, " %v %v\n", tool.Declared, tool.Required)
	}
	return b.String()
}

// TestReadFileConcurrent reads files from several goroutines (run with
// -race): the arena pool and the lazily built tables are shared.
func TestReadFileConcurrent(t *testing.T) {
	srcs := make([][]byte, 40)
	want := make([]string, len(srcs))
	r := rand.New(rand.NewSource(9))
	for i := range srcs {
		srcs[i] = []byte(genToolFile(r) + "x = '\\N{BULLET}'\n")
		f, err := ReadFile("c.py", srcs[i])
		if err != nil {
			t.Fatal(err)
		}
		want[i] = fileJSON(f)
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(srcs)*4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, src := range srcs {
				f, err := ReadFile("c.py", src)
				if err != nil || fileJSON(f) != want[i] {
					errs <- fmt.Sprintf("file %d differs when read concurrently", i)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestHiddenEventHandlers checks that the event handlers the worker injects
// (progress_handler, log_handler) are hidden like the seeds' host objects:
// declared, never in the schema, removed from what the LLM sends.
func TestHiddenEventHandlers(t *testing.T) {
	src := `def tool_convert(path: str, progress_handler=None, log_handler=None, *, tool_context=None):
    """Converts a file.

    Args:
        path: the file
        progress_handler: reports progress
    """
`
	f, err := ReadFile("tools/convert.py", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tool := f.Tools[0]
	if !reflect.DeepEqual(tool.Declared, []string{"path", "progress_handler", "log_handler", "tool_context"}) {
		t.Errorf("Declared = %v", tool.Declared)
	}
	want := `{"type": "object", "properties": {"path": {"type": "string", "description": "the file"}}, "required": ["path"]}`
	if got := string(tool.InputSchema()); got != want {
		t.Errorf("InputSchema:\n got %s\nwant %s", got, want)
	}
	for _, name := range []string{"args", "kwargs", "tool_context", "lollms_client_instance", "discussion_instance",
		"user_interaction_handler", "progress_handler", "log_handler"} {
		if !IsHiddenParam(name) {
			t.Errorf("IsHiddenParam(%q) = false", name)
		}
	}
	if IsHiddenParam("progress") || IsHiddenParam("handler") || IsHiddenParam("Args") || IsHiddenParam("") {
		t.Error("ordinary names are hidden")
	}
}

func TestUndocumentedMessage(t *testing.T) {
	for _, params := range [][]string{{"a"}, {"a", "bb"}, {"x", "y", "z"}, {"é", ""}} {
		want := "parameter '" + params[0] + "' of tool_f has no description in the docstring"
		if len(params) > 1 {
			want = "parameters '" + strings.Join(params, "', '") + "' of tool_f have no description in the docstring"
		}
		if got := undocumentedMessage(params, "tool_f"); got != want {
			t.Errorf("undocumentedMessage(%q) = %q, want %q", params, got, want)
		}
	}
}
