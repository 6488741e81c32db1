// Package pyrisk decides whether Python code may run without asking the
// operator in the `safe` autonomy level: it parses the code with the
// project's own Python reader (package pysrc) and looks for process
// spawning, code execution and shell escapes, never by matching text.
//
//	v := pyrisk.Classify("import subprocess\nsubprocess.run(['ls'])", nil)
//	// v.Risky == true
//	// v.Reasons == ["line 1: imports subprocess, which runs other programs", ...]
//
// Where lcp has its kernel sandbox, the sandbox contains all of that and
// only Verdict.Needs matter: the network (imports of networking modules,
// URLs fetched) and writes to absolute paths outside the workspace. Where
// it has none, safe mode asks for Reasons and for Writes (files written,
// deleted or moved: nothing proves such code harmless).
//
// # What asks
//
//   - importing a module that spawns processes, runs code given as text or
//     escapes to native code: subprocess, multiprocessing, pty, ctypes,
//     cffi, pexpect, sh, plumbum, sarge, invoke, fabric, webbrowser,
//     runpy, code, pdb, bdb, imp, pip, venv, distutils.spawn, zipimport
//     and their submodules;
//   - using (calling, referencing, importing by name) os.system, os.popen,
//     os.fork, os.forkpty, os.exec*, os.spawn*, os.posix_spawn*,
//     os.startfile (also through posix and nt), asyncio.create_subprocess_*
//     and any .subprocess_exec or .subprocess_shell, ProcessPoolExecutor,
//     platform.popen, site.addsitedir, importlib's file loaders, pkgutil's
//     loaders, types.CodeType and types.FunctionType, timeit, cProfile,
//     profile, trace and doctest runners, logging.config's dictConfig,
//     fileConfig and listen, gc's object walks, breakpoint(), and
//     deserializers that can run code (pickle and its private loaders,
//     marshal, dill, shelve, joblib, jsonpickle, torch.load without
//     weights_only, yaml.load without a safe loader, pandas.read_pickle,
//     numpy.load with allow_pickle);
//   - the same reached through another module (shutil.os.system,
//     logging.os.popen, tempfile._os): paths are judged again from the
//     last re-exported module on the way;
//   - a module that reaches those functions (os, sys, subprocess,
//     builtins, shutil, importlib, ...) used as a value — put in a list or
//     a dict, passed to a function, returned by a lambda — since its uses
//     are not followed any further; __import__ and import_module of such a
//     module;
//   - eval, exec and compile of anything but a string literal (a literal is
//     parsed and judged like the rest of the code);
//   - __import__ and importlib.import_module of a computed name, or of a
//     literal name that asks; getattr (and hasattr, setattr, attrgetter,
//     methodcaller) with a computed name on a module or a literal name that
//     reaches code; vars() or __dict__ of a module, sys.modules lookups,
//     changes to sys.path, and the introspection gadgets __subclasses__,
//     __globals__, __builtins__, __code__, __getattribute__, __loader__,
//     frames' f_globals, f_locals and f_builtins, generators' gi_frame;
//   - writing a file Python can import (.py, .pth, .so, ...), or one whose
//     name is computed, and importing modules afterwards;
//   - star imports from os, posix, nt and asyncio;
//   - code that the reader cannot parse.
//
// Names are followed through import aliases (import os as o; from os
// import system as s) and simple assignments (m = os). Modules the code
// imports that are local files (Options.Module finds them, e.g. in the
// workspace) are judged too, recursively.
//
// Everything else runs: arithmetic, data science, plotting, document
// generation, networking. This is a judgement of the code, not a
// boundary: the sandbox is.
package pyrisk

import (
	"fmt"
	"os"
	"strings"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/parser"
	"github.com/lcptools/lcp/sandbox"
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
	// Needs are the permissions beyond a sandbox the code appears to
	// need (the network, writes outside the workspace): inside the
	// sandbox, safe mode asks only for these.
	Needs []sandbox.Permission
	// Writes say where the code writes, deletes or moves files, and Reads
	// where it reads credentials or the home folder. Without a sandbox,
	// safe mode asks for these too: nothing proves such code harmless
	// (Risky does not count them).
	Writes []string
	Reads  []string
}

// Options configure Classify.
type Options struct {
	// Module returns the source of a module the code imports when it is a
	// local file whose content must be judged too (a module of the
	// workspace); ok false for everything else (the standard library,
	// installed packages).
	Module func(name string) (src []byte, ok bool)
	// Workspace is the folder the code runs in: writes to absolute paths
	// outside it are permissions beyond the sandbox.
	Workspace string
	// Home is the home folder, whose reads are noted; "" means the
	// current user's.
	Home string
}

// Classify judges Python source code.
func Classify(code string, opts *Options) Verdict {
	if opts == nil {
		opts = &Options{}
	}
	if opts.Home == "" {
		o := *opts
		o.Home, _ = os.UserHomeDir()
		opts = &o
	}
	c := &classifier{opts: opts, seen: map[string]bool{}, modulesSeen: map[string]bool{}}
	c.source("", code, 0)
	return Verdict{Risky: len(c.reasons) > 0, Reasons: c.reasons, Needs: c.needs, Writes: c.writes, Reads: c.reads}
}

type classifier struct {
	opts        *Options
	reasons     []string
	needs       []sandbox.Permission
	writes      []string
	reads       []string
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
	// bases are the names and attributes used as something else than a
	// value: the object of an attribute, an assignment's target or the
	// whole value of a simple alias.
	bases   map[ast.Node]bool
	effects effects
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
	u := &unit{c: c, label: label, src: src, depth: depth, aliases: map[string]string{"__builtins__": "builtins"},
		bases: map[ast.Node]bool{}}
	u.bind(mod)
	ast.Inspect(mod, func(n ast.Node) bool {
		if n != nil {
			u.visit(n)
		}
		return true
	})
	u.effects.finish(u)
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
