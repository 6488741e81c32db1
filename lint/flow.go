package lint

import (
	"maps"
	"strconv"
	"strings"
	"sync"

	"github.com/lcptools/lcp/pysrc"
	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/token"
)

// The analysis of one function is a walk over its statements in source
// order with a small state per variable: which facts its value carries (a
// secret, a path made from a parameter, the answer of a question that may
// be None...) and, for the return-shape rule, what shape of value it
// holds. Branches are walked on copies of the state and merged (facts
// united); a branch that ends in return, raise, break or continue does not
// reach the merge, which is what makes `if answer is None: return ...`
// a check. Loops are walked twice. Calls of the module's own functions use
// summaries of those functions, computed once. Nothing is interprocedural
// beyond that, and nothing runs.

// fact is a property of a value.
type fact uint8

const (
	// fSecret: an unmasked secret.
	fSecret fact = 1 << iota
	// fParam: a value made from a tool parameter with no workspace check.
	fParam
	// fResolved: a path made absolute and free of "..".
	fResolved
	// fAnswer: the answer of a user question, None when the user cancelled.
	fAnswer
	// fSecretReq: a question request of type "secret".
	fSecretReq
	// fHandler: the user interaction handler itself.
	fHandler
	// fConfirm: the confirm handler itself.
	fConfirm
	// fTemp: a temporary file's path (tempfile): deleting it is tidying up,
	// not a sensitive step.
	fTemp
)

// carried are the facts that pass through string and path operations.
const carried = fSecret | fParam | fTemp

// shape is what the return-shape rule knows of a value.
type shape struct {
	kind uint8  // shapeUnknown, shapeDict or shapeOther
	keys uint8  // for dicts: keySuccess | keyOutErr
	what string // for others: "a string", "None"...
}

const (
	shapeUnknown uint8 = iota
	shapeDict
	shapeOther
)

const (
	keySuccess uint8 = 1 << iota
	keyOutErr
)

func mergeShape(a, b shape) shape {
	switch {
	case a.kind == shapeDict && b.kind == shapeDict:
		return shape{kind: shapeDict, keys: a.keys & b.keys}
	case a.kind == shapeOther && b.kind == shapeOther:
		if a.what != b.what {
			a.what = "a value that is not a dict"
		}
		return a
	}
	return shape{}
}

// state is what is known at one point of a function: a small list of
// variables (functions have few; copying a list is cheaper than copying
// maps at every branch), indexed by a map once it grows.
type state struct {
	vars []binding
	idx  map[string]int
	dead bool
}

// binding is what is known of one variable.
type binding struct {
	name string
	f    fact
	sh   shape
}

// indexAt is the number of variables from which a state keeps an index.
const indexAt = 24

func newState() *state { return &state{} }

func (s *state) clone() *state {
	c := &state{vars: append(make([]binding, 0, len(s.vars)+4), s.vars...), dead: s.dead}
	if s.idx != nil {
		c.idx = maps.Clone(s.idx)
	}
	return c
}

func (s *state) find(name string) int {
	if s.idx != nil {
		if i, ok := s.idx[name]; ok {
			return i
		}
		return -1
	}
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return i
		}
	}
	return -1
}

func (s *state) add(b binding) {
	s.vars = append(s.vars, b)
	switch {
	case s.idx != nil:
		s.idx[b.name] = len(s.vars) - 1
	case len(s.vars) > indexAt:
		s.idx = make(map[string]int, 2*len(s.vars))
		for i, v := range s.vars {
			s.idx[v.name] = i
		}
	}
}

// facts returns a variable's facts and whether the function bound it.
func (s *state) facts(name string) (fact, bool) {
	if i := s.find(name); i >= 0 {
		return s.vars[i].f, true
	}
	return 0, false
}

func (s *state) shape(name string) (shape, bool) {
	if i := s.find(name); i >= 0 {
		return s.vars[i].sh, true
	}
	return shape{}, false
}

func (s *state) set(name string, f fact, sh shape) {
	if i := s.find(name); i >= 0 {
		s.vars[i].f, s.vars[i].sh = f, sh
		return
	}
	s.add(binding{name, f, sh})
}

// setFacts changes the facts of a bound variable (or binds it).
func (s *state) setFacts(name string, f fact) {
	if i := s.find(name); i >= 0 {
		s.vars[i].f = f
		return
	}
	s.add(binding{name: name, f: f})
}

func (s *state) setShape(name string, sh shape) {
	if i := s.find(name); i >= 0 {
		s.vars[i].sh = sh
	}
}

func (s *state) del(name string) {
	if i := s.find(name); i >= 0 {
		s.vars = append(s.vars[:i], s.vars[i+1:]...)
		if s.idx != nil {
			clear(s.idx)
			for j, v := range s.vars {
				s.idx[v.name] = j
			}
		}
	}
}

// merge joins the states of paths that meet; dead paths do not count.
func merge(states ...*state) *state {
	var first *state
	n := 0
	for _, s := range states {
		if s != nil && !s.dead {
			if first == nil {
				first = s
			}
			n++
		}
	}
	if first == nil {
		return &state{dead: true}
	}
	out := first.clone()
	if n == 1 {
		return out
	}
	for _, s := range states {
		if s == nil || s.dead || s == first {
			continue
		}
		for _, v := range s.vars {
			if i := out.find(v.name); i >= 0 {
				out.vars[i].f |= v.f
				out.vars[i].sh = mergeShape(out.vars[i].sh, v.sh)
			} else {
				out.add(binding{name: v.name, f: v.f})
			}
		}
		for i := range out.vars {
			if s.find(out.vars[i].name) < 0 {
				out.vars[i].sh = shape{}
			}
		}
	}
	return out
}

// mode says what an analysis is for.
type mode uint8

const (
	// modeTool analyses a tool and reports every rule.
	modeTool mode = iota
	// modeHelper analyses another function of the module: it reports
	// secret leaks and unchecked answers, and summarizes the function.
	modeHelper
	// modeParam follows one parameter of a helper through it, reporting
	// nothing.
	modeParam
)

