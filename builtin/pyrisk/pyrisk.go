// Package pyrisk decides whether Python code may run without asking the
// operator in the `safe` autonomy level: it parses the code with the
// project's own Python reader (package pysrc) and looks for process
// spawning and shell escapes, never by matching text.
//
//	v := pyrisk.Classify("import subprocess\nsubprocess.run(['ls'])", nil)
//	// v.Risky == true
//	// v.Reasons == ["line 1: imports subprocess, which runs other programs", ...]
//
// # What asks
//
//   - importing a module that spawns processes or escapes to native code:
//     subprocess, multiprocessing, pty, ctypes, cffi, pexpect, sh, plumbum,
//     sarge, invoke, fabric, webbrowser, runpy, code, pip, venv,
//     distutils.spawn, zipimport and their submodules;
//   - using (calling, referencing, importing by name) os.system, os.popen,
//     os.fork, os.forkpty, os.exec*, os.spawn*, os.posix_spawn*,
//     os.startfile (also through posix and nt), asyncio.create_subprocess_*,
//     concurrent.futures.ProcessPoolExecutor, platform.popen, site.addsitedir,
//     importlib.util.spec_from_file_location, importlib.machinery's file
//     loaders, types.CodeType and types.FunctionType, and deserializers that
//     can run code (pickle, marshal, dill, shelve, pandas.read_pickle,
//     numpy.load with allow_pickle);
//   - eval, exec and compile of anything but a string literal (a literal is
//     parsed and judged like the rest of the code);
//   - __import__ and importlib.import_module of a computed name, or of a
//     literal name that asks; getattr on a module with a computed name;
//     vars() or __dict__ of a module, sys.modules lookups, changes to
//     sys.path, and the introspection gadgets __subclasses__, __globals__,
//     __builtins__, __code__, f_globals, f_builtins;
//   - star imports from os, posix, nt and asyncio;
//   - code that the reader cannot parse.
//
// Names are followed through import aliases (import os as o; from os
// import system as s) and simple assignments (m = os). Modules the code
// imports that are local files (Options.Module finds them, e.g. in the
// workspace) are judged too, recursively.
//
// Everything else runs: arithmetic, data science, plotting, document
// generation, file I/O, networking. This is the boundary the LCP autonomy
// matrix draws for `safe`; it is not a sandbox.
package pyrisk

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/parser"
)

// MaxDepth bounds the nesting of judged literals (exec of exec of ...) and
// local modules.
const MaxDepth = 8

// Verdict is the result of Classify.
type Verdict struct {
	// Risky is true when safe mode must ask before running the code.
	Risky bool
	// Reasons say, one per finding, what made the code risky; they are
	// written for the operator.
	Reasons []string
}

// Options configure Classify.
type Options struct {
	// Module returns the source of a module the code imports when it is a
	// local file whose content must be judged too (a module of the
	// workspace); ok false for everything else (the standard library,
	// installed packages).
	Module func(name string) (src []byte, ok bool)
}

// Classify judges Python source code.
func Classify(code string, opts *Options) Verdict {
	if opts == nil {
		opts = &Options{}
	}
	c := &classifier{opts: opts, seen: map[string]bool{}, modulesSeen: map[string]bool{}}
	c.source("", code, 0)
	return Verdict{Risky: len(c.reasons) > 0, Reasons: c.reasons}
}

type classifier struct {
	opts        *Options
	reasons     []string
	seen        map[string]bool
	modulesSeen map[string]bool
}

const maxReasons = 20

func (c *classifier) ask(where, msg string) {
	r := msg
	if where != "" {
		r = where + ": " + msg
	}
	if c.seen[r] || len(c.reasons) >= maxReasons {
		return
	}
	c.seen[r] = true
	c.reasons = append(c.reasons, r)
}

// unit is one piece of source being judged: the code, a literal given to
// exec, or a local module.
type unit struct {
	c       *classifier
	label   string // "" for the code itself, "module x", "exec string"
	src     string
	depth   int
	aliases map[string]string // local name -> dotted module path or module.attr
}

func (c *classifier) source(label, src string, depth int) {
	if depth > MaxDepth {
		c.ask(label, "code nested too deeply to be judged")
		return
	}
	mod, err := parser.ParseFile("code.py", []byte(src))
	if err != nil {
		first := strings.SplitN(err.Error(), "\n", 2)[0]
		c.ask(label, "the code cannot be parsed ("+strings.TrimPrefix(first, "code.py:")+")")
		return
	}
	u := &unit{c: c, label: label, src: src, depth: depth, aliases: map[string]string{"__builtins__": "builtins"}}
	u.bind(mod)
	ast.Inspect(mod, func(n ast.Node) bool {
		if n != nil {
			u.visit(n)
		}
		return true
	})
}

