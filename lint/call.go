package lint

import (
	"strconv"
	"strings"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/pyval"
	"github.com/lcptools/lcp/pysrc/token"
)

// resolve returns the dotted path a callee or value names when it is a
// module, a module attribute or a builtin ("os.path.join",
// "builtins.open"), else "".
func (a *analyzer) resolve(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Name:
		if p, ok := a.aliases[e.Id]; ok {
			return p
		}
		if a.locals[e.Id] {
			return ""
		}
		if p, ok := a.c.aliases[e.Id]; ok {
			return p
		}
		if a.c.globals[e.Id] || a.c.funcs[e.Id] != nil {
			return ""
		}
		if builtinNames()[e.Id] {
			return "builtins." + e.Id
		}
	case *ast.Attribute:
		if b := a.resolve(e.Value); b != "" {
			return b + "." + e.Attr
		}
	}
	return ""
}

// helper returns the module function a callee names, if any.
func (a *analyzer) helper(e ast.Expr) *ast.FunctionDef {
	n, ok := e.(*ast.Name)
	if !ok || a.locals[n.Id] {
		return nil
	}
	if _, ok := a.aliases[n.Id]; ok {
		return nil
	}
	return a.c.funcs[n.Id]
}

// call walks a call: the callee, the arguments, then what the call means
// for each rule.
func (a *analyzer) call(e *ast.Call, cx ctx) fact {
	a.c.seenCalls[e.Pos()] = true
	var recv fact // facts of the receiver of a method call
	var recvExpr ast.Expr
	method := ""
	path := a.resolve(e.Func)
	var callee fact
	switch f := e.Func.(type) {
	case *ast.Attribute:
		method = f.Attr
		if path == "" {
			recvExpr = f.Value
			recv = a.eval(f.Value, cUse)
		}
		callee = nameFacts(f.Attr) & (fHandler | fConfirm)
		if recv&fHandler != 0 && f.Attr == "__call__" {
			callee |= fHandler
		}
	case *ast.Name:
		if v, ok := a.st.facts(f.Id); ok {
			callee = v & (fHandler | fConfirm)
		} else {
			callee = nameFacts(f.Id)
		}
	default:
		callee = a.eval(e.Func, cUse) & (fHandler | fConfirm)
	}
	if path == "builtins.isinstance" || path == "builtins.hasattr" || path == "builtins.callable" || path == "builtins.type" || path == "builtins.id" {
		for _, arg := range e.Args {
			a.eval(arg, cTest)
		}
		return 0
	}
	// Printing or logging a None answer is harmless: not a use.
	printing := printFuncs()[path] || a.isLogCall(e.Func)
	argCtx := cUse
	if printing {
		argCtx = cTest
	}
	args := make([]fact, len(e.Args))
	var all fact
	secretQuestion := false
	for i, arg := range e.Args {
		args[i] = a.eval(arg, argCtx)
		all |= args[i]
		if args[i]&fSecretReq != 0 {
			secretQuestion = true
		}
		if c, ok := arg.(*ast.Constant); ok && c.Kind == ast.Str && c.Str == "secret" {
			secretQuestion = true
		}
	}
	kw := make([]fact, len(e.Keywords))
	for i, k := range e.Keywords {
		if k == nil {
			continue
		}
		kw[i] = a.eval(k.Value, argCtx)
		all |= kw[i]
		if c, ok := k.Value.(*ast.Constant); ok && c.Kind == ast.Str && c.Str == "secret" {
			secretQuestion = true
		}
	}

	// A function of this module: its summary stands for its body.
	if fn := a.helper(e.Func); fn != nil {
		return a.helperCall(e, fn, args, kw, secretQuestion, cx)
	}

	// The user interaction handler: a question.
	if callee&fHandler != 0 {
		a.sum.asks = true
		if cx == cUse {
			a.report("unchecked-answer", e, a.who()+" uses the answer to a question directly, without checking for None (the user cancelled)")
		}
		f := fAnswer
		if secretQuestion {
			f |= fSecret
		}
		return f
	}

	// The confirm handler: a gate, when its decision is looked at.
	if callee&fConfirm != 0 {
		a.sum.confirms = true
		if cx == cStmt {
			a.ignoredConfirm = e
		} else {
			a.gated = true
		}
		return 0
	}

	// Sensitive steps. Deleting a temporary file the tool made is tidying
	// up, not one.
	desc := sensitiveCall(path)
	if deleteFuncs()[path] && len(e.Args) > 0 && args[0]&fTemp != 0 && args[0]&fParam == 0 {
		desc = ""
	}
	switch {
	case desc != "":
	case path == "builtins.eval" || path == "builtins.exec" || path == "builtins.compile":
		if len(e.Args) > 0 && !isStrLit(e.Args[0]) {
			desc = "runs code with " + opName(path)
		}
	case path == "" && recvExpr != nil && (method == "unlink" || method == "rmdir") && len(e.Args) <= 1:
		if recv&fTemp == 0 || recv&fParam != 0 {
			desc = "deletes files with ." + method + "()"
		}
	}
	if desc != "" {
		a.sensitive(e, desc)
	}

	// Prints and logs: no secret.
	if printing {
		verb := "prints"
		if !printFuncs()[path] {
			verb = "logs"
		}
		for i, arg := range e.Args {
			if args[i]&fSecret != 0 {
				a.leak(arg, a.who()+" "+verb+" a secret", verb+" it")
			}
		}
		for i, k := range e.Keywords {
			if k != nil && kw[i]&fSecret != 0 && k.Arg != "file" {
				a.leak(k.Value, a.who()+" "+verb+" a secret", verb+" it")
			}
		}
	}

	// File operations: no parameter path without a workspace check.
	if n, ok := fileFuncs()[path]; ok {
		for i, arg := range e.Args {
			if (n < 0 || i < n) && args[i]&fParam != 0 {
				a.pathEscape(arg, opName(path))
			}
		}
		for i, k := range e.Keywords {
			if k != nil && fileKeywords()[k.Arg] && kw[i]&fParam != 0 {
				a.pathEscape(k.Value, opName(path))
			}
		}
	}
	if path == "" && recvExpr != nil {
		if n, ok := pathMethods()[method]; ok && (n < 0 || len(e.Args) == n) && recv&fParam != 0 {
			a.pathEscape(recvExpr, "."+method+"()")
		}
	}

	// Containment checks.
	switch {
	case path == "" && recvExpr != nil && (method == "relative_to" || method == "is_relative_to" || method == "startswith"):
		if recv&fResolved != 0 {
			a.sanitize(recvExpr)
		}
		if method == "relative_to" {
			return recv &^ (fParam | fAnswer)
		}
		return 0
	case path == "os.path.commonpath" || path == "posixpath.commonpath" || path == "os.path.commonprefix":
		if all&fResolved != 0 {
			for _, arg := range e.Args {
				a.sanitize(arg)
			}
		}
		return 0
	case path == "re.match" || path == "re.fullmatch":
		if len(e.Args) > 1 {
			a.sanitize(e.Args[1])
		}
		return 0
	case path == "" && recvExpr != nil && (method == "match" || method == "fullmatch"):
		if len(e.Args) > 0 {
			a.sanitize(e.Args[0])
		}
		return 0
	case path == "os.path.basename" || path == "posixpath.basename":
		return all &^ (fParam | fResolved | fAnswer)
	}

	// What the result carries.
	name := calleeName(e.Func)
	if maskingName(name) || hasFold(name, "secure_filename") || hasFold(name, "sanitiz") {
		return 0
	}
	switch {
	case strings.HasPrefix(path, "tempfile."):
		return fTemp
	case path == "os.getenv" || path == "os.environ.get" || path == "os.environ.pop":
		if len(e.Args) > 0 {
			if c, ok := e.Args[0].(*ast.Constant); ok && c.Kind == ast.Str && isSecretName(c.Str) && a.mode != modeParam {
				return fSecret
			}
		}
		return 0
	case pathBuilders()[path]:
		f := all & carried
		if resolvers()[path] {
			f |= fResolved
		}
		return f
	case passThrough()[path]:
		return all & (carried | fResolved)
	case path == "" && recvExpr != nil && carryMethods()[method]:
		f := recv & (carried | fResolved | fHandler | fConfirm)
		switch method {
		case "get", "pop":
			if len(e.Args) > 0 {
				if c, ok := e.Args[0].(*ast.Constant); ok && c.Kind == ast.Str {
					if a.mode != modeParam && isSecretName(c.Str) {
						f |= fSecret
					}
					f |= args[0] & (fHandler | fConfirm)
				}
				for _, x := range args[1:] {
					f |= x & (carried | fHandler | fConfirm)
				}
			}
			return f
		case "resolve", "absolute":
			return f | fResolved
		case "encode", "decode", "split", "rsplit", "strip", "lstrip", "rstrip", "lower", "upper", "casefold":
			return f &^ (fHandler | fConfirm)
		}
		return (f | all&carried) &^ (fHandler | fConfirm)
	}
	return 0
}