// step is a sensitive step seen before any confirmation.
type step struct {
	node ast.Node
	desc string
}

// summary is what callers need to know of a module function.
type summary struct {
	done, busy bool
	// confirms: the function asks the confirm handler.
	confirms bool
	// asks: the function asks the user a question.
	asks bool
	// maybeNone: some return gives None or an unchecked answer.
	maybeNone bool
	// steps are its sensitive steps not gated inside it.
	steps []step
	// raises: the function has a raise statement (an approval helper that
	// raises on refusal gates even when its result is dropped).
	raises bool
	// ret is the shape of its result.
	ret shape
}

type paramKey struct {
	fn *ast.FunctionDef
	i  int
}

// paramSummary is what happens to one parameter of a helper.
type paramSummary struct {
	busy bool
	// pathSink: the parameter reaches a file operation unchecked.
	pathSink string
	// secretSink: the parameter reaches a print, a log or a result.
	secretSink string
	// contains: the helper checks the parameter (a workspace check or a
	// validation), so callers may treat it as checked.
	contains bool
	// pass: the facts that flow from the parameter to the result.
	pass fact
}

// summary returns (computing once) the summary of a module function,
// reporting its findings on the way.
func (c *checker) summary(fn *ast.FunctionDef) *summary {
	s := c.sums[fn]
	if s == nil {
		s = &summary{}
		c.sums[fn] = s
	}
	if s.done || s.busy {
		return s // busy: a recursive call sees what is known so far
	}
	s.busy = true
	m := modeHelper
	if c.tools[fn] != nil {
		m = modeTool
	}
	a := c.newAnalyzer(fn, m, -1)
	a.sum = s
	a.run()
	s.busy, s.done = false, true
	return s
}

// paramSummary returns (computing once) what happens to parameter i of fn.
func (c *checker) paramSummary(fn *ast.FunctionDef, i int) *paramSummary {
	k := paramKey{fn, i}
	if ps := c.psums[k]; ps != nil {
		return ps
	}
	ps := &paramSummary{busy: true}
	c.psums[k] = ps
	a := c.newAnalyzer(fn, modeParam, i)
	a.ps = ps
	a.sum = &summary{}
	a.run()
	ps.pass = a.retFacts & (carried | fResolved)
	ps.busy = false
	return ps
}

// analyzer walks one function.
type analyzer struct {
	c    *checker
	fn   *ast.FunctionDef
	tool *pysrc.Tool
	mode mode
	// param is the followed parameter in modeParam.
	param int
	sum   *summary
	ps    *paramSummary

	st     *state
	locals map[string]bool
	// aliases are the function's own imports.
	aliases map[string]string
	params  []*ast.Arg
	loops   []*loopFrame

	gated          bool
	ignoredConfirm ast.Node
	steps          []step
	// cancel counts the enclosing branches that run when a question was
	// cancelled.
	cancel int
	// answerAt remembers where an answer variable got its question.
	answerAt map[string]int
	reported map[string]bool
	retFacts fact
	retShape *shape
	hasYield bool
	// work counts the variables copied at branches; past workBudget the
	// walk stops (a generated function with thousands of variables and
	// branches would otherwise take quadratic time).
	work    int
	aborted bool
}

// workBudget bounds the work of the walk of one function.
const workBudget = 2_000_000

type loopFrame struct {
	breaks, continues []*state
}

func (c *checker) newAnalyzer(fn *ast.FunctionDef, m mode, param int) *analyzer {
	a := &analyzer{c: c, fn: fn, tool: c.tools[fn], mode: m, param: param, st: newState(),
		locals: map[string]bool{}, aliases: map[string]string{}, answerAt: map[string]int{}, reported: map[string]bool{}}
	if fn.Args != nil {
		args := fn.Args
		a.params = append(append(append([]*ast.Arg{}, args.PosOnly...), args.Args...), args.KwOnly...)
		if args.VarArg != nil {
			a.locals[args.VarArg.Name] = true
		}
		if args.KwArg != nil {
			a.locals[args.KwArg.Name] = true
		}
	}
	return a
}

// run analyses the function.
func (a *analyzer) run() {
	types := map[string]string{}
	if a.tool != nil {
		for _, p := range a.tool.Params {
			types[p.Name] = p.Type
		}
	}
	for i, p := range a.params {
		if p == nil {
			continue
		}
		a.locals[p.Name] = true
		var f fact
		sh := shape{}
		switch a.mode {
		case modeParam:
			if i == a.param {
				f = fSecret | fParam
			}
		case modeTool:
			if pysrc.IsHiddenParam(p.Name) {
				break
			}
			switch types[p.Name] {
			case "integer", "number", "boolean":
				sh = shape{kind: shapeOther, what: "the parameter " + p.Name}
			case "object":
			default:
				f = fParam
				sh = shape{kind: shapeOther, what: "the parameter " + p.Name}
			}
			if isSecretName(p.Name) {
				f |= fSecret
			}
		case modeHelper:
			if isSecretName(p.Name) {
				f = fSecret
			}
		}
		f |= nameFacts(p.Name) & (fHandler | fConfirm)
		a.st.set(p.Name, f, sh)
	}
	body := a.fn.Body
	if a.mode == modeTool {
		a.description()
	}
	if isStub(body) {
		a.sum.ret = shape{}
		return
	}
	a.stmts(body)
	if a.mode == modeTool {
		a.coercion() // after the walk, which found the function's own imports
	}
	if a.hasYield {
		a.retShape = nil
	}
	if !a.st.dead && !a.aborted {
		// falling off the end returns None
		a.noteReturn(nil, 0)
		if a.mode == modeTool && !a.hasYield && len(body) > 0 {
			last := body[len(body)-1]
			a.report("noncanonical-return", last, a.fn.Name+" can reach the end of its body without returning, so its result is None")
		}
	}
	if a.retShape != nil {
		a.sum.ret = *a.retShape
	}
	a.sum.steps = a.steps
	if a.mode == modeTool && len(a.steps) > 0 {
		a.reportSteps()
	}
}

