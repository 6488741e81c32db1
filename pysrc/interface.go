// Package pysrc reads LCP tool files: Python source whose functions named
// tool_* are tools. It never runs Python: a pure-Go tokenizer and parser
// (subpackages token, scanner, ast, parser) build the syntax tree, and the
// rules of contract §5 turn every tool function into a name, a description and
// a JSON input schema, exactly as Python's ast module would under those
// rules. Files with syntax errors go through a lossy line-based fallback
// whose tools are marked ParsedViaRegexFallback.
//
//	f, err := pysrc.ReadFile("weather.py", src)
//	if err != nil {
//		return err // src is not UTF-8
//	}
//	for _, t := range f.Tools {
//		fmt.Println(t.Name, string(t.InputSchema()))
//	}
//
// Decisions where contract §5 and §16 leave room:
//
//   - Tools are listed in source order of their def line with duplicates
//     kept; the first-wins rule belongs to discovery. Prompt providers
//     (^tool_.+_prompt$) are listed apart in File.Prompts.
//   - Tool.TopLevel is false for a def nested in a function or class (it
//     is not a module attribute); defs inside module-level if/try/with/for
//     blocks count as top level. Nested tools get a diagnostic.
//   - Undocumented parameters give one diagnostic per tool; a prompt
//     provider without its tool (other than tool_<stem>_prompt) gives one.
//   - The fallback extractor (FallbackTools) is line based: tool names and
//     the mark are dependable, parameters and descriptions approximate.
//   - The parser has a nesting budget of 3000 (a parenthesis costs two, a
//     block, an operator of a chain or a unary operator one), more than
//     CPython allows, and reports an error beyond it: time and stack stay
//     bounded.
//   - A lone surrogate from an escape (\ud800) is kept in its WTF-8 form in
//     the AST so that unparse and repr print it as Python does; all JSON
//     output writes U+FFFD.
//   - ReadFile parses into recycled memory (parser.Arena, from a pool) and
//     copies the few strings it keeps: a File never points into the
//     source or the tree, and reading many files allocates little.
//     ReadFileOptions{PreciseTypes: true} offers the precise annotation
//     mapping that contract §5 welcomes as an option.
//   - CPython 3.12.1 is the reference, including its quirks: `(x).a: int`
//     is rejected (PEG ordered choice), and so is a `{x=}` field inside a
//     format spec (ast.parse raises ValueError there).
package pysrc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lcptools/lcp/pysrc/pyval"
	"github.com/lcptools/lcp/pysrc/scanner"
)

// ErrNotUTF8 is returned (wrapped) by ReadFile when the source is not
// valid UTF-8; such a file is skipped by discovery.
var ErrNotUTF8 = errors.New("not valid UTF-8")

// ErrorList is a sorted list of syntax errors, one `file:line:col: msg`
// per line.
type ErrorList = scanner.ErrorList

// File is what ReadFile extracts from one tool file.
type File struct {
	Filename string
	Library  Library
	// Tools lists every tool function in source order of its def line.
	// Tools of the same name are all listed: dedup is the caller's job.
	Tools []*Tool
	// Prompts lists the prompt providers (functions named tool_*_prompt).
	Prompts []Prompt
	// SyntaxErrors is non-nil when the file is not valid Python; Tools
	// then come from the regex fallback.
	SyntaxErrors ErrorList

	// diags are the findings that are not about one tool's own reading
	// (orphan prompts, TOOL_ANNOTATIONS, a syntax error), made when found;
	// those about a tool (undocumented parameters, a nested def) are made
	// from the tool by Diagnostics, since listing never prints them.
	diags []Diagnostic
	// parsed: the tools come from the syntax tree, and carry their own
	// findings (Tool.undoc, TopLevel).
	parsed bool
}