// helperCall applies the summary of a module function at a call.
func (a *analyzer) helperCall(e *ast.Call, fn *ast.FunctionDef, args, kw []fact, secretQuestion bool, cx ctx) fact {
	s := a.c.summary(fn)
	if fn != a.fn {
		a.c.called[fn] = true
	}
	if s.confirms {
		a.sum.confirms = true
		if cx == cStmt && !s.raises {
			a.ignoredConfirm = e
		} else {
			a.gated = true
		}
	} else if isConfirmName(fn.Name) && !strings.HasPrefix(fn.Name, "set_") {
		a.sum.confirms = true
		if cx == cStmt {
			a.ignoredConfirm = e
		} else {
			a.gated = true
		}
	}
	if len(s.steps) > 0 {
		st := s.steps[0]
		a.sensitive(e, "calls "+fn.Name+", which "+st.desc+" (line "+strconv.Itoa(a.c.line(st.node))+")")
	}
	var out fact
	if s.asks && s.maybeNone {
		a.sum.asks = true
		if cx == cUse {
			a.report("unchecked-answer", e, a.who()+" uses the answer of "+fn.Name+"() directly, without checking for None (the user cancelled)")
		}
		out |= fAnswer
		if secretQuestion {
			out |= fSecret
		}
	}
	// arguments to parameters
	var params []*ast.Arg
	if fn.Args != nil {
		params = append(append(append(params, fn.Args.PosOnly...), fn.Args.Args...), fn.Args.KwOnly...)
	}
	bind := func(arg ast.Expr, f fact, i int) {
		// parameters past maxFollowed are not followed: each costs a walk
		// of the helper
		if f&(fParam|fSecret) == 0 || i < 0 || i >= len(params) || i >= maxFollowed {
			return
		}
		ps := a.c.paramSummary(fn, i)
		if ps.busy {
			return
		}
		if f&fParam != 0 && ps.pathSink != "" {
			a.report("path-escape", arg, a.who()+" passes a path made from a parameter to "+fn.Name+", which "+ps.pathSink+" with no check that it stays inside the workspace")
		}
		if f&fSecret != 0 && ps.secretSink != "" {
			a.report("secret-leak", arg, a.who()+" passes a secret to "+fn.Name+", which "+ps.secretSink)
		}
		if ps.contains {
			a.sanitize(arg)
		}
		out |= f & ps.pass
	}
	posOnly := 0
	if fn.Args != nil {
		posOnly = len(fn.Args.PosOnly) + len(fn.Args.Args)
	}
	for i, arg := range e.Args {
		if _, star := arg.(*ast.Starred); star {
			break
		}
		if i < posOnly {
			bind(arg, args[i], i)
		}
	}
	for j, k := range e.Keywords {
		if k == nil || k.Arg == "" {
			continue
		}
		for i, p := range params {
			if p != nil && p.Name == k.Arg {
				bind(k.Value, kw[j], i)
			}
		}
	}
	return out
}