// isStub reports whether a body is only a docstring and `...`, `pass` or
// `raise NotImplementedError`: a declaration, not an implementation.
func isStub(body []ast.Stmt) bool {
	if len(body) > 0 && isDocstring(body[0]) {
		body = body[1:]
	}
	if len(body) == 0 {
		return true
	}
	if len(body) > 1 {
		return false
	}
	switch s := body[0].(type) {
	case *ast.Pass:
		return true
	case *ast.ExprStmt:
		c, ok := s.Value.(*ast.Constant)
		return ok && c.Kind == ast.Ellipsis
	case *ast.Raise:
		e := s.Exc
		if call, ok := e.(*ast.Call); ok {
			e = call.Func
		}
		n, ok := e.(*ast.Name)
		return ok && n.Id == "NotImplementedError"
	}
	return false
}

func isDocstring(s ast.Stmt) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	c, ok := es.Value.(*ast.Constant)
	return ok && c.Kind == ast.Str
}

// report records a finding; modeParam reports nothing and modeHelper only
// what concerns any function.
func (a *analyzer) report(code string, n ast.Node, msg string) {
	switch a.mode {
	case modeParam:
		return
	case modeHelper:
		if code != "secret-leak" && code != "unchecked-answer" {
			return
		}
	}
	a.c.add(code, n, a.toolName(), msg)
}

func (a *analyzer) toolName() string {
	if a.tool != nil {
		return a.fn.Name
	}
	return ""
}

// who names the function in messages.
func (a *analyzer) who() string { return a.fn.Name }

// nameFacts are the facts a name carries by itself.
func nameFacts(name string) fact {
	var f fact
	if isInteractionName(name) {
		f |= fHandler
	}
	if isConfirmName(name) && !strings.HasPrefix(strings.ToLower(name), "set_") {
		f |= fConfirm
	}
	return f
}

// ---- statements ----

func (a *analyzer) stmts(list []ast.Stmt) {
	for _, s := range list {
		if a.st.dead || a.aborted {
			return
		}
		a.stmt(s)
	}
}

// merge joins states (see merge), counting the work.
func (a *analyzer) merge(states ...*state) *state {
	for _, st := range states {
		if st != nil {
			a.work += len(st.vars) + 1
		}
	}
	if a.work > workBudget {
		a.aborted = true
	}
	return merge(states...)
}

// clone copies the current state for a branch, counting the work.
func (a *analyzer) clone(s *state) *state {
	a.work += len(s.vars) + 1
	if a.work > workBudget {
		a.aborted = true
	}
	return s.clone()
}

func (a *analyzer) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.ExprStmt:
		a.eval(s.Value, cStmt)
		if call, ok := s.Value.(*ast.Call); ok && exits()[a.resolve(call.Func)] {
			a.st.dead = true
		}
	case *ast.Assign:
		v := a.eval(s.Value, cFlow)
		sh := a.shapeOf(s.Value)
		for _, t := range s.Targets {
			a.assign(t, v, s.Value, sh)
		}
	case *ast.AnnAssign:
		if s.Value != nil {
			v := a.eval(s.Value, cFlow)
			a.assign(s.Target, v, s.Value, a.shapeOf(s.Value))
		}
	case *ast.AugAssign:
		v := a.eval(s.Value, cUse)
		cur := a.eval(s.Target, cUse)
		if n, ok := s.Target.(*ast.Name); ok {
			a.st.set(n.Id, (cur|v)&^fAnswer, shape{})
			a.locals[n.Id] = true
		}
	case *ast.Return:
		a.ret(s)
		a.st.dead = true
	case *ast.Raise:
		a.raise(s)
		a.sum.raises = true
		a.st.dead = true
	case *ast.If:
		a.ifStmt(s)
	case *ast.While:
		infinite := false
		if c, ok := s.Test.(*ast.Constant); ok && (c.Kind == ast.True || (c.Kind == ast.Int && c.Raw != "0")) {
			infinite = true
		}
		a.loop(s.Test, nil, 0, s.Body, s.OrElse, infinite)
	case *ast.For:
		it := a.eval(s.Iter, cUse)
		a.loop(nil, s.Target, it, s.Body, s.OrElse, false)
	case *ast.With:
		for _, item := range s.Items {
			if item == nil {
				continue
			}
			v := a.eval(item.Context, cFlow)
			if item.Vars != nil {
				a.assign(item.Vars, v&^fAnswer, nil, shape{})
			}
		}
		a.stmts(s.Body)
	case *ast.Try:
		a.try(s)
	case *ast.Match:
		a.match(s)
	case *ast.Assert:
		a.clearChecks(s.Test)
		a.eval(s.Test, cTest)
		a.eval(s.Msg, cUse)
	case *ast.Delete:
		for _, t := range s.Targets {
			if n, ok := t.(*ast.Name); ok {
				a.st.del(n.Id)
			} else {
				a.eval(t, cUse)
			}
		}
	case *ast.Import:
		for _, al := range s.Names {
			local, module := al.ImportBinding()
			a.aliases[local] = module
		}
	case *ast.ImportFrom:
		for _, al := range s.Names {
			local := al.AsName
			if local == "" {
				local = al.Name
			}
			if s.Level > 0 || al.Name == "*" {
				a.locals[local] = true
				continue
			}
			a.aliases[local] = s.Module + "." + al.Name
		}
	case *ast.FunctionDef:
		a.bind(s.Name)
	case *ast.ClassDef:
		a.bind(s.Name)
	case *ast.Break:
		if len(a.loops) > 0 {
			f := a.loops[len(a.loops)-1]
			f.breaks = append(f.breaks, a.clone(a.st))
		}
		a.st.dead = true
	case *ast.Continue:
		if len(a.loops) > 0 {
			f := a.loops[len(a.loops)-1]
			f.continues = append(f.continues, a.clone(a.st))
		}
		a.st.dead = true
	}
}

