package pysrc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/parser"
	"github.com/lcptools/lcp/pysrc/pyval"
	"github.com/lcptools/lcp/pysrc/scanner"
	"github.com/lcptools/lcp/pysrc/token"
)

// IsHiddenParam reports whether a parameter name is one of the
// host-injected names of SPEC §5, never shown to the LLM.
// progress_handler and log_handler are lcp's additions: the worker
// injects them into a tool that declares them by name. (A switch, not a
// map: it is asked for every parameter of every tool.)
func IsHiddenParam(name string) bool {
	switch name {
	case "args", "kwargs", "tool_context", "lollms_client_instance", "discussion_instance",
		"user_interaction_handler", "progress_handler", "log_handler":
		return true
	}
	return false
}

// IsPromptName reports whether a function name is a prompt provider
// (^tool_.+_prompt$), never a tool.
func IsPromptName(name string) bool {
	return len(name) >= len("tool_x_prompt") && strings.HasPrefix(name, "tool_") && strings.HasSuffix(name, "_prompt") &&
		!strings.Contains(name, "\n")
}

// arenas recycles the syntax-tree memory between files: the tree of a file
// is dropped once its tools are extracted (nothing in File points into it),
// which saves most of the allocation and garbage collection work.
var arenas = sync.Pool{New: func() any { return new(parser.Arena) }}

func extract(filename string, src []byte) *File {
	f := &File{Filename: filename, Library: Library{Name: Stem(filename)}}
	arena := arenas.Get().(*parser.Arena)
	defer func() {
		arena.Reset()
		arenas.Put(arena)
	}()
	mod, file, err := parser.ParseArena(filename, src, arena)
	if errors.Is(err, parser.ErrNotUTF8) {
		return nil
	}
	if err != nil {
		if list, ok := err.(scanner.ErrorList); ok {
			f.SyntaxErrors = list
		} else {
			f.SyntaxErrors = scanner.ErrorList{{Pos: token.Position{Filename: filename}, Msg: err.Error()}}
		}
		for _, e := range f.SyntaxErrors {
			f.diags = append(f.diags, Diagnostic{filename, e.Pos.Line, DiagSyntaxError, "syntax error: " + e.Msg})
			break
		}
		fallback(f, string(src))
		if len(f.Tools) > 0 {
			f.diags = append(f.diags, Diagnostic{filename, f.Tools[0].Line, DiagFallbackParsing,
				fmt.Sprintf("%d tool(s) read by the regex fallback: their schemas are approximate", len(f.Tools))})
		}
		return f
	}
	f.parsed = true
	x := &extractor{f: f, file: file, src: src, lastLine: 1, hasCR: bytes.IndexByte(src, '\r') >= 0}
	x.module(mod)
	x.checkPrompts()
	x.readAnnotations()
	f.detach()
	return f
}

// detach copies the strings that may share memory with the source (the
// parser does not copy it), so that the File owns all its data. They go
// into one buffer per file: one allocation instead of one per string.
func (f *File) detach() {
	n := len(f.Library.Name) + len(f.Library.Description) + len(f.Library.Icon)
	for i := range f.Prompts {
		n += len(f.Prompts[i].Name)
	}
	for _, t := range f.Tools {
		n += len(t.Name) + len(t.Description)
		for i := range t.Params {
			n += len(t.Params[i].Description) // names: the copies of Declared
			if t.Params[i].generic {
				n += len(genericOpen) + len(genericClose)
			}
		}
		for _, s := range t.Declared {
			n += len(s)
		}
	}
	c := copier{make([]byte, 0, n)}
	f.Library.Name = c.copy(f.Library.Name)
	f.Library.Description = c.copy(f.Library.Description)
	f.Library.Icon = c.copy(f.Library.Icon)
	for i := range f.Prompts {
		f.Prompts[i].Name = c.copy(f.Prompts[i].Name)
	}
	for _, t := range f.Tools {
		t.Name = c.copy(t.Name)
		t.Description = c.copy(t.Description)
		for i := range t.Params {
			p := &t.Params[i]
			if p.generic {
				p.Description, p.generic = c.wrap(genericOpen, p.Description, genericClose), false
			} else {
				p.Description = c.copy(p.Description)
			}
		}
		// Params and Required repeat names of Declared: they share its
		// copies.
		for i := range t.Declared {
			t.Declared[i] = c.copy(t.Declared[i])
		}
		var copies map[string]string
		if len(t.Declared) > 16 {
			copies = make(map[string]string, len(t.Declared))
			for _, s := range t.Declared {
				copies[s] = s
			}
		}
		declared := func(s string) string {
			if copies != nil {
				if d, ok := copies[s]; ok {
					return d
				}
			} else {
				for _, d := range t.Declared {
					if d == s {
						return d
					}
				}
			}
			return strings.Clone(s) // not declared: cannot happen
		}
		for i := range t.Params {
			t.Params[i].Name = declared(t.Params[i].Name)
		}
		for i := range t.Required {
			t.Required[i] = declared(t.Required[i])
		}
	}
}