// maxFollowed is the number of a helper's parameters the analysis follows.
const maxFollowed = 16

// isLogCall reports whether a callee is a logger method: logging.info,
// logger.warning, self.log.error, logging.getLogger(...).debug.
func (a *analyzer) isLogCall(f ast.Expr) bool {
	attr, ok := f.(*ast.Attribute)
	if !ok || !logMethods()[attr.Attr] {
		return false
	}
	if p := a.resolve(attr.Value); strings.HasPrefix(p, "logging") {
		return true
	}
	if call, ok := attr.Value.(*ast.Call); ok && strings.HasPrefix(a.resolve(call.Func), "logging") {
		return true
	}
	for _, w := range words(calleeName(attr.Value)) {
		if w == "log" || w == "logger" || w == "logging" {
			return true
		}
	}
	return false
}

// sensitive records a step that needs the operator's approval first.
func (a *analyzer) sensitive(n ast.Node, desc string) {
	if a.gated {
		return
	}
	for _, s := range a.steps {
		if s.node.Pos() == n.Pos() {
			return
		}
	}
	a.steps = append(a.steps, step{node: n, desc: desc})
}

func (a *analyzer) reportSteps() {
	msg := a.who() + " " + a.c.describeSteps(a.steps) + " without asking the operator first"
	if a.ignoredConfirm != nil {
		msg += "; the confirm handler's decision on line " + strconv.Itoa(a.c.line(a.ignoredConfirm)) + " is ignored"
	}
	a.report("risky-pattern", a.steps[0].node, msg)
}

