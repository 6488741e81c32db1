package shell

import (
	"fmt"
	"os"
	"strings"

	"github.com/lcptools/lcp/sandbox"
	"mvdan.cc/sh/v3/syntax"
)

// MaxCommandLen is the longest command Classify judges; longer ones ask.
const MaxCommandLen = 64 << 10

// Decision is what safe mode does with a command.
type Decision int

const (
	// Run: every command is on the read-only allow-list and nothing writes
	// outside the workspace; safe mode runs it without asking.
	Run Decision = iota + 1
	// Ask: safe mode asks the operator first.
	Ask
)

// String returns "run" or "ask".
func (d Decision) String() string {
	switch d {
	case Run:
		return "run"
	case Ask:
		return "ask"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Verdict is the result of Classify.
type Verdict struct {
	Decision Decision
	// Reasons say, one per finding, why the command needs approval; they
	// are written for the operator. Empty when Decision is Run.
	Reasons []string
	// Needs are the permissions beyond a sandbox that the command appears
	// to need (the network, writes outside the workspace, the host
	// itself, writes into .git), each with its reason: inside the
	// sandbox, safe mode asks only for these. A subset of what Reasons
	// say, except writes into .git that are harmless on the host (git
	// add: the index and new objects), which a Run verdict can need in a
	// sandbox that shows .git read-only.
	Needs []sandbox.Permission
}

// Options configure Classify.
type Options struct {
	// Workspace is the directory the command runs in. Writes (redirections,
	// cp, mv, mkdir, touch, tee, sed -i, sort -o, ...) are allowed only
	// below it; symbolic links that exist are resolved. Empty: only
	// relative paths that do not climb out with ".." count as inside.
	Workspace string
	// Home is the directory "~" stands for; empty means the current
	// user's home directory.
	Home string
	// Python, when set, judges Python code that python3 -c or python3
	// SCRIPT.py would run with dir first on sys.path: the reasons it is
	// not proven harmless, none when it is. Without it, Python asks.
	Python func(code, dir string) []string
}

// Classify parses command as bash and decides whether safe mode may run it
// without asking. Every command of every list, pipeline, subshell, function
// body, command and process substitution, arithmetic expression, here-doc
// and assignment value is judged; the command runs directly only if all of
// them pass. Anything that cannot be judged asks. Classify never panics.
func Classify(command string, opts *Options) (v Verdict) {
	return classify(command, opts, 0)
}

// classify is Classify of a command found depth levels down (a makefile's
// recipe).
func classify(command string, opts *Options, depth int) (v Verdict) {
	if opts == nil {
		opts = &Options{}
	}
	if len(command) > MaxCommandLen {
		return Verdict{Decision: Ask, Reasons: []string{fmt.Sprintf("the command is longer than %d bytes and is not judged", MaxCommandLen)}}
	}
	if strings.IndexByte(command, 0) >= 0 {
		return Verdict{Decision: Ask, Reasons: []string{"the command contains a NUL byte"}}
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return Verdict{Decision: Ask, Reasons: []string{"the command cannot be parsed: " + err.Error()}}
	}
	home := opts.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	c := &classifier{src: command, paths: newPathJudge(opts.Workspace, home), seen: map[string]bool{},
		python: opts.Python, depth: depth}
	defer func() {
		// The walker must not take the process down on a tree shape it
		// did not expect; such a command is simply not judged.
		if r := recover(); r != nil {
			v = Verdict{Decision: Ask, Reasons: []string{fmt.Sprintf("the command could not be judged (%v)", r)}}
		}
	}()
	c.cwdMoved = changesDir(file)
	syntax.Walk(file, c.visit)
	if len(c.reasons) == 0 {
		return Verdict{Decision: Run, Needs: c.needs}
	}
	if c.more > 0 {
		c.reasons = append(c.reasons, fmt.Sprintf("... and %d more findings", c.more))
	}
	return Verdict{Decision: Ask, Reasons: c.reasons, Needs: c.needs}
}

type classifier struct {
	src      string
	paths    pathJudge
	cwdMoved bool // some command changes directory: relative writes cannot be judged
	reasons  []string
	more     int // findings beyond maxReasons
	seen     map[string]bool
	needs    []sandbox.Permission
	gitRisk  *string // gitConfigRisk, once read
	python   func(code, dir string) []string
	depth    int // of nested judgements (makefile recipes)
}

// maxReasons bounds the reasons shown to the operator.
const maxReasons = 20

// ask records a reason, attached to the source text of n.
func (c *classifier) ask(n syntax.Node, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if n != nil {
		msg = fmt.Sprintf("`%s`: %s", c.snippet(n), msg)
	}
	if c.seen[msg] {
		return
	}
	c.seen[msg] = true
	if len(c.reasons) < maxReasons {
		c.reasons = append(c.reasons, msg)
	} else {
		c.more++
	}
}

// need records a reason that is also a permission beyond the sandbox.
func (c *classifier) need(n syntax.Node, kind sandbox.PermissionKind, path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if n != nil {
		msg = fmt.Sprintf("`%s`: %s", c.snippet(n), msg)
	}
	c.ask(nil, "%s", msg)
	for _, p := range c.needs {
		if p.Kind == kind && p.Path == path {
			return
		}
	}
	if len(c.needs) < maxReasons {
		c.needs = append(c.needs, sandbox.Permission{Kind: kind, Path: path, Reason: msg})
	}
}

// judged records the verdict of a judge: a reason, and the permission
// it implies, if any.
func (c *classifier) judged(n syntax.Node, j judgement) {
	if j.why == "" {
		return
	}
	if j.perm == "" {
		c.ask(n, "%s", j.why)
		return
	}
	c.need(n, j.perm, j.path, "%s", j.why)
}

// snippet is the source text of n on one line, shortened.
func (c *classifier) snippet(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(c.src) || start >= end {
		return "?"
	}
	s := strings.Join(strings.Fields(c.src[start:end]), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "..."
	}
	return s
}

// changesDir reports whether any command in the tree may change the
// working directory. Loops make order meaningless, so one cd anywhere puts
// every relative write in doubt.
func changesDir(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			switch analyze(call.Args[0]).text {
			case "cd", "pushd", "popd":
				found = true
			}
		}
		return !found
	})
	return found
}