// exits end the process: the code after them does not run.
var exits = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"sys.exit": true, "os._exit": true, "os.abort": true, "builtins.exit": true, "builtins.quit": true}
})

// bind makes a name local and forgets what it held.
func (a *analyzer) bind(name string) {
	a.locals[name] = true
	delete(a.aliases, name)
	a.st.set(name, 0, shape{})
}

func (a *analyzer) ifStmt(s *ast.If) {
	bodyCancel, elseCancel := a.cancelBranches(s.Test)
	bodyFull, elseFull := fullAccessBranches(s.Test)
	a.clearChecks(s.Test)
	a.eval(s.Test, cTest)
	a.clearChecks(s.Test) // again for names the test binds (walrus)
	entry := a.st
	a.st = a.clone(entry)
	if bodyCancel {
		a.cancel++
	}
	gated := a.gated
	a.gated = gated || bodyFull
	a.stmts(s.Body)
	a.gated = a.gated && !bodyFull || gated
	if bodyCancel {
		a.cancel--
	}
	bodyEnd := a.st
	a.st = entry
	if elseCancel {
		a.cancel++
	}
	gated = a.gated
	a.gated = gated || elseFull
	a.stmts(s.OrElse)
	a.gated = a.gated && !elseFull || gated
	if elseCancel {
		a.cancel--
	}
	a.st = a.merge(bodyEnd, a.st)
}

func (a *analyzer) loop(test, target ast.Expr, iter fact, body, orelse []ast.Stmt, infinite bool) {
	frame := &loopFrame{}
	a.loops = append(a.loops, frame)
	head := a.st
	for range 2 {
		a.st = a.clone(head)
		if test != nil {
			a.clearChecks(test)
			a.eval(test, cTest)
			a.clearChecks(test)
		}
		if target != nil {
			a.assign(target, iter&(carried|fSecretReq), nil, shape{})
		}
		a.stmts(body)
		head = a.merge(append([]*state{head, a.st}, frame.continues...)...)
		frame.continues = nil
	}
	a.loops = a.loops[:len(a.loops)-1]
	if infinite {
		a.st = a.merge(frame.breaks...)
		return
	}
	a.st = head
	a.stmts(orelse)
	a.st = a.merge(append([]*state{a.st}, frame.breaks...)...)
}

func (a *analyzer) try(s *ast.Try) {
	entry := a.clone(a.st)
	a.stmts(s.Body)
	bodyEnd := a.st
	start := a.merge(entry, bodyEnd)
	a.st = bodyEnd
	a.stmts(s.OrElse)
	ends := []*state{a.st}
	for _, h := range s.Handlers {
		if h == nil {
			continue
		}
		a.st = a.clone(start)
		a.st.dead = false
		if h.Type != nil {
			a.eval(h.Type, cUse)
		}
		if h.Name != "" {
			a.bind(h.Name)
		}
		a.stmts(h.Body)
		ends = append(ends, a.st)
	}
	a.st = a.merge(ends...)
	if len(s.FinalBody) > 0 {
		if a.st.dead {
			// every path left the try: walk finally for its own findings,
			// and it decides whether the code after it runs
			a.st = a.clone(start)
			a.st.dead = false
			a.stmts(s.FinalBody)
			a.st.dead = true
			return
		}
		a.stmts(s.FinalBody)
	}
}

func (a *analyzer) match(s *ast.Match) {
	subj := a.eval(s.Subject, cFlow)
	entry := a.st
	var ends []*state
	exhaustive := false
	for _, mc := range s.Cases {
		if mc == nil {
			continue
		}
		a.st = a.clone(entry)
		a.bindPattern(mc.Pattern, subj&carried)
		if mc.Guard != nil {
			a.clearChecks(mc.Guard)
			a.eval(mc.Guard, cTest)
		} else if irrefutable(mc.Pattern) {
			exhaustive = true
		}
		a.stmts(mc.Body)
		ends = append(ends, a.st)
	}
	if !exhaustive {
		ends = append(ends, entry)
	}
	a.st = a.merge(ends...)
}

func irrefutable(p ast.Pattern) bool {
	switch p := p.(type) {
	case *ast.MatchAs:
		return p.Pattern == nil || irrefutable(p.Pattern)
	case *ast.MatchOr:
		for _, q := range p.Patterns {
			if irrefutable(q) {
				return true
			}
		}
	}
	return false
}

func (a *analyzer) bindPattern(p ast.Pattern, f fact) {
	ast.Inspect(p, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.MatchAs:
			if n.Name != "" {
				a.bind(n.Name)
				a.st.setFacts(n.Name, f)
			}
		case *ast.MatchStar:
			if n.Name != "" {
				a.bind(n.Name)
			}
		case *ast.MatchMapping:
			if n.Rest != "" {
				a.bind(n.Rest)
			}
		case *ast.MatchValue:
			a.eval(n.Value, cTest)
			return false
		}
		return true
	})
}