// The description of a parameter the docstring does not document is
// "Parameter 'name'".
const genericOpen, genericClose = "Parameter '", "'"

// wrap is copy(open + s + close), without the concatenation.
func (c *copier) wrap(open, s, close string) string {
	n := len(open) + len(s) + len(close)
	if len(c.buf)+n > cap(c.buf) {
		return open + s + close // more than was counted: cannot happen
	}
	start := len(c.buf)
	c.buf = append(append(append(c.buf, open...), s...), close...)
	return unsafe.String(&c.buf[start], n)
}

// copier copies strings into one buffer, which never grows beyond its
// capacity: the copies made never move.
type copier struct{ buf []byte }

func (c *copier) copy(s string) string {
	if s == "" {
		return ""
	}
	if len(c.buf)+len(s) > cap(c.buf) {
		return strings.Clone(s) // more than was counted: cannot happen
	}
	start := len(c.buf)
	c.buf = append(c.buf, s...)
	return unsafe.String(&c.buf[start], len(s))
}

type extractor struct {
	f    *File
	file *token.File
	src  []byte
	// line numbers are counted forward from the last position asked
	// (tools come in source order), without building a line table
	lastOff, lastLine int
	hasCR             bool
	// asks reads what the tools ask; nil when the file names no handler.
	asks *asksReader
	// annotations is the module's TOOL_ANNOTATIONS assignment, if any.
	annotations *annotationsDecl
}

func (x *extractor) line(p token.Pos) int {
	off := x.file.Offset(p)
	if off < x.lastOff || off > len(x.src) || x.hasCR {
		return x.file.Line(p)
	}
	x.lastLine += bytes.Count(x.src[x.lastOff:off], []byte("\n"))
	x.lastOff = off
	return x.lastLine
}

func (x *extractor) module(mod *ast.Module) {
	if mentionsHandlers(x.src) {
		x.asks = newAsksReader(mod)
	}
	for _, st := range mod.Body {
		x.libraryMeta(st)
	}
	x.stmts(mod.Body, false)
}

func (x *extractor) libraryMeta(st ast.Stmt) {
	var targets []ast.Expr
	var value ast.Expr
	switch st := st.(type) {
	case *ast.Assign:
		targets, value = st.Targets, st.Value
	case *ast.AnnAssign:
		if st.Value == nil {
			return
		}
		targets, value = []ast.Expr{st.Target}, st.Value
	default:
		return
	}
	for _, t := range targets {
		if n, ok := t.(*ast.Name); ok && n.Id == AnnotationsName {
			x.annotations = &annotationsDecl{value: value, line: x.file.Line(st.Pos())}
		}
	}
	c, ok := value.(*ast.Constant)
	if !ok || c.Kind != ast.Str {
		return
	}
	for _, t := range targets {
		n, ok := t.(*ast.Name)
		if !ok {
			continue
		}
		switch n.Id {
		case "TOOL_LIBRARY_NAME":
			x.f.Library.Name = c.Str
		case "TOOL_LIBRARY_DESC":
			x.f.Library.Description = c.Str
		case "TOOL_LIBRARY_ICON":
			x.f.Library.Icon = c.Str
		}
	}
}