// Diagnostics returns the findings about the file for `lcp check`, in the
// order they occur: for each tool in Tools, its undocumented parameters
// and its nesting in a function or class, then the prompt providers
// without a tool, then TOOL_ANNOTATIONS problems; for a file with a syntax
// error, the error and the fallback's note. The messages are made at each
// call (most readers of a file never ask), into a new slice.
func (f *File) Diagnostics() []Diagnostic {
	if !f.parsed {
		return slices.Clone(f.diags)
	}
	n := len(f.diags)
	for _, t := range f.Tools {
		if t.undoc != 0 || t.undocMsg != "" {
			n++
		}
		if !t.TopLevel {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]Diagnostic, 0, n)
	for _, t := range f.Tools {
		if t.undoc != 0 || t.undocMsg != "" {
			out = append(out, Diagnostic{f.Filename, t.Line, DiagUndocumented, t.undocumentedMessage()})
		}
		if !t.TopLevel {
			out = append(out, Diagnostic{f.Filename, t.Line, DiagNestedTool, nestedMessage(t.Name)})
		}
	}
	return append(out, f.diags...)
}

// undocumentedMessage is the message of the tool's undocumented-parameter
// finding.
func (t *Tool) undocumentedMessage() string {
	if t.undocMsg != "" {
		return t.undocMsg
	}
	var buf [8]string
	names := buf[:0]
	for i, name := range t.Declared {
		if t.undoc&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return undocumentedMessage(names, t.Name)
}

func nestedMessage(fn string) string {
	return fn + " is defined inside a function or class: it is not a module attribute and cannot be called"
}

// Library is the library metadata of a file: TOOL_LIBRARY_NAME,
// TOOL_LIBRARY_DESC and TOOL_LIBRARY_ICON, module-level assignments of a
// plain string literal. Name defaults to the file stem.
type Library struct {
	Name, Description, Icon string
}

// Tool is one tool function.
type Tool struct {
	Name        string
	Description string
	// Params are the schema properties in order (hidden parameters and
	// *args/**kwargs removed; a repeated name replaces the earlier entry
	// in its position).
	Params   []Param
	Required []string
	// AcceptsKwargs is set when the function declares **kwargs.
	AcceptsKwargs bool
	Async         bool
	// TopLevel is set for a def that is not nested in a function or class,
	// so that the tool is an attribute of its module and can be called.
	TopLevel bool
	// Line is the 1-based line of the def keyword.
	Line int
	// ParsedViaRegexFallback marks tools read by the fallback extractor.
	ParsedViaRegexFallback bool
	// Declared lists every parameter name of the signature, hidden ones
	// and *args/**kwargs included (for the worker's injection rules).
	Declared []string
	// Asks is what the source shows the tool may ask while it runs (see
	// Asks); zero for a tool read by the fallback, which is not analysed.
	Asks Asks
	// Annotations are the tool's hints from the module's TOOL_ANNOTATIONS,
	// nil when it declares none.
	Annotations *Annotations

	// undoc has bit i set when Declared[i] is a parameter without a
	// description (File.Diagnostics makes the finding from it); undocMsg
	// is the finding's message instead, made at once, for a signature of
	// more than 64 names.
	undoc    uint64
	undocMsg string
}

// Param is one property of a tool's input schema.
type Param struct {
	Name        string
	Type        string
	Description string
	// Default is the JSON text of the default value, nil when the
	// parameter is required.
	Default json.RawMessage
	// Schema, set only with Options.PreciseTypes, holds the members of the
	// property's schema that replace "type" (`"type": "array", "items":
	// {"type": "integer"}`; empty for Any).
	Schema json.RawMessage
	// NoneIfOmitted, set only with Options.PreciseTypes, marks a parameter
	// annotated Optional[X] (or X | None) without a default: it is not
	// required, and a call that leaves it out passes None.
	NoneIfOmitted bool

	// generic: while the file is read, Description holds the name of a
	// parameter the docstring does not document, to be made
	// "Parameter 'name'" in the file's one buffer (File.detach).
	generic bool
}

// Prompt is a prompt provider function tool_<name>_prompt.
type Prompt struct {
	Name     string
	Line     int
	TopLevel bool
}

// Diagnostic is a finding about a tool file, for `lcp check`.
type Diagnostic struct {
	Filename string
	Line     int
	Kind     DiagnosticKind
	Message  string
}

// DiagnosticKind classifies diagnostics.
type DiagnosticKind string

// Diagnostic kinds.
const (
	DiagSyntaxError     DiagnosticKind = "syntax-error"
	DiagNestedTool      DiagnosticKind = "nested-tool"
	DiagUndocumented    DiagnosticKind = "undocumented-parameter"
	DiagOrphanPrompt    DiagnosticKind = "orphan-prompt"
	DiagFallbackParsing DiagnosticKind = "regex-fallback"
)

// String formats the diagnostic as file:line: message.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d: %s", d.Filename, d.Line, d.Message)
}