func (c *classifier) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.Stmt:
		c.stmt(n)
	case *syntax.CallExpr:
		c.call(n)
	case *syntax.DeclClause:
		c.decl(n)
	case *syntax.Assign:
		if n.Index != nil {
			c.arith(n, n.Index)
		}
	case *syntax.ArrayElem:
		if n.Index != nil {
			c.arith(n, n.Index)
		}
	case *syntax.ArithmExp:
		c.arith(n, n.X)
	case *syntax.ArithmCmd:
		c.arith(n, n.X)
	case *syntax.LetClause:
		for _, e := range n.Exprs {
			c.arith(n, e)
		}
	case *syntax.CStyleLoop:
		for _, e := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
			if e != nil {
				c.arith(n, e)
			}
		}
	case *syntax.ParamExp:
		c.param(n)
	case *syntax.TestClause:
		c.test(n.X)
	case *syntax.WordIter:
		// for NAME in ...; select NAME in ...: an assignment.
		if n.Name != nil {
			c.assign(n, n.Name.Value)
		}
	case *syntax.CoprocClause:
		c.ask(n, "coprocesses are not judged")
	case *syntax.TestDecl:
		c.ask(n, "bats test declarations are not judged")
	}
	return true
}

func (c *classifier) stmt(s *syntax.Stmt) {
	if s.Coprocess || s.Disown {
		c.ask(s, "coprocesses are not judged")
	}
	for _, r := range s.Redirs {
		c.redirect(r)
	}
}

func (c *classifier) redirect(r *syntax.Redirect) {
	if r.N != nil && strings.ContainsAny(r.N.Value, "[$`") {
		c.ask(r, "the file descriptor variable has a subscript")
	}
	switch r.Op {
	case syntax.AppOut, syntax.AppClob, syntax.AppAll, syntax.AppAllClob:
		c.writeTarget(r, r.Word, false)
	case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob, syntax.RdrInOut:
		c.writeTarget(r, r.Word, true)
	case syntax.DplOut, syntax.DplIn:
		w := analyze(r.Word)
		if w.static && (w.text == "-" || isDigits(strings.TrimSuffix(w.text, "-"))) {
			return // duplicating or closing a descriptor
		}
		if r.Op == syntax.DplOut {
			c.writeTarget(r, r.Word, true) // >&file is &>file
		} else {
			c.readTarget(r, r.Word)
		}
	case syntax.RdrIn:
		c.readTarget(r, r.Word)
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		// The body's expansions are walked like any word.
	default:
		c.ask(r, "unknown redirection %s", r.Op)
	}
}