// pathEscape records a file operation on a parameter path.
func (a *analyzer) pathEscape(n ast.Node, op string) {
	if a.mode == modeParam {
		if a.ps.pathSink == "" {
			a.ps.pathSink = "uses it with " + op + " (line " + strconv.Itoa(a.c.line(n)) + ")"
		}
		return
	}
	a.report("path-escape", n, a.who()+" uses a path made from a parameter with "+op+" and no check that it stays inside the workspace")
}

// opName shows a resolved function in messages: open(), os.listdir().
func opName(path string) string { return strings.TrimPrefix(path, "builtins.") + "()" }

// sanitize marks the variables of a checked expression as checked.
func (a *analyzer) sanitize(e ast.Expr) {
	ast.Inspect(e, func(n ast.Node) bool {
		if nm, ok := n.(*ast.Name); ok {
			if f, ok := a.st.facts(nm.Id); ok && f&fParam != 0 {
				a.st.setFacts(nm.Id, f&^fParam)
				if a.mode == modeParam {
					a.ps.contains = true
				}
			}
		}
		return true
	})
}

// ---- description ----

// description reports a tool whose first docstring paragraph cannot tell
// the model when to use it. A tool with a tool_<name>_prompt function
// gets its description at run time and is left alone.
func (a *analyzer) description() {
	if a.c.prompted[a.fn.Name] {
		return
	}
	d := strings.TrimSpace(a.tool.Description)
	n := len(strings.Fields(d))
	switch {
	case d == "" || d == "No description provided.":
		a.c.add("vague-description", nameNode(a.fn), a.fn.Name, a.fn.Name+" has no docstring, so the model cannot tell when to use it")
	case n < 4:
		a.c.add("vague-description", nameNode(a.fn), a.fn.Name, a.fn.Name+"'s description '"+d+"' is "+strconv.Itoa(n)+" word(s): too short to tell the model when to use it")
	}
}

// nameNode is a node at a function's name, for positions.
func nameNode(fn *ast.FunctionDef) ast.Node {
	return &ast.Name{Span: ast.Span{From: fn.NamePos, To: fn.NamePos}, Id: fn.Name}
}

// ---- coercion ----