// assign binds target to a value with facts f (value is the expression
// when the target is its whole value, for the secret-name rule).
func (a *analyzer) assign(target ast.Expr, f fact, value ast.Expr, sh shape) {
	switch t := target.(type) {
	case *ast.Name:
		a.locals[t.Id] = true
		delete(a.aliases, t.Id)
		if a.mode != modeParam && isSecretName(t.Id) && loadsSecret(value) {
			f |= fSecret
		}
		a.st.set(t.Id, f, sh)
		if f&fAnswer != 0 {
			if n, ok := value.(*ast.Name); ok {
				if l, ok := a.answerAt[n.Id]; ok {
					a.answerAt[t.Id] = l
				}
			} else if value != nil {
				a.answerAt[t.Id] = a.c.line(value)
			}
		}
	case *ast.Tuple:
		for _, e := range t.Elts {
			a.assign(e, f, nil, shape{})
		}
	case *ast.List:
		for _, e := range t.Elts {
			a.assign(e, f, nil, shape{})
		}
	case *ast.Starred:
		a.assign(t.Value, f, nil, shape{})
	case *ast.Subscript:
		recv := a.eval(t.Value, cUse)
		a.eval(t.Slice, cUse)
		n, ok := t.Value.(*ast.Name)
		if !ok {
			return
		}
		cur, _ := a.st.shape(n.Id)
		if cur.kind == shapeDict {
			if f&fSecret != 0 && cur.keys != 0 {
				a.leak(target, a.who()+" puts a secret into its result (key "+constKey(t.Slice)+"), which the model reads", "puts it into a result")
			}
			switch constKey(t.Slice) {
			case "'success'":
				cur.keys |= keySuccess
			case "'output'", "'error'":
				cur.keys |= keyOutErr
			}
			a.st.setShape(n.Id, cur)
		}
		if f&(fSecret|fParam) != 0 && recv&fParam == 0 {
			// a container holding a parameter's or secret's value carries it
			old, _ := a.st.facts(n.Id)
			a.st.setFacts(n.Id, old|f&(fSecret|fParam))
		}
	case *ast.Attribute:
		a.eval(t.Value, cUse)
	}
}

// loadsSecret reports whether a variable named like a secret is loaded
// from somewhere that gives secrets: a call whose name says so
// (get_api_key(), os.getenv(...), keyring.get_password(...)). Other
// values given to such a name (loop items, counts) are judged by the data
// flow alone.
func loadsSecret(value ast.Expr) bool {
	call, ok := value.(*ast.Call)
	if !ok {
		return false
	}
	name := calleeName(call.Func)
	if maskingName(name) {
		return false
	}
	for _, w := range words(name) {
		switch w {
		case "key", "token", "secret", "password", "credential", "credentials", "auth", "getenv", "environ", "login", "apikey", "creds":
			return true
		}
	}
	if attr, ok := call.Func.(*ast.Attribute); ok {
		if n, ok := attr.Value.(*ast.Attribute); ok && n.Attr == "environ" {
			return true
		}
	}
	return false
}

// calleeName is the last name of a callee: f for f(), m for x.m().
func calleeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Name:
		return e.Id
	case *ast.Attribute:
		return e.Attr
	}
	return ""
}

func constKey(e ast.Expr) string {
	if c, ok := e.(*ast.Constant); ok && c.Kind == ast.Str {
		return "'" + c.Str + "'"
	}
	return "?"
}

// ---- returns ----

func (a *analyzer) ret(s *ast.Return) {
	var f fact
	if s.Value != nil {
		f = a.eval(s.Value, cFlow)
	}
	a.noteReturn(s.Value, f)
	if a.mode != modeTool || a.hasYield {
		return
	}
	if f&fSecret != 0 && a.shapeOf(s.Value).kind != shapeDict {
		a.report("secret-leak", s, a.who()+" returns a secret as its result, which the model reads")
	}
	a.checkShape(s, s.Value)
}

// noteReturn records what a return (value nil: None) gives, for summaries.
func (a *analyzer) noteReturn(v ast.Expr, f fact) {
	a.retFacts |= f
	if v == nil || mayBeNone(v) || f&fAnswer != 0 {
		a.sum.maybeNone = true
	}
	sh := a.shapeOf(v)
	if v == nil {
		sh = shape{kind: shapeOther, what: "None"}
	}
	if a.retShape == nil {
		a.retShape = &sh
	} else {
		m := mergeShape(*a.retShape, sh)
		a.retShape = &m
	}
}

// checkShape reports a return that is not {"success", "output"/"error"}.
func (a *analyzer) checkShape(at ast.Node, v ast.Expr) {
	if ie, ok := v.(*ast.IfExp); ok {
		a.checkShape(at, ie.Body)
		a.checkShape(at, ie.OrElse)
		return
	}
	sh := shape{kind: shapeOther, what: "None"}
	if v != nil {
		sh = a.shapeOf(v)
	}
	var what string
	switch sh.kind {
	case shapeOther:
		what = "returns " + sh.what
		if v == nil {
			what = "returns None (a bare return)"
		}
	case shapeDict:
		switch {
		case sh.keys&keySuccess == 0 && sh.keys&keyOutErr == 0:
			what = "returns a dict without 'success', 'output' or 'error'"
		case sh.keys&keySuccess == 0:
			what = "returns a dict without a 'success' key"
		case sh.keys&keyOutErr == 0:
			what = "returns a dict with 'success' but neither 'output' nor 'error'"
		}
	}
	if what == "" {
		return
	}
	if a.cancel > 0 {
		a.report("noncanonical-return", at, a.who()+" "+what+" when the user cancels a question; return {\"success\": False, \"error\": \"Cancelled by user.\"}")
		return
	}
	a.report("noncanonical-return", at, a.who()+" "+what+" on this branch")
}

// mayBeNone reports whether an expression may give a literal None.
func mayBeNone(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.IfExp:
		return mayBeNone(e.Body) || mayBeNone(e.OrElse)
	case *ast.BoolOp:
		return len(e.Values) > 0 && mayBeNone(e.Values[len(e.Values)-1])
	}
	return isNone(e)
}

func isNone(e ast.Expr) bool {
	c, ok := e.(*ast.Constant)
	return ok && c.Kind == ast.None
}