// writeTarget judges a word naming a file that is written; replace says
// that an existing file loses its content (>, tee, cp), as opposed to
// growing (>>) or being created.
func (c *classifier) writeTarget(n syntax.Node, w *syntax.Word, replace bool) {
	a := analyze(w)
	if procPath(a.text) {
		c.ask(n, "writes through /proc into another process's files")
		return
	}
	p := a.text
	switch {
	case a.static:
	case a.tilde && !a.splits && !strings.ContainsAny(a.text[1:], "*?[{"):
		e, ok := c.paths.expandTilde(a.text)
		if !ok {
			c.need(n, sandbox.Unsandboxed, "", "writes to a path under another user's home")
			return
		}
		p = e
	default:
		c.ask(n, "writes to a path computed at run time")
		return
	}
	c.judged(n, c.paths.writeVerdict(p, c.cwdMoved, replace))
}

// readTarget judges a word naming a file that is read by a redirection.
func (c *classifier) readTarget(n syntax.Node, w *syntax.Word) {
	a := analyze(w)
	if !a.static && !a.tilde {
		// bash opens /dev/tcp/host/port itself: an expanded name could
		// be a network connection.
		c.ask(n, "reads from a path computed at run time")
		return
	}
	if strings.HasPrefix(a.text, "/dev/tcp/") || strings.HasPrefix(a.text, "/dev/udp/") {
		c.need(n, sandbox.Network, "", "opens a network connection through %s", a.text)
		return
	}
	if procPath(a.text) {
		c.ask(n, "reads another process's files through /proc")
		return
	}
	if c.paths.sensitiveRead(a.text) {
		c.ask(n, "reads credentials (%s)", a.text)
	}
}

func (c *classifier) call(n *syntax.CallExpr) {
	for _, as := range n.Assigns {
		// IFS before a command changes only how that command (read)
		// splits: the command's own words were split before.
		if as.Name != nil && !(as.Name.Value == "IFS" && len(n.Args) > 0) {
			c.assign(as, as.Name.Value)
		}
	}
	if len(n.Args) == 0 {
		return
	}
	c.argv(n, n.Args)
}

// argv judges one command line: a name and its arguments. Wrappers (env,
// timeout, nice, command, ...) call it again with the command they run.
func (c *classifier) argv(n syntax.Node, words []*syntax.Word) {
	if len(words) == 0 {
		return
	}
	for _, w := range words[1:] {
		a := analyze(w)
		switch {
		case procPath(a.text):
			c.ask(n, "reaches another process's files through /proc (%s)", a.text)
		case c.paths.sensitiveRead(a.text):
			c.ask(n, "reads credentials (%s)", a.text)
		}
	}
	head := analyze(words[0])
	if !head.static {
		c.ask(n, "the command name is computed at run time")
		return
	}
	name := head.text
	if strings.Contains(name, "/") {
		base, ok := systemProgram(name)
		if !ok {
			c.ask(n, "runs a program by path (%s)", name)
			return
		}
		name = base
	}
	if versionProbe(name, words[1:]) {
		return
	}
	check, ok := allowed(name)
	if !ok && c.proven(n, name, words[1:]) {
		return
	}
	if !ok {
		c.judged(n, unknownReason(name, words[1:]))
		return
	}
	check(c, n, name, words[1:])
}

// assign judges a variable assignment.
func (c *classifier) assign(n syntax.Node, name string) {
	if why := riskyVariable(name); why != "" {
		c.ask(n, "sets %s, %s", name, why)
	}
}

