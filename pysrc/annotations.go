package pysrc

import (
	"fmt"
	"strings"

	"github.com/lcptools/lcp/pysrc/ast"
)

// AnnotationsName is the module-level name under which a library declares
// its tools' annotations: a dict literal from tool name to a dict of
// hints, read without running the module.
//
//	TOOL_ANNOTATIONS = {
//	    "tool_read_notes": {"title": "Read notes", "readOnlyHint": True},
//	    "tool_clear_notes": {"destructiveHint": True, "idempotentHint": True},
//	}
const AnnotationsName = "TOOL_ANNOTATIONS"

// The hints of a TOOL_ANNOTATIONS entry, MCP's names for them.
const (
	HintTitle       = "title"
	HintReadOnly    = "readOnlyHint"
	HintDestructive = "destructiveHint"
	HintIdempotent  = "idempotentHint"
	HintOpenWorld   = "openWorldHint"
)

var hintNames = []string{HintTitle, HintReadOnly, HintDestructive, HintIdempotent, HintOpenWorld}

// Annotations are the hints a library declares for one tool in
// TOOL_ANNOTATIONS: how the tool behaves, for MCP clients deciding what
// to show or confirm. A nil hint was not declared.
type Annotations struct {
	Title       string
	ReadOnly    *bool
	Destructive *bool
	Idempotent  *bool
	OpenWorld   *bool
}

// DiagBadAnnotations reports a TOOL_ANNOTATIONS declaration that is not a
// literal of the documented shape, or names a hint or a tool that does
// not exist; what is malformed is ignored, the rest is kept.
const DiagBadAnnotations DiagnosticKind = "bad-annotations"

// annotationsDecl is a TOOL_ANNOTATIONS assignment, read once the whole
// module is (the tools it names come later in the file).
type annotationsDecl struct {
	value ast.Expr
	line  int
}

// readAnnotations reads the module's last TOOL_ANNOTATIONS assignment (the
// one Python keeps) and gives each tool its entry.
func (x *extractor) readAnnotations() {
	d := x.annotations
	if d == nil {
		return
	}
	bad := func(line int, format string, args ...any) {
		x.f.diags = append(x.f.diags, Diagnostic{x.f.Filename, line, DiagBadAnnotations,
			AnnotationsName + ": " + fmt.Sprintf(format, args...)})
	}
	dict, ok := d.value.(*ast.Dict)
	if !ok {
		bad(d.line, `must be a dict literal {"tool_name": {"readOnlyHint": True, ...}}; it is ignored`)
		return
	}
	tools := map[string]*Tool{}
	for _, t := range x.f.Tools {
		if _, dup := tools[t.Name]; !dup {
			tools[t.Name] = t
		}
	}
	for i, k := range dict.Keys {
		v := dict.Values[i]
		line := x.file.Line(v.Pos())
		if k == nil {
			bad(line, "** unpacking cannot be read without running the module; write the entries out")
			continue
		}
		line = x.file.Line(k.Pos())
		name, ok := strLiteral(k)
		if !ok {
			bad(line, "a key must be a tool name as a string literal")
			continue
		}
		t := tools[name]
		if t == nil {
			bad(line, "%q is not a tool of this file", name)
			continue
		}
		hints, ok := v.(*ast.Dict)
		if !ok {
			bad(line, "the entry of %s must be a dict literal of hints (%s)", name, strings.Join(hintNames, ", "))
			continue
		}
		a := x.hints(name, hints, bad)
		if a != (Annotations{}) {
			t.Annotations = &a
		}
	}
}

// hints reads one tool's dict of hints; malformed hints are reported and
// left out.
func (x *extractor) hints(tool string, d *ast.Dict, bad func(int, string, ...any)) Annotations {
	var a Annotations
	for i, k := range d.Keys {
		v := d.Values[i]
		if k == nil {
			bad(x.file.Line(v.Pos()), "the entry of %s: ** unpacking cannot be read without running the module", tool)
			continue
		}
		line := x.file.Line(k.Pos())
		key, ok := strLiteral(k)
		if !ok {
			bad(line, "the entry of %s: a hint's name must be a string literal", tool)
			continue
		}
		var flag **bool
		switch key {
		case HintTitle:
			s, ok := strLiteral(v)
			if !ok {
				bad(line, "the %s of %s must be a string literal", key, tool)
				continue
			}
			a.Title = strings.Clone(s)
			continue
		case HintReadOnly:
			flag = &a.ReadOnly
		case HintDestructive:
			flag = &a.Destructive
		case HintIdempotent:
			flag = &a.Idempotent
		case HintOpenWorld:
			flag = &a.OpenWorld
		default:
			hint := ""
			for _, h := range hintNames {
				k := strings.ReplaceAll(key, "_", "")
				if strings.EqualFold(k, h) || strings.EqualFold(k+"hint", h) {
					hint = fmt.Sprintf(" (did you mean %s?)", h)
				}
			}
			bad(line, "the entry of %s: unknown hint %q%s; the hints are %s", tool, key, hint, strings.Join(hintNames, ", "))
			continue
		}
		c, ok := v.(*ast.Constant)
		if !ok || (c.Kind != ast.True && c.Kind != ast.False) {
			bad(line, "the %s of %s must be True or False", key, tool)
			continue
		}
		b := c.Kind == ast.True
		*flag = &b
	}
	return a
}

// strLiteral is the value of a plain string literal (implicit
// concatenation included, f-strings and bytes not).
func strLiteral(e ast.Expr) (string, bool) {
	c, ok := e.(*ast.Constant)
	if !ok || c.Kind != ast.Str {
		return "", false
	}
	return c.Str, true
}