// shapeOf tells what shape of value an expression gives, without side
// effects.
func (a *analyzer) shapeOf(e ast.Expr) shape {
	other := func(w string) shape { return shape{kind: shapeOther, what: w} }
	switch e := e.(type) {
	case nil:
		return shape{}
	case *ast.Dict:
		var keys uint8
		for i, k := range e.Keys {
			if k == nil {
				if i < len(e.Values) {
					// **spread: judge the spread value's shape
					s := a.shapeOf(e.Values[i])
					if s.kind != shapeDict {
						return shape{}
					}
					keys |= s.keys
				}
				continue
			}
			switch constKey(k) {
			case "'success'":
				keys |= keySuccess
			case "'output'", "'error'":
				keys |= keyOutErr
			}
		}
		return shape{kind: shapeDict, keys: keys}
	case *ast.Constant:
		switch e.Kind {
		case ast.Str:
			return other("a string")
		case ast.Bytes:
			return other("bytes")
		case ast.None:
			return other("None")
		case ast.True, ast.False:
			return other("a boolean")
		case ast.Ellipsis:
			return other("Ellipsis")
		}
		return other("a number")
	case *ast.JoinedStr:
		return other("a string")
	case *ast.List, *ast.ListComp:
		return other("a list")
	case *ast.Tuple:
		return other("a tuple")
	case *ast.Set, *ast.SetComp:
		return other("a set")
	case *ast.GeneratorExp:
		return other("a generator")
	case *ast.Compare:
		return other("a boolean")
	case *ast.UnaryOp:
		if e.Op == token.NOT {
			return other("a boolean")
		}
		return other("a number")
	case *ast.BinOp:
		if e.Op == token.VBAR {
			return shape{} // may be a dict merge
		}
		if isStrLit(e.Left) || isStrLit(e.Right) {
			return other("a string")
		}
		return other("a computed value")
	case *ast.Lambda:
		return other("a function")
	case *ast.Name:
		if s, ok := a.st.shape(e.Id); ok {
			return s
		}
	case *ast.Await:
		return a.shapeOf(e.Value)
	case *ast.BoolOp:
		if len(e.Values) == 0 {
			return shape{}
		}
		s := a.shapeOf(e.Values[0])
		for _, v := range e.Values[1:] {
			s = mergeShape(s, a.shapeOf(v))
		}
		return s
	case *ast.IfExp:
		return mergeShape(a.shapeOf(e.Body), a.shapeOf(e.OrElse))
	case *ast.Call:
		return a.callShape(e)
	}
	return shape{}
}

func isStrLit(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Constant:
		return e.Kind == ast.Str
	case *ast.JoinedStr:
		return true
	}
	return false
}

func (a *analyzer) callShape(e *ast.Call) shape {
	other := func(w string) shape { return shape{kind: shapeOther, what: w} }
	if n, ok := e.Func.(*ast.Name); ok && !a.locals[n.Id] {
		if fn := a.c.funcs[n.Id]; fn != nil && a.aliases[n.Id] == "" {
			return a.c.summary(fn).ret
		}
	}
	switch p := a.resolve(e.Func); p {
	case "builtins.dict":
		if len(e.Args) > 0 {
			return shape{}
		}
		var keys uint8
		for _, k := range e.Keywords {
			switch k.Arg {
			case "success":
				keys |= keySuccess
			case "output", "error":
				keys |= keyOutErr
			case "":
				return shape{}
			}
		}
		return shape{kind: shapeDict, keys: keys}
	case "builtins.str", "builtins.repr", "builtins.format", "json.dumps":
		return other("a string")
	case "builtins.int", "builtins.float", "builtins.len", "builtins.round", "builtins.abs", "builtins.sum":
		return other("a number")
	case "builtins.bool", "builtins.isinstance":
		return other("a boolean")
	case "builtins.list", "builtins.sorted":
		return other("a list")
	case "builtins.tuple":
		return other("a tuple")
	}
	if attr, ok := e.Func.(*ast.Attribute); ok && isStrLit(attr.Value) && (attr.Attr == "format" || attr.Attr == "join") {
		return other("a string")
	}
	return shape{}
}

// ---- raise ----

func (a *analyzer) raise(s *ast.Raise) {
	f := a.eval(s.Exc, cUse)
	if call, ok := s.Exc.(*ast.Call); ok && a.helper(call.Func) == nil {
		// the exception's arguments are its message
		for _, arg := range call.Args {
			f |= a.eval(arg, cTest)
		}
	}
	a.eval(s.Cause, cUse)
	if f&fSecret != 0 {
		a.leak(s, a.who()+" raises an exception whose message holds a secret; the error text reaches the model", "puts it into an exception message")
	}
}

// ---- tests and None checks ----

// checkedNames calls f for every name that a test expression checks: a
// bare name (truthiness), a comparison operand, isinstance(x, ...).
func checkedNames(e ast.Expr, f func(string)) {
	switch e := e.(type) {
	case *ast.Name:
		f(e.Id)
	case *ast.NamedExpr:
		if n, ok := e.Target.(*ast.Name); ok {
			f(n.Id)
		}
	case *ast.UnaryOp:
		if e.Op == token.NOT {
			checkedNames(e.Operand, f)
		}
	case *ast.BoolOp:
		for _, v := range e.Values {
			checkedNames(v, f)
		}
	case *ast.Compare:
		checkedOperand(e.Left, f)
		for _, c := range e.Comparators {
			checkedOperand(c, f)
		}
	case *ast.Call:
		if n, ok := e.Func.(*ast.Name); ok && (n.Id == "isinstance" || n.Id == "bool" || n.Id == "callable") && len(e.Args) > 0 {
			checkedOperand(e.Args[0], f)
		}
	}
}

func checkedOperand(e ast.Expr, f func(string)) {
	switch e := e.(type) {
	case *ast.Name:
		f(e.Id)
	case *ast.NamedExpr:
		if n, ok := e.Target.(*ast.Name); ok {
			f(n.Id)
		}
	}
}

// clearChecks marks the answers a test checks as checked from here on.
func (a *analyzer) clearChecks(test ast.Expr) {
	checkedNames(test, func(n string) {
		if f, ok := a.st.facts(n); ok && f&fAnswer != 0 {
			a.st.setFacts(n, f&^fAnswer)
		}
	})
}

