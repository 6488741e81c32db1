package pysrc

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/parser"
	"github.com/lcptools/lcp/pysrc/pyval"
)

// Options changes how ReadFileOptions reads a file. The zero value gives
// ReadFile's behaviour.
type Options struct {
	// PreciseTypes maps annotations to JSON Schema by their meaning
	// (list[int] is an array of integers, Optional[str] a string or null,
	// Literal["a", "b"] an enum, unions anyOf) instead of SPEC §5's
	// substring rule (where List[int] and Point are "integer"). It is an
	// option for hosts that want it, never the default: the LCP rule is
	// what other LCP implementations produce.
	PreciseTypes bool
}

// ReadFileOptions is ReadFile with options; nil options are the defaults.
func ReadFileOptions(filename string, src []byte, opts *Options) (*File, error) {
	f, err := ReadFile(filename, src)
	if err != nil || opts == nil || !opts.PreciseTypes || f.SyntaxErrors != nil {
		return f, err
	}
	// Second pass over the tree for the annotations: the default pass
	// stays free of this work.
	mod, perr := parser.ParseFile(filename, bytes.TrimPrefix(src, []byte("\xef\xbb\xbf")))
	if perr != nil {
		return f, nil
	}
	i := 0
	for _, st := range mod.Body {
		ast.Inspect(st, func(n ast.Node) bool {
			fn, ok := n.(*ast.FunctionDef)
			if !ok || !strings.HasPrefix(fn.Name, "tool_") || IsPromptName(fn.Name) {
				return true
			}
			if i < len(f.Tools) && f.Tools[i].Name == fn.Name {
				applyPrecise(f.Tools[i], fn)
			}
			i++
			return true
		})
	}
	return f, nil
}

func applyPrecise(t *Tool, fn *ast.FunctionDef) {
	anns := map[string]ast.Expr{}
	for _, list := range [][]*ast.Arg{fn.Args.PosOnly, fn.Args.Args, fn.Args.KwOnly} {
		for _, a := range list {
			anns[a.Name] = a.Annotation
		}
	}
	for k := range t.Params {
		p := &t.Params[k]
		ann := anns[p.Name]
		if ann == nil {
			continue
		}
		schema := preciseSchema(ann, 0)
		p.Schema = []byte(schema)
		p.Type = schemaType(schema)
		if p.Type == "" {
			// Optional[int] coerces "5" as int does.
			p.Type = optionalType(schema)
		}
		if p.Default == nil && admitsNone(schema) {
			p.NoneIfOmitted = true
			t.Required = slices.DeleteFunc(t.Required, func(r string) bool { return r == p.Name })
		}
	}
}

// admitsNone reports whether a schema fragment is a union with null (an
// Optional annotation).
func admitsNone(members string) bool {
	return strings.HasPrefix(members, `"anyOf": [`) && strings.Contains(members, `{"type": "null"}`)
}

// optionalType is the type of the one non-null member of a union with
// null ("integer" for Optional[int]), "" otherwise.
func optionalType(members string) string {
	if !admitsNone(members) {
		return ""
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(members, `"anyOf": [`), "]")
	parts := strings.Split(inner, "}, {")
	if len(parts) != 2 {
		return ""
	}
	for _, part := range parts {
		part = strings.Trim(part, "{}")
		if part != `"type": "null"` && !strings.Contains(part, "{") {
			return schemaType(part)
		}
	}
	return ""
}

// schemaType is the "type" member of a schema fragment, "" when absent.
func schemaType(members string) string {
	const key = `"type": "`
	if strings.HasPrefix(members, key) {
		rest := members[len(key):]
		if i := strings.IndexByte(rest, '"'); i >= 0 {
			return rest[:i]
		}
	}
	return ""
}

