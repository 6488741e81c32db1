package pysrc

import (
	"bytes"
	"strings"

	"github.com/lcptools/lcp/pysrc/ast"
)

// Asks is what a tool's source shows it may ask the people at the host
// while it runs: approvals through the confirm handler, questions through
// the user interaction handler, and which kinds of question. It is read,
// never run, so it is a good guess for people (the web page's "may ask"),
// not a guarantee: the host lets every Python tool ask anything.
//
// The rule, for a tool function and the module-level functions it calls
// by name (transitively):
//   - Confirm: the code names the confirm handler (an identifier, attribute
//     or string containing "confirm_handler", any case: _CONFIRM_HANDLER,
//     config["confirm_handler"], set_confirm_handler's argument...).
//   - Questions: the tool declares user_interaction_handler, or the code
//     names an identifier, attribute or string containing
//     "interaction_handler", any case.
//   - Question kinds: the "type" of the dict literals in that code (text,
//     secret, select; a dict with "prompt" or "title" and no "type" is
//     text). When no such dict is seen, or a "type" is not a plain
//     string, every kind.
//   - A tool that calls the host's tools (execute_tool) may ask what they
//     ask: everything.
//
// A file that does not mention a handler (most files) asks nothing and is
// not walked.
type Asks struct {
	Confirm bool
	Text    bool
	Secret  bool
	Select  bool
}

// Any reports whether the tool may ask anything.
func (a Asks) Any() bool { return a.Confirm || a.Text || a.Secret || a.Select }

// maxCallDepth bounds how deep asks follows calls to module functions.
const maxCallDepth = 8

// mentionsHandlers is the quick test that spares most files the walk: does
// the source contain "confirm_handler", "interaction_handler" (each all
// lower or all upper case, its first letter in either) or "execute_tool"?
// Every one of them has an underscore at a fixed place, and underscores
// are rarer than the letters the words start with, so one pass from
// underscore to underscore beats a search per word (which stops at every
// 'o', 'n' or 'e').
func mentionsHandlers(src []byte) bool {
	for i := 0; ; i++ {
		j := bytes.IndexByte(src[i:], '_')
		if j < 0 {
			return false
		}
		i += j
		before, after := src[:i], src[i+1:]
		switch {
		case bytes.HasPrefix(after, []byte("handler")):
			if bytes.HasSuffix(before, []byte("onfirm")) || bytes.HasSuffix(before, []byte("nteraction")) {
				return true
			}
		case bytes.HasPrefix(after, []byte("HANDLER")):
			if bytes.HasSuffix(before, []byte("ONFIRM")) || bytes.HasSuffix(before, []byte("NTERACTION")) {
				return true
			}
		case bytes.HasPrefix(after, []byte("tool")):
			if bytes.HasSuffix(before, []byte("execute")) {
				return true
			}
		}
	}
}

// asksReader finds what the tools of one module may ask.
type asksReader struct {
	funcs map[string]*ast.FunctionDef // module-level functions by name
}

func newAsksReader(mod *ast.Module) *asksReader {
	r := &asksReader{funcs: map[string]*ast.FunctionDef{}}
	for _, st := range mod.Body {
		if fn, ok := st.(*ast.FunctionDef); ok {
			r.funcs[fn.Name] = fn
		}
	}
	return r
}

// scan is what one walk found.
type scan struct {
	confirm, questions, everything bool
	anyKind                        bool // a question dict whose kind cannot be read
	text, secret, sel              bool
}

// tool returns what fn, a tool declaring the parameters declared, may ask.
func (r *asksReader) tool(fn *ast.FunctionDef, declared []string) Asks {
	var s scan
	for _, d := range declared {
		if d == "user_interaction_handler" {
			s.questions = true
		}
	}
	seen := map[*ast.FunctionDef]bool{}
	r.walk(fn, 0, seen, &s)
	if s.everything {
		return Asks{Confirm: true, Text: true, Secret: true, Select: true}
	}
	a := Asks{Confirm: s.confirm}
	if s.questions {
		if s.anyKind || !(s.text || s.secret || s.sel) {
			a.Text, a.Secret, a.Select = true, true, true
		} else {
			a.Text, a.Secret, a.Select = s.text, s.secret, s.sel
		}
	}
	return a
}

func (r *asksReader) walk(fn *ast.FunctionDef, depth int, seen map[*ast.FunctionDef]bool, s *scan) {
	if seen[fn] || depth > maxCallDepth {
		return
	}
	seen[fn] = true
	for _, st := range fn.Body {
		ast.Inspect(st, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Name:
				s.name(n.Id)
			case *ast.Attribute:
				s.name(n.Attr)
			case *ast.Constant:
				if n.Kind == ast.Str {
					s.name(n.Str)
				}
			case *ast.Dict:
				s.dict(n)
			case *ast.Call:
				if name, ok := n.Func.(*ast.Name); ok {
					if callee := r.funcs[name.Id]; callee != nil {
						r.walk(callee, depth+1, seen, s)
					}
				}
			}
			return true
		})
	}
}

// name notes an identifier, attribute or string that names a handler.
func (s *scan) name(id string) {
	if len(id) < len("execute_tool") || len(id) > 200 {
		return
	}
	low := strings.ToLower(id)
	switch {
	case strings.Contains(low, "confirm_handler"):
		s.confirm = true
	case strings.Contains(low, "interaction_handler"):
		s.questions = true
	case low == "execute_tool":
		s.everything = true
	}
}

// dict notes the kind of a dict literal that looks like a question.
func (s *scan) dict(d *ast.Dict) {
	question := false
	kind := ""
	typed := false
	for i, k := range d.Keys {
		c, ok := k.(*ast.Constant)
		if !ok || c.Kind != ast.Str {
			continue
		}
		switch c.Str {
		case "prompt", "title":
			question = true
		case "type":
			typed = true
			if v, ok := d.Values[i].(*ast.Constant); ok && v.Kind == ast.Str {
				kind = v.Str
			}
		}
	}
	switch {
	case typed && kind == "":
		// {"type": some_variable, ...}: any kind, if it is a question.
		if question {
			s.anyKind = true
		}
	case kind == "text" || (!typed && question):
		s.text = true
	case kind == "secret":
		s.secret = true
	case kind == "select":
		s.sel = true
	}
}