// fullAccessBranches tells which branch of an if runs in the full_access
// autonomy level (AUTONOMY_LEVEL == "full_access"), where the operator has
// chosen not to be asked: steps there need no confirmation.
func fullAccessBranches(test ast.Expr) (body, orelse bool) {
	c, ok := test.(*ast.Compare)
	if !ok || len(c.Ops) != 1 || len(c.Comparators) != 1 {
		return false, false
	}
	l, r := c.Left, c.Comparators[0]
	if isStrLit(l) {
		l, r = r, l
	}
	k, ok := r.(*ast.Constant)
	if !ok || k.Kind != ast.Str || k.Str != "full_access" || !hasFold(calleeName(l), "autonomy") {
		return false, false
	}
	switch c.Ops[0] {
	case ast.Eq:
		return true, false
	case ast.NotEq:
		return false, true
	}
	return false, false
}

// cancelBranches tells which branch of an if runs when an answer the test
// checks is None: the body for `x is None`, `not x`, `x == None` (and
// `or` chains of those), the else branch for `x is not None` and `x`.
func (a *analyzer) cancelBranches(test ast.Expr) (body, orelse bool) {
	isAnswer := func(e ast.Expr) bool {
		var name string
		switch e := e.(type) {
		case *ast.Name:
			name = e.Id
		case *ast.NamedExpr:
			if n, ok := e.Target.(*ast.Name); ok {
				name = n.Id
			}
		}
		f, _ := a.st.facts(name)
		return name != "" && f&fAnswer != 0
	}
	switch e := test.(type) {
	case *ast.Name, *ast.NamedExpr:
		return false, isAnswer(e)
	case *ast.UnaryOp:
		return e.Op == token.NOT && isAnswer(e.Operand), false
	case *ast.Compare:
		if len(e.Ops) == 1 && isAnswer(e.Left) && isNone(e.Comparators[0]) {
			switch e.Ops[0] {
			case ast.Is, ast.Eq:
				return true, false
			case ast.IsNot, ast.NotEq:
				return false, true
			}
		}
	case *ast.BoolOp:
		if e.Op == token.OR {
			for _, v := range e.Values {
				if b, _ := a.cancelBranches(v); b {
					return true, false
				}
			}
		}
	}
	return false, false
}

// ---- expressions ----

// ctx says how an expression's value is used.
type ctx uint8

const (
	// cUse: the value is used (an operand, an argument, a receiver).
	cUse ctx = iota
	// cFlow: the value goes into a variable or a return as it is.
	cFlow
	// cTest: the value is only tested (truthiness, comparison).
	cTest
	// cStmt: an expression statement; the value is dropped.
	cStmt
)

// eval walks an expression, reporting what happens in it, and returns the
// facts of its value.
func (a *analyzer) eval(e ast.Expr, cx ctx) fact {
	switch e := e.(type) {
	case nil:
		return 0
	case *ast.Name:
		f, ok := a.st.facts(e.Id)
		if !ok {
			f = a.globalFacts(e.Id)
		}
		if f&fAnswer != 0 && cx == cUse {
			a.answerUsed(e, e.Id)
		}
		return f
	case *ast.Constant:
		if e.Kind == ast.Str {
			s := strings.ToLower(e.Str)
			var f fact
			if strings.Contains(s, "interaction_handler") {
				f |= fHandler
			}
			if strings.Contains(s, "confirm_handler") {
				f |= fConfirm
			}
			return f
		}
		return 0
	case *ast.Attribute:
		v := a.eval(e.Value, cUse)
		f := v & (carried | fResolved)
		switch e.Attr {
		case "name", "stem", "suffix", "suffixes":
			f &^= fParam | fResolved
		case "parent", "parents":
			f &^= fSecret
			f |= v & fResolved
		}
		if a.mode != modeParam && isSecretName(e.Attr) {
			f |= fSecret
		}
		f |= nameFacts(e.Attr) & (fHandler | fConfirm)
		return f
	case *ast.Subscript:
		v := a.eval(e.Value, cUse)
		a.eval(e.Slice, cUse)
		f := v & (carried | fSecretReq)
		if sl, ok := e.Slice.(*ast.Slice); ok && shortSlice(sl) {
			f &^= fSecret
		}
		if c, ok := e.Slice.(*ast.Constant); ok && c.Kind == ast.Str && a.mode != modeParam && isSecretName(c.Str) {
			f |= fSecret
		}
		return f
	case *ast.Call:
		return a.call(e, cx)
	case *ast.BinOp:
		l := a.eval(e.Left, cUse)
		r := a.eval(e.Right, cUse)
		return (l | r) & carried
	case *ast.UnaryOp:
		if e.Op == token.NOT {
			a.eval(e.Operand, cTest)
			return 0
		}
		a.eval(e.Operand, cUse)
		return 0
	case *ast.BoolOp:
		return a.boolOp(e, cx)
	case *ast.Compare:
		ordering := false
		for _, op := range e.Ops {
			if op == ast.Lt || op == ast.LtE || op == ast.Gt || op == ast.GtE {
				ordering = true
			}
		}
		oc := cTest
		if ordering {
			oc = cUse
		}
		a.eval(e.Left, oc)
		for i, c := range e.Comparators {
			f := a.eval(c, oc)
			// root in path.parents: a workspace check of a resolved path
			if at, ok := c.(*ast.Attribute); ok && at.Attr == "parents" && i < len(e.Ops) &&
				(e.Ops[i] == ast.In || e.Ops[i] == ast.NotIn) && f&fResolved != 0 {
				a.sanitize(at.Value)
			}
		}
		return 0
	case *ast.IfExp:
		a.clearChecks(e.Test)
		a.eval(e.Test, cTest)
		return a.eval(e.Body, cx) | a.eval(e.OrElse, cx)
	case *ast.JoinedStr:
		var f fact
		for _, v := range e.Values {
			f |= a.eval(v, cUse)
		}
		return f & carried
	case *ast.FormattedValue:
		f := a.eval(e.Value, cUse)
		if e.FormatSpec != nil {
			a.eval(e.FormatSpec, cUse)
		}
		return f
	case *ast.Dict:
		return a.dict(e)
	case *ast.List:
		return a.elts(e.Elts)
	case *ast.Tuple:
		return a.elts(e.Elts)
	case *ast.Set:
		return a.elts(e.Elts)
	case *ast.ListComp:
		return a.comprehension(e.Generators, e.Elt, nil)
	case *ast.SetComp:
		return a.comprehension(e.Generators, e.Elt, nil)
	case *ast.GeneratorExp:
		return a.comprehension(e.Generators, e.Elt, nil)
	case *ast.DictComp:
		return a.comprehension(e.Generators, e.Key, e.Value)
	case *ast.Await:
		return a.eval(e.Value, cx)
	case *ast.Yield:
		a.hasYield = true
		a.eval(e.Value, cUse)
		return 0
	case *ast.YieldFrom:
		a.hasYield = true
		a.eval(e.Value, cUse)
		return 0
	case *ast.NamedExpr:
		v := a.eval(e.Value, cFlow)
		a.assign(e.Target, v, e.Value, a.shapeOf(e.Value))
		return v
	case *ast.Starred:
		return a.eval(e.Value, cx)
	case *ast.Slice:
		a.eval(e.Lower, cUse)
		a.eval(e.Upper, cUse)
		a.eval(e.Step, cUse)
		return 0
	case *ast.Lambda:
		return 0
	}
	return 0
}