// Stem returns the library stem of a file name ("tools/db_ops.py" ->
// "db_ops").
func Stem(filename string) string {
	base := filepath.Base(filename)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// ReadFile parses one Python tool file's source and extracts its tools.
// The error is non-nil (wrapping ErrNotUTF8) only when src is not UTF-8; a
// syntax error is reported in File.SyntaxErrors and the fallback extractor
// is used. A UTF-8 byte-order mark is ignored.
func ReadFile(filename string, src []byte) (*File, error) {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	f := extract(filename, src) // the parser checks the encoding first
	if f == nil {
		return nil, fmt.Errorf("%s: %w", filename, ErrNotUTF8)
	}
	return f, nil
}

// InputSchema returns the tool's input schema:
// {"type": "object", "properties": {...}, "required": [...]} with property
// keys in the order type, description, default.
func (t *Tool) InputSchema() json.RawMessage { return t.appendSchema(make([]byte, 0, t.schemaSize())) }

// schemaSize is the size of the input schema when nothing in it needs
// escaping: enough for most schemas in one allocation.
func (t *Tool) schemaSize() int {
	n := len(`{"type": "object", "properties": {}, "required": []}`)
	for _, p := range t.Params {
		n += len(p.Name) + len(p.Type) + len(p.Schema) + len(p.Description) + len(p.Default) +
			len(`, "": {"type": "", "description": "", "default": }`)
	}
	for _, r := range t.Required {
		n += len(r) + len(`, ""`)
	}
	return n
}

func (t *Tool) appendSchema(b []byte) []byte {
	b = append(b, `{"type": "object", "properties": {`...)
	for i, p := range t.Params {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = pyval.AppendJSONString(b, p.Name)
		switch {
		case p.Schema == nil:
			b = append(b, `: {"type": `...)
			b = pyval.AppendJSONString(b, p.Type)
			b = append(b, `, "description": `...)
		case len(p.Schema) == 0:
			b = append(b, `: {"description": `...)
		default:
			b = append(b, `: {`...)
			b = append(b, p.Schema...)
			b = append(b, `, "description": `...)
		}
		b = pyval.AppendJSONString(b, p.Description)
		if p.Default != nil {
			b = append(b, `, "default": `...)
			b = append(b, p.Default...)
		}
		b = append(b, '}')
	}
	b = append(b, `}, "required": [`...)
	for i, r := range t.Required {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = pyval.AppendJSONString(b, r)
	}
	return append(b, "]}"...)
}

// MarshalJSON returns {"name", "description", "input_schema"}, plus
// "_parsed_via_regex_fallback": true for fallback tools.
func (t *Tool) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 256)
	b = append(b, `{"name": `...)
	b = pyval.AppendJSONString(b, t.Name)
	b = append(b, `, "description": `...)
	b = pyval.AppendJSONString(b, t.Description)
	b = append(b, `, "input_schema": `...)
	b = t.appendSchema(b)
	if t.ParsedViaRegexFallback {
		b = append(b, `, "_parsed_via_regex_fallback": true`...)
	}
	return append(b, '}'), nil
}