// coercion reports numeric and boolean parameters used raw: parameters
// the schema shows as strings (no annotation, or a loose one), that the
// function uses as numbers or booleans before any coercion.
func (a *analyzer) coercion() {
	types := map[string]string{}
	for _, p := range a.tool.Params {
		types[p.Name] = p.Type
	}
	type cand struct {
		boolean bool
		coerced token.Pos // first coercion, 0 if none
	}
	cands := map[string]*cand{}
	defaults := a.defaults()
	for _, p := range a.params {
		if p == nil || types[p.Name] != "string" {
			continue
		}
		if p.Annotation != nil {
			if u := pyval.Unparse(p.Annotation); u == "str" || u == "typing.Text" || u == "Text" || strings.HasPrefix(u, "Literal[") {
				continue
			}
		}
		c := &cand{}
		if d, ok := defaults[p.Name]; ok {
			if k, ok := d.(*ast.Constant); ok && (k.Kind == ast.True || k.Kind == ast.False) {
				c.boolean = true
			}
		}
		cands[p.Name] = c
	}
	if len(cands) == 0 {
		return
	}
	type use struct {
		name string
		at   ast.Node
		how  string
	}
	var uses []use
	raw := func(e ast.Expr) string {
		if n, ok := e.(*ast.Name); ok && cands[n.Id] != nil {
			return n.Id
		}
		return ""
	}
	numeric := func(e ast.Expr) bool {
		c, ok := e.(*ast.Constant)
		if u, isU := e.(*ast.UnaryOp); isU && u.Op == token.MINUS {
			c, ok = u.Operand.(*ast.Constant)
		}
		return ok && (c.Kind == ast.Int || c.Kind == ast.Float)
	}
	walk := func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FunctionDef, *ast.Lambda, *ast.ClassDef:
			return false
		case *ast.Assign:
			for _, t := range n.Targets {
				if name := raw(t); name != "" && cands[name].coerced == 0 {
					cands[name].coerced = n.Pos()
				}
			}
		case *ast.AugAssign:
			if name := raw(n.Target); name != "" && numeric(n.Value) {
				uses = append(uses, use{name, n, "in arithmetic"})
			}
		case *ast.Call:
			p := a.resolve(n.Func)
			isCoercer := coercers()[p] || coercerName(calleeName(n.Func))
			for _, arg := range n.Args {
				name := raw(arg)
				if name == "" {
					continue
				}
				switch {
				case isCoercer:
					if cands[name].coerced == 0 {
						cands[name].coerced = n.Pos()
					}
				case numericFuncs()[p]:
					uses = append(uses, use{name, arg, "as a number in " + strings.TrimPrefix(p, "builtins.") + "()"})
				case (p == "builtins.min" || p == "builtins.max") && anyNumeric(n.Args, numeric):
					uses = append(uses, use{name, arg, "as a number in " + strings.TrimPrefix(p, "builtins.") + "()"})
				}
			}
		case *ast.BinOp:
			for _, pair := range [][2]ast.Expr{{n.Left, n.Right}, {n.Right, n.Left}} {
				name := raw(pair[0])
				if name == "" {
					continue
				}
				switch {
				case n.Op == token.STAR && isStrLit(pair[1]):
					uses = append(uses, use{name, pair[0], "as a repeat count"})
				case n.Op == token.PERCENT && pair[0] == n.Right:
					// "..." % x formats x
				case numeric(pair[1]) && n.Op != token.VBAR && n.Op != token.AMPER:
					uses = append(uses, use{name, pair[0], "in arithmetic"})
				}
			}
		case *ast.Compare:
			operands := append([]ast.Expr{n.Left}, n.Comparators...)
			for i, op := range n.Ops {
				if i+1 >= len(operands) {
					break
				}
				l, r := operands[i], operands[i+1]
				for _, pair := range [][2]ast.Expr{{l, r}, {r, l}} {
					name := raw(pair[0])
					if name == "" {
						continue
					}
					if c, ok := pair[1].(*ast.Constant); ok && (c.Kind == ast.True || c.Kind == ast.False) && cands[name].boolean {
						uses = append(uses, use{name, pair[0], "as a boolean"})
					} else if numeric(pair[1]) && op != ast.In && op != ast.NotIn && op != ast.Is && op != ast.IsNot {
						uses = append(uses, use{name, pair[0], "as a number in a comparison"})
					}
				}
			}
		case *ast.Subscript:
			if sl, ok := n.Slice.(*ast.Slice); ok {
				for _, b := range []ast.Expr{sl.Lower, sl.Upper, sl.Step} {
					if name := raw(b); name != "" {
						uses = append(uses, use{name, b, "as a slice bound"})
					}
				}
			}
		case *ast.If:
			a.boolUse(n.Test, filterKeys(cands, func(c *cand) bool { return c.boolean }), func(name string, at ast.Node) {
				uses = append(uses, use{name, at, "as a boolean"})
			})
		case *ast.While:
			a.boolUse(n.Test, filterKeys(cands, func(c *cand) bool { return c.boolean }), func(name string, at ast.Node) {
				uses = append(uses, use{name, at, "as a boolean"})
			})
		case *ast.IfExp:
			a.boolUse(n.Test, filterKeys(cands, func(c *cand) bool { return c.boolean }), func(name string, at ast.Node) {
				uses = append(uses, use{name, at, "as a boolean"})
			})
		}
		return true
	}
	for _, s := range a.fn.Body {
		ast.Inspect(s, walk)
	}
	done := map[string]bool{}
	for _, u := range uses {
		c := cands[u.name]
		if done[u.name] || (c.coerced != 0 && c.coerced < u.at.Pos()) {
			continue
		}
		done[u.name] = true
		kind := "a number"
		if c.boolean {
			kind = "a boolean"
		}
		a.c.add("uncoerced-parameter", u.at, a.fn.Name, a.fn.Name+" uses parameter '"+u.name+"' "+u.how+
			", but without an int/float/bool annotation the schema calls it a string: the model may send '"+example(c.boolean)+"', which arrives unconverted ("+kind+" expected)")
	}
}