// stmts visits statements in source order; nested tells whether they are
// inside a function or class body.
func (x *extractor) stmts(list []ast.Stmt, nested bool) {
	for _, st := range list {
		x.stmt(st, nested)
	}
}

func (x *extractor) stmt(st ast.Stmt, nested bool) {
	switch st := st.(type) {
	case *ast.FunctionDef:
		x.function(st, nested)
		x.stmts(st.Body, true)
	case *ast.ClassDef:
		x.stmts(st.Body, true)
	case *ast.If:
		x.stmts(st.Body, nested)
		x.stmts(st.OrElse, nested)
	case *ast.For:
		x.stmts(st.Body, nested)
		x.stmts(st.OrElse, nested)
	case *ast.While:
		x.stmts(st.Body, nested)
		x.stmts(st.OrElse, nested)
	case *ast.With:
		x.stmts(st.Body, nested)
	case *ast.Try:
		x.stmts(st.Body, nested)
		for _, h := range st.Handlers {
			x.stmts(h.Body, nested)
		}
		x.stmts(st.OrElse, nested)
		x.stmts(st.FinalBody, nested)
	case *ast.Match:
		for _, c := range st.Cases {
			x.stmts(c.Body, nested)
		}
	}
}

func (x *extractor) function(fn *ast.FunctionDef, nested bool) {
	if len(fn.Name) < 5 || fn.Name[:5] != "tool_" {
		return
	}
	line := x.line(fn.NamePos)
	if IsPromptName(fn.Name) {
		x.f.Prompts = append(x.f.Prompts, Prompt{Name: fn.Name, Line: line, TopLevel: !nested})
		return
	}
	t := &Tool{Name: fn.Name, Async: fn.IsAsync, TopLevel: !nested, Line: line}
	doc := docstring(fn.Body)
	t.Description = description(doc)
	docs := paramDocs(doc)
	a := fn.Args
	n := len(a.PosOnly) + len(a.Args) + len(a.KwOnly)
	t.Params = make([]Param, 0, n)
	// Declared (at most n names and *args, **kwargs) and Required (at
	// most n) share one allocation, each capped at its own part.
	names := make([]string, 2*n+2)
	t.Declared, t.Required = names[:0:n+2], names[n+2:n+2]
	// The parameters without a description are marked in t.undoc; a
	// signature longer than its 64 bits keeps their names for the message.
	var undocumented []string
	long := n+2 > 64
	var index map[string]int // only for long parameter lists
	if n > 16 {
		index = make(map[string]int, n)
	}
	add := func(arg *ast.Arg, def ast.Expr) {
		t.Declared = append(t.Declared, arg.Name)
		if IsHiddenParam(arg.Name) {
			return
		}
		p := Param{Name: arg.Name, Type: "string"}
		if arg.Annotation != nil {
			p.Type = annotationType(arg.Annotation)
		}
		if d, ok := docs[arg.Name]; ok {
			p.Description = d
		} else {
			p.Description, p.generic = arg.Name, true // made "Parameter 'x'" by detach
			if long {
				undocumented = append(undocumented, arg.Name)
			} else {
				t.undoc |= 1 << (len(t.Declared) - 1)
			}
		}
		if def != nil {
			p.Default = defaultJSON(def)
		} else {
			t.Required = append(t.Required, arg.Name)
		}
		// a repeated name replaces the earlier property in its position
		if index != nil {
			if i, dup := index[arg.Name]; dup {
				t.Params[i] = p
				return
			}
			index[arg.Name] = len(t.Params)
		} else {
			for i := range t.Params {
				if t.Params[i].Name == arg.Name {
					t.Params[i] = p
					return
				}
			}
		}
		t.Params = append(t.Params, p)
	}
	firstDefault := len(a.PosOnly) + len(a.Args) - len(a.Defaults)
	for i, arg := range a.PosOnly {
		add(arg, positionalDefault(a, i, firstDefault))
	}
	for i, arg := range a.Args {
		add(arg, positionalDefault(a, len(a.PosOnly)+i, firstDefault))
	}
	if a.VarArg != nil {
		t.Declared = append(t.Declared, "*"+a.VarArg.Name)
	}
	for i, arg := range a.KwOnly {
		var def ast.Expr
		if i < len(a.KwDefaults) {
			def = a.KwDefaults[i]
		}
		add(arg, def)
	}
	if a.KwArg != nil {
		t.AcceptsKwargs = true
		t.Declared = append(t.Declared, "**"+a.KwArg.Name)
	}
	if len(t.Required) == 0 {
		t.Required = nil
	}
	if len(undocumented) > 0 {
		t.undocMsg = undocumentedMessage(undocumented, fn.Name)
	}
	if x.asks != nil {
		t.Asks = x.asks.tool(fn, t.Declared)
	}
	x.f.Tools = append(x.f.Tools, t)
}

