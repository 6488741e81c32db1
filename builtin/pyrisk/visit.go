package pyrisk

import (
	"fmt"
	"strings"

	"github.com/lcptools/lcp/pysrc/ast"
)

func (u *unit) visit(n ast.Node) {
	switch n := n.(type) {
	case *ast.Import:
		for _, a := range n.Names {
			u.module(n, a.Name)
			u.effects.imported(n)
		}
	case *ast.ImportFrom:
		u.importFrom(n)
		u.effects.imported(n)
	case *ast.Attribute:
		u.attribute(n)
	case *ast.Name:
		u.name(n)
	case *ast.Assign:
		for _, t := range n.Targets {
			u.pathTarget(t)
		}
	case *ast.AugAssign:
		u.pathTarget(n.Target)
	case *ast.Subscript:
		u.subscript(n)
	case *ast.Call:
		u.call(n)
		u.effects.call(u, n)
	case *ast.Constant:
		if n.Kind == ast.Str || n.Kind == ast.Bytes {
			u.constant(n, n.Str)
		}
	case *ast.JoinedStr:
		var b strings.Builder
		for _, v := range n.Values {
			if c, ok := v.(*ast.Constant); ok {
				b.WriteString(c.Str)
			}
		}
		u.constant(n, b.String())
	}
}

func (u *unit) importFrom(n *ast.ImportFrom) {
	if n.Level > 0 {
		// Relative imports name local modules.
		for _, a := range n.Names {
			name := strings.TrimPrefix(n.Module+"."+a.Name, ".")
			if n.Module == "" {
				name = a.Name
			}
			u.local(n, name)
		}
		if n.Module != "" {
			u.local(n, n.Module)
		}
		return
	}
	u.module(n, n.Module)
	for _, a := range n.Names {
		if a.Name == "*" {
			if starRisky()[n.Module] {
				u.ask(n, "imports everything from %s, including its process functions", n.Module)
			}
			continue
		}
		full := n.Module + "." + a.Name
		if why := pathRisk(full); why != "" {
			u.ask(n, "imports %s, %s", full, why)
		} else {
			u.local(n, full)
		}
	}
}

// attribute judges value.attr: introspection gadgets by their name
// whatever the value, and module attributes by their resolved path
// (rebased at the last module on the way: shutil.os.system is
// os.system).
func (u *unit) attribute(n *ast.Attribute) {
	if why, ok := gadgets()[n.Attr]; ok {
		u.ask(n, "uses %s, %s", n.Attr, why)
		return
	}
	if n.Attr == "__dict__" {
		if u.resolve(n.Value) != "" {
			u.ask(n, "reads a module's namespace through __dict__")
		}
		return
	}
	p := u.resolve(n)
	if why := pathRisk(p); why != "" {
		u.ask(n, "uses %s, %s", p, why)
	}
	if p == "sys.path.append" || p == "sys.path.insert" || p == "sys.path.extend" || p == "sys.path.__setitem__" {
		u.ask(n, "changes sys.path, so imports may load code that is not judged")
	}
	if !u.bases[n] && p != "" && valueModules()[lastModule(p)] && lastModule(p) != topModule(p) {
		u.ask(n, "passes the %s module around (as %s), which is not followed", lastModule(p), p)
	}
}

// name judges a name used as a value: a module that reaches process
// functions, put in a container, passed, returned or called, is not
// followed any further, so it asks.
func (u *unit) name(n *ast.Name) {
	if u.bases[n] {
		return
	}
	p, ok := u.aliases[n.Id]
	if !ok || strings.Contains(p, ".") {
		return
	}
	if valueModules()[p] {
		u.ask(n, "passes the %s module around, which is not followed", p)
	}
}

func (u *unit) subscript(n *ast.Subscript) {
	if u.resolve(n.Value) == "sys.modules" {
		u.ask(n, "looks a module up in sys.modules")
	}
	if call, ok := n.Value.(*ast.Call); ok {
		if f := u.resolve(call.Func); f == "builtins.globals" || f == "builtins.locals" {
			if s, ok := literal(n.Slice); !ok || strings.HasPrefix(s, "__") {
				u.ask(n, "looks names up in %s() by a computed or special key", strings.TrimPrefix(f, "builtins."))
			}
		}
	}
}

// pathTarget asks for assignments to sys.path.
func (u *unit) pathTarget(t ast.Expr) {
	if s, ok := t.(*ast.Subscript); ok {
		t = s.Value
	}
	if u.resolve(t) == "sys.path" {
		u.ask(t, "changes sys.path, so imports may load code that is not judged")
	}
}