// coercerName reports whether a helper's name says it converts a value:
// to_int, _as_bool, parse_number, coerce...
func coercerName(name string) bool {
	if !hasFold(name, "int") && !hasFold(name, "float") && !hasFold(name, "bool") && !hasFold(name, "num") &&
		!hasFold(name, "coerce") && !hasFold(name, "parse") && !hasFold(name, "decimal") && !hasFold(name, "truthy") && !hasFold(name, "flag") {
		return false
	}
	for _, w := range words(name) {
		switch w {
		case "int", "integer", "float", "bool", "boolean", "number", "num", "numeric", "coerce", "parse", "decimal", "truthy", "flag":
			return true
		}
	}
	return false
}

func example(boolean bool) string {
	if boolean {
		return "false"
	}
	return "5"
}

func anyNumeric(list []ast.Expr, numeric func(ast.Expr) bool) bool {
	for _, e := range list {
		if numeric(e) {
			return true
		}
	}
	return false
}

func filterKeys[T any](m map[string]T, keep func(T) bool) map[string]bool {
	out := map[string]bool{}
	for k, v := range m {
		if keep(v) {
			out[k] = true
		}
	}
	return out
}

// boolUse finds names tested for truth in a test expression.
func (a *analyzer) boolUse(test ast.Expr, names map[string]bool, f func(string, ast.Node)) {
	switch e := test.(type) {
	case *ast.Name:
		if names[e.Id] {
			f(e.Id, e)
		}
	case *ast.UnaryOp:
		if e.Op == token.NOT {
			a.boolUse(e.Operand, names, f)
		}
	case *ast.BoolOp:
		for _, v := range e.Values {
			a.boolUse(v, names, f)
		}
	}
}

// defaults maps parameter names to their default expressions.
func (a *analyzer) defaults() map[string]ast.Expr {
	out := map[string]ast.Expr{}
	args := a.fn.Args
	if args == nil {
		return out
	}
	pos := append(append([]*ast.Arg{}, args.PosOnly...), args.Args...)
	first := len(pos) - len(args.Defaults)
	for i, d := range args.Defaults {
		if first+i >= 0 && first+i < len(pos) && pos[first+i] != nil {
			out[pos[first+i].Name] = d
		}
	}
	for i, p := range args.KwOnly {
		if i < len(args.KwDefaults) && args.KwDefaults[i] != nil && p != nil {
			out[p.Name] = args.KwDefaults[i]
		}
	}
	return out
}