// undocumentedMessage is the diagnostic for the parameters of function
// fn that have no description, built in one allocation.
func undocumentedMessage(params []string, fn string) string {
	const one, many = "parameter '", "parameters '"
	const oneEnd, manyEnd = " has no description in the docstring", " have no description in the docstring"
	const sep, of = "', '", "' of "
	size := len(many) + len(of) + len(fn) + len(manyEnd) + len(sep)*(len(params)-1)
	for _, p := range params {
		size += len(p)
	}
	var b strings.Builder
	b.Grow(size)
	if len(params) == 1 {
		b.WriteString(one)
	} else {
		b.WriteString(many)
	}
	for i, p := range params {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(p)
	}
	b.WriteString(of)
	b.WriteString(fn)
	if len(params) == 1 {
		b.WriteString(oneEnd)
	} else {
		b.WriteString(manyEnd)
	}
	return b.String()
}

func positionalDefault(a *ast.Arguments, i, firstDefault int) ast.Expr {
	if i >= firstDefault && i-firstDefault < len(a.Defaults) {
		return a.Defaults[i-firstDefault]
	}
	return nil
}

// annotationType is jsonType of the unparsed annotation, without
// allocating for the common plain names.
func annotationType(e ast.Expr) string {
	if n, ok := e.(*ast.Name); ok && isASCII(n.Id) {
		return jsonTypeASCII(n.Id)
	}
	return jsonType(pyval.Unparse(e))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// defaultJSON is SPEC §5's default rule: the literal value when
// ast.literal_eval gives a JSON-representable value, else the unparsed
// text with quotes stripped, as a JSON string.
func defaultJSON(e ast.Expr) json.RawMessage {
	if text, ok := pyval.LiteralJSON(e); ok {
		return json.RawMessage(text)
	}
	return json.RawMessage(jsonString(stripQuotes(pyval.Unparse(e))))
}

func jsonString(s string) string { return pyval.JSONString(s) }

// docstring returns the cleaned docstring of a body ("" when none): its
// first statement must be a plain str literal.
func docstring(body []ast.Stmt) string {
	if len(body) == 0 {
		return ""
	}
	es, ok := body[0].(*ast.ExprStmt)
	if !ok {
		return ""
	}
	c, ok := es.Value.(*ast.Constant)
	if !ok || c.Kind != ast.Str {
		return ""
	}
	return cleandoc(c.Str)
}

func (x *extractor) checkPrompts() {
	if len(x.f.Prompts) == 0 {
		return
	}
	tools := map[string]bool{}
	for _, t := range x.f.Tools {
		tools[t.Name] = true
	}
	libPrompt := "tool_" + Stem(x.f.Filename) + "_prompt"
	for _, p := range x.f.Prompts {
		target := p.Name[:len(p.Name)-len("_prompt")]
		if tools[target] || p.Name == libPrompt {
			continue
		}
		x.f.diags = append(x.f.diags, Diagnostic{x.f.Filename, p.Line, DiagOrphanPrompt,
			fmt.Sprintf("%s has no tool %s in this file and is not the library prompt %s", p.Name, target, libPrompt)})
	}
}
