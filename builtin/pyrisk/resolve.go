package pyrisk

import (
	"strings"
	"sync"

	"github.com/lcptools/lcp/pysrc/ast"
)

// bind collects the names the code binds to modules and module attributes:
// imports anywhere, and simple assignments of such names, to a fixpoint.
// It is flow-insensitive on purpose: a name bound to os anywhere is os
// everywhere.
func (u *unit) bind(mod *ast.Module) {
	ast.Inspect(mod, func(n ast.Node) bool {
		u.markBases(n)
		switch n := n.(type) {
		case *ast.Import:
			for _, a := range n.Names {
				local, module := a.ImportBinding()
				u.aliases[local] = module
			}
		case *ast.ImportFrom:
			if n.Level > 0 && n.Module == "" {
				break
			}
			for _, a := range n.Names {
				if a.Name == "*" {
					continue
				}
				local := a.AsName
				if local == "" {
					local = a.Name
				}
				u.aliases[local] = n.Module + "." + a.Name
			}
		}
		return true
	})
	for range 4 {
		changed := false
		ast.Inspect(mod, func(n ast.Node) bool {
			as, ok := n.(*ast.Assign)
			if !ok {
				return true
			}
			p := u.resolve(as.Value)
			if p == "" {
				return true
			}
			for _, t := range as.Targets {
				if name, ok := t.(*ast.Name); ok && u.aliases[name.Id] != p {
					u.aliases[name.Id] = p
					changed = true
				}
			}
			return true
		})
		if !changed {
			return
		}
	}
}

// resolve returns the dotted path an expression stands for when it names a
// module or a module's attribute ("os", "os.system", "builtins.exec"), or
// "".
func (u *unit) resolve(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Name:
		if p, ok := u.aliases[e.Id]; ok {
			return p
		}
		if builtinNames()[e.Id] {
			return "builtins." + e.Id
		}
	case *ast.Attribute:
		if base := u.resolve(e.Value); base != "" {
			return base + "." + e.Attr
		}
	case *ast.Call:
		f := u.resolve(e.Func)
		switch f {
		case "builtins.__import__", "importlib.__import__":
			if s, ok := literal(arg(e, 0, "name")); ok {
				top, _, _ := strings.Cut(s, ".")
				return top
			}
		case "importlib.import_module":
			if s, ok := literal(arg(e, 0, "name")); ok {
				return s
			}
		case "builtins.getattr":
			if s, ok := literal(arg(e, 1, "")); ok {
				if base := u.resolve(arg(e, 0, "")); base != "" {
					return base + "." + s
				}
			}
		}
	case *ast.Subscript:
		if u.resolve(e.Value) == "sys.modules" {
			if s, ok := literal(e.Slice); ok {
				return s
			}
		}
	}
	return ""
}

// builtinNames are the builtins whose use is judged.
var builtinNames = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"eval": true, "exec": true, "compile": true, "__import__": true,
		"getattr": true, "hasattr": true, "setattr": true, "delattr": true, "vars": true, "globals": true,
		"locals": true, "open": true, "breakpoint": true}
})

func arg(call *ast.Call, i int, keyword string) ast.Expr {
	if i < len(call.Args) {
		if _, star := call.Args[i].(*ast.Starred); !star {
			return call.Args[i]
		}
		return nil
	}
	for _, k := range call.Keywords {
		if keyword != "" && k.Arg == keyword {
			return k.Value
		}
	}
	return nil
}

// literal returns the value of a plain string or bytes literal.
func literal(e ast.Expr) (string, bool) {
	c, ok := e.(*ast.Constant)
	if !ok || (c.Kind != ast.Str && c.Kind != ast.Bytes) {
		return "", false
	}
	return c.Str, true
}

// markBases records the names and attributes that n uses as something
// else than a value (see unit.bases).
func (u *unit) markBases(n ast.Node) {
	mark := func(es ...ast.Expr) {
		for _, e := range es {
			switch e.(type) {
			case *ast.Name, *ast.Attribute:
				u.bases[e] = true
			}
		}
	}
	switch n := n.(type) {
	case *ast.Attribute:
		mark(n.Value)
	case *ast.Assign:
		mark(n.Targets...)
		if len(n.Targets) == 1 {
			if _, simple := n.Targets[0].(*ast.Name); simple {
				mark(n.Value) // an alias, followed by bind
			}
		}
	case *ast.AugAssign:
		mark(n.Target)
	case *ast.AnnAssign:
		mark(n.Target)
	case *ast.For:
		mark(n.Target)
	case *ast.Delete:
		mark(n.Targets...)
	}
}