func (c *classifier) decl(d *syntax.DeclClause) {
	switch d.Variant.Value {
	case "declare", "local", "export", "readonly", "typeset":
	default:
		c.ask(d, "%s is not judged", d.Variant.Value)
		return
	}
	for _, as := range d.Args {
		if as.Name != nil {
			c.assign(as, as.Name.Value)
			continue
		}
		if as.Value == nil {
			continue
		}
		a := analyze(as.Value)
		if !a.static {
			c.ask(d, "declares a name computed at run time")
			continue
		}
		if strings.HasPrefix(a.text, "-") || strings.HasPrefix(a.text, "+") {
			if strings.ContainsAny(a.text[1:], "in") {
				// -i evaluates every later assignment as arithmetic;
				// -n makes a reference whose target is looked up late.
				c.ask(d, "%s %s makes later assignments evaluate code", d.Variant.Value, a.text)
			}
			continue
		}
		c.assign(d, a.text)
	}
}

// arith judges an arithmetic expression. Bash evaluates the value of every
// variable named in arithmetic as arithmetic again, and an array subscript
// in that value runs command substitutions: x='a[$(rm -rf ~)]'; echo
// $((x)). So only numbers and the shell's own counters are accepted.
func (c *classifier) arith(n syntax.Node, e syntax.ArithmExpr) {
	if why := arithRisk(e); why != "" {
		c.ask(n, "%s", why)
	}
}

func arithRisk(e syntax.ArithmExpr) string {
	switch e := e.(type) {
	case *syntax.BinaryArithm:
		if r := arithRisk(e.X); r != "" {
			return r
		}
		return arithRisk(e.Y)
	case *syntax.UnaryArithm:
		return arithRisk(e.X)
	case *syntax.ParenArithm:
		return arithRisk(e.X)
	case *syntax.Word:
		if isNumber(e.Lit()) {
			return ""
		}
		if len(e.Parts) == 1 {
			if p, ok := e.Parts[0].(*syntax.ParamExp); ok && p.Param != nil && isShellCounter(p) {
				return ""
			}
		}
		return "arithmetic on variables can run code hidden in their values"
	}
	return "arithmetic of this form is not judged"
}

// isShellCounter reports whether p is a plain $#, $?, $$, $! or positional
// parameter: values the shell sets to numbers or that are empty under -c.
func isShellCounter(p *syntax.ParamExp) bool {
	if p.Excl || p.Length || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 {
		return false
	}
	v := p.Param.Value
	return v == "#" || v == "?" || v == "$" || v == "!" || isDigits(v)
}

func (c *classifier) param(p *syntax.ParamExp) {
	idx, _ := p.Index.(*syntax.Word)
	allIndex := idx != nil && (idx.Lit() == "@" || idx.Lit() == "*")
	if p.Excl && p.Names == 0 && !allIndex {
		c.ask(p, "indirect expansion can run code hidden in a variable's value")
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps {
		if op := p.Exp.Word; op == nil || !strings.ContainsAny(op.Lit(), "QEAaUuLKk") || strings.Contains(op.Lit(), "P") {
			c.ask(p, "prompt expansion runs command substitutions")
		}
	}
	if p.Index != nil && !allIndex {
		c.arith(p, p.Index)
	}
	if p.Slice != nil {
		if p.Slice.Offset != nil {
			c.arith(p, p.Slice.Offset)
		}
		if p.Slice.Length != nil {
			c.arith(p, p.Slice.Length)
		}
	}
	if p.Flags != nil || p.NestedParam != nil {
		c.ask(p, "zsh expansions are not judged")
	}
	if p.Exp != nil && p.Param != nil && (p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull) {
		c.assign(p, p.Param.Value) // ${NAME:=value} assigns
	}
}

// test judges [[ ]]: -v and -R look up subscripts, and the -eq family
// evaluates its operands as arithmetic.
func (c *classifier) test(e syntax.TestExpr) {
	switch e := e.(type) {
	case *syntax.UnaryTest:
		if e.Op == syntax.TsVarSet || e.Op == syntax.TsRefVar {
			c.ask(e, "variable tests evaluate subscripts, which can run code")
		}
		c.test(e.X)
	case *syntax.BinaryTest:
		switch e.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, x := range []syntax.TestExpr{e.X, e.Y} {
				if w, ok := x.(*syntax.Word); ok {
					c.arith(e, w)
				} else {
					c.ask(e, "arithmetic comparison of this form is not judged")
				}
			}
			return
		}
		c.test(e.X)
		c.test(e.Y)
	case *syntax.ParenTest:
		c.test(e.X)
	}
}