func (u *unit) call(n *ast.Call) {
	f := u.resolve(n.Func)
	switch f {
	case "builtins.eval", "builtins.exec", "builtins.compile":
		name := strings.TrimPrefix(f, "builtins.")
		a := arg(n, 0, "source")
		if s, ok := literal(a); ok {
			u.c.source(fmt.Sprintf("%s string at %s", name, u.where(n)), s, u.depth+1)
			return
		}
		u.ask(n, "%s of a computed string runs code that is not judged", name)
	case "builtins.__import__", "importlib.__import__", "importlib.import_module":
		s, ok := literal(arg(n, 0, "name"))
		if !ok {
			u.ask(n, "imports a module whose name is computed at run time")
			return
		}
		u.module(n, s)
		if valueModules()[topModule(s)] {
			u.ask(n, "imports %s dynamically, which is not followed", s)
		}
	case "builtins.getattr", "builtins.hasattr", "builtins.setattr", "builtins.delattr":
		u.getattr(n, f)
	case "operator.attrgetter", "operator.methodcaller":
		for _, a := range n.Args {
			if s, ok := literal(a); ok && dangerousName(s) {
				u.ask(n, "%s(%q) reaches %s, which is not followed", strings.TrimPrefix(f, "operator."), s, s)
			}
		}
	case "numpy.load":
		for _, k := range n.Keywords {
			if c, ok := k.Value.(*ast.Constant); k.Arg == "allow_pickle" && (!ok || c.Kind != ast.False && c.Kind != ast.None) {
				u.ask(n, "numpy.load with allow_pickle can run any code while deserializing")
			}
		}
	case "yaml.load", "yaml.load_all":
		if !safeYAMLLoader(u, n) {
			u.ask(n, "%s without a safe loader can run code while deserializing", f)
		}
	case "torch.load":
		if !keywordTrue(n, "weights_only") {
			u.ask(n, "torch.load without weights_only=True can run any code while deserializing")
		}
	case "builtins.vars":
		if base := u.resolve(arg(n, 0, "")); base != "" {
			u.ask(n, "reads the namespace of %s", base)
		}
	case "builtins.breakpoint":
		u.ask(n, "breakpoint() starts a debugger that runs what it reads")
	}
}

// getattr judges getattr and its family: a literal name is judged as the
// attribute it names (whatever the object: __subclasses__ and os.system
// ask); a computed name on a module asks.
func (u *unit) getattr(n *ast.Call, f string) {
	if s, ok := literal(arg(n, 1, "")); ok {
		if why, bad := gadgets()[s]; bad {
			u.ask(n, "%s(..., %q) reaches %s", strings.TrimPrefix(f, "builtins."), s, why)
			return
		}
		p := u.resolve(n)
		if f == "builtins.getattr" {
			if why := pathRisk(p); why != "" {
				u.ask(n, "uses %s, %s", p, why)
			}
		}
		return
	}
	if base := u.resolve(arg(n, 0, "")); base != "" {
		u.ask(n, "looks up an attribute of %s by a computed name", base)
	}
}

// safeYAMLLoader reports whether yaml.load gets a safe loader.
func safeYAMLLoader(u *unit, n *ast.Call) bool {
	l := arg(n, 1, "Loader")
	if l == nil {
		return false
	}
	switch u.resolve(l) {
	case "yaml.SafeLoader", "yaml.CSafeLoader", "yaml.BaseLoader", "yaml.CBaseLoader":
		return true
	}
	return false
}

func keywordTrue(n *ast.Call, name string) bool {
	for _, k := range n.Keywords {
		if c, ok := k.Value.(*ast.Constant); k.Arg == name && ok && c.Kind == ast.True {
			return true
		}
	}
	return false
}

// module judges an imported module by name.
func (u *unit) module(n ast.Node, name string) {
	if why := moduleRisk(name); why != "" {
		u.ask(n, "imports %s, %s", name, why)
		return
	}
	if why := networkModule(name); why != "" {
		u.c.needNetwork(u.where(n), "imports "+name+", "+why)
	}
	u.local(n, name)
}

// local judges a module that is a local file, once.
func (u *unit) local(n ast.Node, name string) {
	if u.c.opts.Module == nil || name == "" {
		return
	}
	// "import a.b.c" runs a/__init__.py, a/b/__init__.py and a/b/c.py.
	parts := strings.Split(name, ".")
	for i := range parts {
		mod := strings.Join(parts[:i+1], ".")
		if u.c.modulesSeen[mod] {
			continue
		}
		u.c.modulesSeen[mod] = true
		if src, ok := u.c.opts.Module(mod); ok {
			u.c.source("module "+mod, string(src), u.depth+1)
		}
	}
}