// globalFacts are the facts of a name the function does not bind.
func (a *analyzer) globalFacts(name string) fact {
	f := nameFacts(name)
	if a.mode != modeParam && a.c.globals[name] && isSecretName(name) {
		f |= fSecret
	}
	return f
}

func (a *analyzer) elts(list []ast.Expr) fact {
	var f fact
	for _, e := range list {
		f |= a.eval(e, cUse)
	}
	return f & (carried | fResolved)
}

// leak reports a secret reaching a place the model or a log reads; in
// modeParam it records the place for the helper's callers.
func (a *analyzer) leak(n ast.Node, msg, sink string) {
	if a.mode == modeParam {
		if a.ps.secretSink == "" {
			a.ps.secretSink = sink + " (line " + strconv.Itoa(a.c.line(n)) + ")"
		}
		return
	}
	a.report("secret-leak", n, msg)
}

// shortSlice reports whether a slice keeps only a few characters of its
// value (s[-4:], s[:4]): a masked secret.
func shortSlice(s *ast.Slice) bool {
	if s.Step != nil {
		return false
	}
	lo, loOK := intConst(s.Lower)
	hi, hiOK := intConst(s.Upper)
	switch {
	case s.Upper == nil && loOK && lo < 0 && lo >= -6:
		return true
	case (s.Lower == nil || (loOK && lo == 0)) && hiOK && hi > 0 && hi <= 6:
		return true
	}
	return false
}

func intConst(e ast.Expr) (int, bool) {
	neg := false
	if u, ok := e.(*ast.UnaryOp); ok && u.Op == token.MINUS {
		neg, e = true, u.Operand
	}
	c, ok := e.(*ast.Constant)
	if !ok || c.Kind != ast.Int {
		return 0, false
	}
	n, err := strconv.Atoi(strings.ReplaceAll(c.Raw, "_", ""))
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func (a *analyzer) boolOp(e *ast.BoolOp, cx ctx) fact {
	var f fact
	for i, v := range e.Values {
		last := i == len(e.Values)-1
		if !last {
			a.clearChecks(v)
		}
		vc := cTest
		if last {
			vc = cx
			if cx == cStmt {
				vc = cTest
			}
		}
		vf := a.eval(v, vc)
		if !last && e.Op == token.OR {
			vf &^= fAnswer // a None answer falls through to the next operand
		}
		f |= vf
	}
	return f
}

func (a *analyzer) comprehension(gens []*ast.Comprehension, elt, value ast.Expr) fact {
	saved := a.st
	a.st = a.clone(saved)
	savedLocals := maps.Clone(a.locals)
	for _, g := range gens {
		if g == nil {
			continue
		}
		it := a.eval(g.Iter, cUse)
		a.assign(g.Target, it&carried, nil, shape{})
		for _, cond := range g.Ifs {
			a.clearChecks(cond)
			a.eval(cond, cTest)
		}
	}
	f := a.eval(elt, cUse) | a.eval(value, cUse)
	a.st = saved
	a.locals = savedLocals
	return f & carried
}

// dict walks a dict display. A result-shaped dict (one with a success,
// output, error or prompt_injection key) is what the model reads: every
// value in it is a place a secret must not reach.
func (a *analyzer) dict(e *ast.Dict) fact {
	result := false
	secretReq := false
	for i, k := range e.Keys {
		switch constKey(k) {
		case "'success'", "'output'", "'error'", "'prompt_injection'":
			result = true
		case "'type'":
			if i < len(e.Values) {
				if c, ok := e.Values[i].(*ast.Constant); ok && c.Kind == ast.Str && c.Str == "secret" {
					secretReq = true
				}
			}
		}
	}
	var f fact
	for i, v := range e.Values {
		if i < len(e.Keys) && e.Keys[i] != nil {
			a.eval(e.Keys[i], cUse)
		}
		vf := a.eval(v, cUse)
		if result && vf&fSecret != 0 {
			key := "?"
			if i < len(e.Keys) {
				key = constKey(e.Keys[i])
			}
			a.leak(v, a.who()+" puts a secret into its result under "+key+", which the model reads", "puts it into a result")
		}
		f |= vf
	}
	f &= carried
	if secretReq {
		f |= fSecretReq
	}
	return f
}

// answerUsed reports the use of a question's answer before a None check.
func (a *analyzer) answerUsed(n ast.Node, name string) {
	if a.reported[name] {
		return
	}
	a.reported[name] = true
	where := ""
	if l, ok := a.answerAt[name]; ok {
		where = " (asked on line " + strconv.Itoa(l) + ")"
	}
	a.report("unchecked-answer", n, a.who()+" uses '"+name+"', the answer to a question"+where+", without checking for None (the user cancelled)")
}