// preciseSchema returns the members of a JSON Schema object (without
// braces) for an annotation.
func preciseSchema(e ast.Expr, depth int) string {
	if depth > 20 {
		return ""
	}
	switch e := e.(type) {
	case *ast.Constant:
		switch e.Kind {
		case ast.None:
			return `"type": "null"`
		case ast.Str:
			// a string annotation: its contents are the annotation
			mod, err := parser.ParseFile("", []byte(e.Str+"\n"))
			if err == nil && len(mod.Body) == 1 {
				if es, ok := mod.Body[0].(*ast.ExprStmt); ok {
					return preciseSchema(es.Value, depth+1)
				}
			}
		}
		return `"type": "string"`
	case *ast.Name:
		return namedSchema(e.Id)
	case *ast.Attribute:
		return namedSchema(e.Attr)
	case *ast.BinOp:
		if e.Op.String() == "|" {
			return unionSchema(flattenUnion(e), depth)
		}
	case *ast.Subscript:
		name := ""
		switch v := e.Value.(type) {
		case *ast.Name:
			name = v.Id
		case *ast.Attribute:
			name = v.Attr
		}
		var args []ast.Expr
		if tup, ok := e.Slice.(*ast.Tuple); ok {
			args = tup.Elts
		} else {
			args = []ast.Expr{e.Slice}
		}
		switch name {
		case "Optional":
			return unionSchema([]ast.Expr{args[0], &ast.Constant{Kind: ast.None}}, depth)
		case "Union":
			return unionSchema(args, depth)
		case "Annotated":
			return preciseSchema(args[0], depth+1)
		case "Literal":
			return literalSchema(args)
		case "list", "List", "set", "Set", "frozenset", "FrozenSet", "Sequence", "MutableSequence", "Iterable", "Collection", "AbstractSet":
			return `"type": "array", "items": {` + preciseSchema(args[0], depth+1) + `}`
		case "tuple", "Tuple":
			if len(args) == 2 {
				if c, ok := args[1].(*ast.Constant); ok && c.Kind == ast.Ellipsis {
					return `"type": "array", "items": {` + preciseSchema(args[0], depth+1) + `}`
				}
			}
			var items []string
			for _, a := range args {
				items = append(items, "{"+preciseSchema(a, depth+1)+"}")
			}
			return fmt.Sprintf(`"type": "array", "prefixItems": [%s], "minItems": %d, "maxItems": %d`, strings.Join(items, ", "), len(items), len(items))
		case "dict", "Dict", "Mapping", "MutableMapping":
			if len(args) == 2 {
				return `"type": "object", "additionalProperties": {` + preciseSchema(args[1], depth+1) + `}`
			}
			return `"type": "object"`
		}
		return namedSchema(name)
	}
	return `"type": "string"`
}

func namedSchema(name string) string {
	switch name {
	case "int":
		return `"type": "integer"`
	case "float":
		return `"type": "number"`
	case "bool":
		return `"type": "boolean"`
	case "str", "bytes", "Path", "PathLike":
		return `"type": "string"`
	case "list", "List", "tuple", "Tuple", "set", "Set", "frozenset", "Sequence", "Iterable":
		return `"type": "array"`
	case "dict", "Dict", "Mapping":
		return `"type": "object"`
	case "None", "NoneType":
		return `"type": "null"`
	case "Any", "object":
		return ""
	}
	return `"type": "string"`
}

func flattenUnion(e ast.Expr) []ast.Expr {
	if b, ok := e.(*ast.BinOp); ok && b.Op.String() == "|" {
		return append(flattenUnion(b.Left), flattenUnion(b.Right)...)
	}
	return []ast.Expr{e}
}

func unionSchema(args []ast.Expr, depth int) string {
	var parts []string
	seen := map[string]bool{}
	for _, a := range args {
		s := preciseSchema(a, depth+1)
		if s == "" {
			return "" // Any absorbs everything
		}
		if !seen[s] {
			seen[s] = true
			parts = append(parts, "{"+s+"}")
		}
	}
	if len(parts) == 1 {
		return parts[0][1 : len(parts[0])-1]
	}
	return `"anyOf": [` + strings.Join(parts, ", ") + `]`
}

func literalSchema(args []ast.Expr) string {
	var vals []string
	typ := ""
	for _, a := range args {
		text, ok := pyval.LiteralJSON(a)
		if !ok {
			return `"type": "string"`
		}
		vals = append(vals, text)
		t := "string"
		switch text[0] {
		case '"':
		case 't', 'f':
			t = "boolean"
		case 'n':
			t = "null"
		default:
			t = "number"
			if !strings.ContainsAny(text, ".eE") {
				t = "integer"
			}
		}
		if typ == "" {
			typ = t
		} else if typ != t {
			typ = "-"
		}
	}
	if typ == "-" || typ == "" {
		return `"enum": [` + strings.Join(vals, ", ") + `]`
	}
	return `"type": "` + typ + `", "enum": [` + strings.Join(vals, ", ") + `]`
}