// where returns a location for reasons: the line, and the unit's label.
func (u *unit) where(n ast.Node) string {
	line := 1
	if off := int(n.Pos()) - 1; off > 0 && off <= len(u.src) {
		line += strings.Count(u.src[:off], "\n")
	}
	if u.label != "" {
		return fmt.Sprintf("%s, line %d", u.label, line)
	}
	return fmt.Sprintf("line %d", line)
}

func (u *unit) ask(n ast.Node, format string, args ...any) {
	u.c.ask(u.where(n), fmt.Sprintf(format, args...))
}

// bind collects the names the code binds to modules and module attributes:
// imports anywhere, and simple assignments of such names, to a fixpoint.
// It is flow-insensitive on purpose: a name bound to os anywhere is os
// everywhere.
func (u *unit) bind(mod *ast.Module) {
	ast.Inspect(mod, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Import:
			for _, a := range n.Names {
				if a.AsName != "" {
					u.aliases[a.AsName] = a.Name
				} else {
					top, _, _ := strings.Cut(a.Name, ".")
					u.aliases[top] = top
				}
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
		if builtinNames[e.Id] {
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
var builtinNames = map[string]bool{"eval": true, "exec": true, "compile": true, "__import__": true,
	"getattr": true, "vars": true, "globals": true, "locals": true}

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

func (u *unit) visit(n ast.Node) {
	switch n := n.(type) {
	case *ast.Import:
		for _, a := range n.Names {
			u.module(n, a.Name)
		}
	case *ast.ImportFrom:
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
				if starRisky[n.Module] {
					u.ask(n, "imports everything from %s, including its process functions", n.Module)
				}
				continue
			}
			full := n.Module + "." + a.Name
			if why := attrRisk(full); why != "" {
				u.ask(n, "imports %s, %s", full, why)
			} else if why := moduleRisk(full); why != "" {
				u.ask(n, "imports %s, %s", full, why)
			} else {
				u.local(n, full)
			}
		}
	case *ast.Attribute:
		switch n.Attr {
		case "__subclasses__", "__globals__", "__builtins__", "__code__", "f_globals", "f_builtins":
			u.ask(n, "uses %s, which reaches code that is not judged", n.Attr)
			return
		case "__dict__":
			if u.resolve(n.Value) != "" {
				u.ask(n, "reads a module's namespace through __dict__")
			}
			return
		}
		p := u.resolve(n)
		if why := attrRisk(p); why != "" {
			u.ask(n, "uses %s, %s", p, why)
		}
		if why := moduleRisk(p); why != "" && strings.Count(p, ".") > 0 {
			u.ask(n, "uses %s, %s", p, why)
		}
		if p == "sys.path.append" || p == "sys.path.insert" || p == "sys.path.extend" || p == "sys.path.__setitem__" {
			u.ask(n, "changes sys.path, so imports may load code that is not judged")
		}
	case *ast.Assign:
		for _, t := range n.Targets {
			u.pathTarget(t)
		}
	case *ast.AugAssign:
		u.pathTarget(n.Target)
	case *ast.Subscript:
		switch u.resolve(n.Value) {
		case "sys.modules":
			u.ask(n, "looks a module up in sys.modules")
		}
		if call, ok := n.Value.(*ast.Call); ok {
			if f := u.resolve(call.Func); f == "builtins.globals" || f == "builtins.locals" {
				if s, ok := literal(n.Slice); !ok || strings.HasPrefix(s, "__") {
					u.ask(n, "looks names up in %s() by a computed or special key", strings.TrimPrefix(f, "builtins."))
				}
			}
		}
	case *ast.Call:
		u.call(n)
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
	case "builtins.getattr":
		if _, ok := literal(arg(n, 1, "")); ok {
			p := u.resolve(n)
			if why := attrRisk(p); why != "" {
				u.ask(n, "uses %s, %s", p, why)
			}
			return
		}
		if base := u.resolve(arg(n, 0, "")); base != "" {
			u.ask(n, "looks up an attribute of %s by a computed name", base)
		}
	case "numpy.load":
		for _, k := range n.Keywords {
			if c, ok := k.Value.(*ast.Constant); k.Arg == "allow_pickle" && (!ok || c.Kind != ast.False && c.Kind != ast.None) {
				u.ask(n, "numpy.load with allow_pickle can run any code while deserializing")
			}
		}
	case "builtins.vars":
		if base := u.resolve(arg(n, 0, "")); base != "" {
			u.ask(n, "reads the namespace of %s", base)
		}
	}
}

// module judges an imported module by name.
func (u *unit) module(n ast.Node, name string) {
	if why := moduleRisk(name); why != "" {
		u.ask(n, "imports %s, %s", name, why)
		return
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

// riskyModules run other programs or native code when imported or used.
var riskyModules = map[string]string{
	"subprocess":                 "which runs other programs",
	"_posixsubprocess":           "which runs other programs",
	"multiprocessing":            "which starts processes",
	"pty":                        "which spawns programs on a terminal",
	"ctypes":                     "which calls native code",
	"_ctypes":                    "which calls native code",
	"cffi":                       "which calls native code",
	"pexpect":                    "which runs other programs",
	"sh":                         "which runs other programs",
	"plumbum":                    "which runs other programs",
	"sarge":                      "which runs other programs",
	"delegator":                  "which runs other programs",
	"envoy":                      "which runs other programs",
	"invoke":                     "which runs other programs",
	"fabric":                     "which runs other programs",
	"webbrowser":                 "which starts a browser",
	"runpy":                      "which runs code that is not judged",
	"code":                       "which runs code that is not judged",
	"pip":                        "which installs and runs packages",
	"ensurepip":                  "which installs and runs packages",
	"venv":                       "which runs other programs",
	"distutils.spawn":            "which runs other programs",
	"zipimport":                  "which loads code that is not judged",
	"popen2":                     "which runs other programs",
	"commands":                   "which runs other programs",
	"asyncio.subprocess":         "which runs other programs",
	"concurrent.futures.process": "which starts processes",
}

func moduleRisk(name string) string {
	for p := name; p != ""; {
		if why, ok := riskyModules[p]; ok {
			return why
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return ""
}

// osProcess are the functions of os (and posix, nt) that run programs.
var osProcess = []string{"system", "popen", "popen2", "popen3", "popen4", "fork", "forkpty",
	"execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe",
	"spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe",
	"posix_spawn", "posix_spawnp", "startfile"}

// riskyAttrs maps module.attribute to why using it asks.
var riskyAttrs = map[string]string{
	"asyncio.create_subprocess_exec":           "which runs other programs",
	"asyncio.create_subprocess_shell":          "which runs a shell",
	"concurrent.futures.ProcessPoolExecutor":   "which starts processes",
	"platform.popen":                           "which runs a shell",
	"site.addsitedir":                          "which makes imports load code that is not judged",
	"importlib.util.spec_from_file_location":   "which loads code that is not judged",
	"importlib.machinery.SourceFileLoader":     "which loads code that is not judged",
	"importlib.machinery.SourcelessFileLoader": "which loads code that is not judged",
	"importlib.machinery.ExtensionFileLoader":  "which loads native code",
	"types.CodeType":                           "which builds code that is not judged",
	"types.FunctionType":                       "which builds code that is not judged",
	"pickle.load":                              "which can run any code while deserializing",
	"pickle.loads":                             "which can run any code while deserializing",
	"pickle.Unpickler":                         "which can run any code while deserializing",
	"_pickle.load":                             "which can run any code while deserializing",
	"_pickle.loads":                            "which can run any code while deserializing",
	"_pickle.Unpickler":                        "which can run any code while deserializing",
	"cPickle.loads":                            "which can run any code while deserializing",
	"dill.load":                                "which can run any code while deserializing",
	"dill.loads":                               "which can run any code while deserializing",
	"cloudpickle.load":                         "which can run any code while deserializing",
	"cloudpickle.loads":                        "which can run any code while deserializing",
	"marshal.load":                             "which loads code objects",
	"marshal.loads":                            "which loads code objects",
	"shelve.open":                              "which can run any code while deserializing",
	"pandas.read_pickle":                       "which can run any code while deserializing",
	"builtins.__import__":                      "",
}

func attrRisk(p string) string {
	if p == "" {
		return ""
	}
	mod, attr, ok := cutLast(p)
	if !ok {
		return ""
	}
	if (mod == "os" || mod == "posix" || mod == "nt") && slices.Contains(osProcess, attr) {
		if attr == "system" || attr == "popen" {
			return "which runs a shell"
		}
		return "which runs other programs"
	}
	return riskyAttrs[p]
}

func cutLast(p string) (string, string, bool) {
	i := strings.LastIndexByte(p, '.')
	if i < 0 {
		return "", "", false
	}
	return p[:i], p[i+1:], true
}

// starRisky are modules whose star import brings process functions in.
var starRisky = map[string]bool{"os": true, "posix": true, "nt": true, "asyncio": true, "pickle": true,
	"concurrent.futures": true, "platform": true}

// Reason says why using a module or one of its attributes, named by its
// dotted path ("subprocess.run", "os.system", "pickle.loads"), asks in
// safe mode: the same words as the reasons of Classify, e.g. "which runs
// other programs". It is "" for everything that runs without asking. Static
// analyses that judge calls one by one (lcp check) use it so that both
// agree on what spawns processes.
func Reason(path string) string {
	if why := attrRisk(path); why != "" {
		return why
	}
	return moduleRisk(path)
}
