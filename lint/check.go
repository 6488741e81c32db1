package lint

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/lcptools/lcp/pysrc"
	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/parser"
	"github.com/lcptools/lcp/pysrc/token"
)

// Options configure Check.
type Options struct {
	// Reader is what pysrc.ReadFile extracted from the same source, when
	// the caller already has it (discovery does). The reader's own
	// diagnostics (syntax errors, nested tools, undocumented parameters,
	// orphan prompts) are then the caller's to report, and Check adds only
	// the checklist rules. With no Reader, Check reads the source itself and
	// reports those diagnostics too.
	Reader *pysrc.File
}

var bom = []byte("\xef\xbb\xbf")

// arenas recycle syntax-tree memory between files, as pysrc does.
var arenas = sync.Pool{New: func() any { return new(parser.Arena) }}

// Check analyses the source of one tool file and returns its findings,
// sorted by position. It never runs Python and never fails: a file that is
// not UTF-8 gives a not-utf8 finding, one that does not parse gives its
// syntax errors (the checklist rules need a valid tree).
func Check(filename string, src []byte, opts *Options) []Finding {
	src = bytes.TrimPrefix(src, bom)
	var out []Finding
	var reader *pysrc.File
	if opts != nil {
		reader = opts.Reader
	}
	if reader == nil {
		pf, err := pysrc.ReadFile(filename, src)
		if err != nil {
			r := rulesByID["not-utf8"]
			return []Finding{{Severity: r.Severity, Code: r.ID, File: filename, Fix: r.Fix,
				Message: fmt.Sprintf("skipped %s: not valid UTF-8 (tool files must be UTF-8)", filename)}}
		}
		reader = pf
		out = readerFindings(filename, src, pf)
	}
	if reader.SyntaxErrors == nil {
		arena := arenas.Get().(*parser.Arena)
		mod, file, err := parser.ParseArena(filename, src, arena)
		if err == nil {
			c := newChecker(filename, src, file, mod, reader)
			c.run()
			out = append(out, c.out...)
		}
		arena.Reset()
		arenas.Put(arena)
	}
	sortFindings(out)
	return out
}

// readerFindings turns the reader's diagnostics into findings, with the
// column of the syntax error or of the function's name.
func readerFindings(filename string, src []byte, pf *pysrc.File) []Finding {
	var out []Finding
	lines := newLineIndex(src)
	for _, e := range pf.SyntaxErrors {
		r := rulesByID["syntax-error"]
		out = append(out, Finding{Severity: r.Severity, Code: r.ID, File: filename, Fix: r.Fix,
			Line: e.Pos.Line, Column: lines.runeColumn(e.Pos.Line, e.Pos.Column),
			Message: e.Msg + " (tools read by the lossy fallback extractor)"})
	}
	for _, d := range pf.Diagnostics() {
		if d.Kind == pysrc.DiagSyntaxError {
			continue
		}
		r, ok := rulesByID[string(d.Kind)]
		sev := Warning
		if ok {
			sev = r.Severity
		}
		f := Finding{Severity: sev, Code: string(d.Kind), File: filename, Line: d.Line, Message: d.Message}
		if ok {
			f.Fix = r.Fix
		}
		f.Column = lines.defNameColumn(d.Line)
		out = append(out, f)
	}
	return out
}

// fillColumn sets the column of a finding that has a line but no column
// (discovery reports lines only) from the lines of its file: the column
// of the function's name when the line starts a def, else of the line's
// first non-blank character.
func fillColumn(f *Finding, lines *lineIndex) {
	if f.Line <= 0 || f.Column > 0 {
		return
	}
	f.Column = lines.defNameColumn(f.Line)
}

// lineIndex finds lines of a source.
type lineIndex struct {
	src    []byte
	starts []int
}

func newLineIndex(src []byte) *lineIndex {
	starts := []int{0}
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return &lineIndex{src: src, starts: starts}
}

// line returns the text of a 1-based line without its end.
func (l *lineIndex) line(n int) []byte {
	if n < 1 || n > len(l.starts) {
		return nil
	}
	end := len(l.src)
	if n < len(l.starts) {
		end = l.starts[n]
	}
	return bytes.TrimRight(l.src[l.starts[n-1]:end], "\r\n")
}

// runeColumn converts a 1-based byte column to code points.
func (l *lineIndex) runeColumn(line, byteCol int) int {
	text := l.line(line)
	if byteCol <= 1 || text == nil {
		return max(byteCol, 0)
	}
	if byteCol-1 > len(text) {
		return utf8.RuneCount(text) + (byteCol - 1 - len(text)) + 1
	}
	return utf8.RuneCount(text[:byteCol-1]) + 1
}

var defName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:async\s+)?def\s+`)
})

// defNameColumn is the column of the name on a def line, else of the
// first non-blank character (0 when the line does not exist).
func (l *lineIndex) defNameColumn(n int) int {
	text := l.line(n)
	if text == nil {
		return 0
	}
	if m := defName().FindIndex(text); m != nil {
		return utf8.RuneCount(text[:m[1]]) + 1
	}
	trimmed := bytes.TrimLeft(text, " \t\f")
	return utf8.RuneCount(text[:len(text)-len(trimmed)]) + 1
}

// checker analyses one parsed file.
type checker struct {
	filename string
	src      []byte
	file     *token.File
	mod      *ast.Module
	reader   *pysrc.File

	// aliases maps module-level names bound by imports to dotted paths.
	aliases map[string]string
	// funcs are the module-level functions by name (the last def wins, as
	// in Python).
	funcs map[string]*ast.FunctionDef
	// order lists the module-level functions in source order.
	order []*ast.FunctionDef
	// globals are the names assigned at module level.
	globals map[string]bool
	// tools maps a top-level def to the reader's tool.
	tools map[*ast.FunctionDef]*pysrc.Tool
	// prompted names the tools that have a tool_<name>_prompt function.
	prompted map[string]bool

	sums  map[*ast.FunctionDef]*summary
	psums map[paramKey]*paramSummary
	// seenCalls are the calls the analyses of functions walked; called are
	// the module functions some analysis saw called (for libraryRisk).
	seenCalls map[token.Pos]bool
	called    map[*ast.FunctionDef]bool

	seen map[findingKey]bool
	out  []Finding
}

type findingKey struct {
	code string
	pos  token.Pos
}

func newChecker(filename string, src []byte, file *token.File, mod *ast.Module, reader *pysrc.File) *checker {
	c := &checker{filename: filename, src: src, file: file, mod: mod, reader: reader,
		aliases: map[string]string{}, funcs: map[string]*ast.FunctionDef{}, globals: map[string]bool{},
		tools: map[*ast.FunctionDef]*pysrc.Tool{}, prompted: map[string]bool{},
		sums: map[*ast.FunctionDef]*summary{}, psums: map[paramKey]*paramSummary{}, seen: map[findingKey]bool{},
		seenCalls: map[token.Pos]bool{}, called: map[*ast.FunctionDef]bool{}}
	return c
}

// run analyses every module-level function and the library as a whole.
func (c *checker) run() {
	c.scan(c.mod.Body)
	byLine := map[string]*pysrc.Tool{}
	for _, t := range c.reader.Tools {
		byLine[fmt.Sprintf("%s:%d", t.Name, t.Line)] = t
	}
	for _, p := range c.reader.Prompts {
		c.prompted[strings.TrimSuffix(p.Name, "_prompt")] = true
	}
	for _, fn := range c.order {
		if t, ok := byLine[fmt.Sprintf("%s:%d", fn.Name, c.file.Line(fn.NamePos))]; ok && t.TopLevel {
			c.tools[fn] = t
		}
	}
	for _, fn := range c.order {
		c.summary(fn)
	}
	c.libraryRisk()
}

// scan collects the module's imports, functions and assignments, at the
// top level and in module-level if/try/with/for/while/match blocks.
func (c *checker) scan(list []ast.Stmt) {
	for _, st := range list {
		switch st := st.(type) {
		case *ast.Import:
			for _, a := range st.Names {
				local, module := a.ImportBinding()
				c.aliases[local] = module
			}
		case *ast.ImportFrom:
			if st.Level > 0 {
				continue // a local module: not a library the rules know
			}
			for _, a := range st.Names {
				if a.Name == "*" {
					continue
				}
				local := a.AsName
				if local == "" {
					local = a.Name
				}
				c.aliases[local] = st.Module + "." + a.Name
			}
		case *ast.FunctionDef:
			c.funcs[st.Name] = st
			c.order = append(c.order, st)
		case *ast.ClassDef:
			c.globals[st.Name] = true
		case *ast.Assign:
			for _, t := range st.Targets {
				c.bindGlobal(t)
			}
		case *ast.AnnAssign:
			c.bindGlobal(st.Target)
		case *ast.AugAssign:
			c.bindGlobal(st.Target)
		case *ast.If:
			c.scan(st.Body)
			c.scan(st.OrElse)
		case *ast.Try:
			c.scan(st.Body)
			for _, h := range st.Handlers {
				c.scan(h.Body)
			}
			c.scan(st.OrElse)
			c.scan(st.FinalBody)
		case *ast.With:
			c.scan(st.Body)
		case *ast.For:
			c.scan(st.Body)
			c.scan(st.OrElse)
		case *ast.While:
			c.scan(st.Body)
			c.scan(st.OrElse)
		case *ast.Match:
			for _, mc := range st.Cases {
				c.scan(mc.Body)
			}
		}
	}
}

func (c *checker) bindGlobal(t ast.Expr) {
	switch t := t.(type) {
	case *ast.Name:
		c.globals[t.Id] = true
		delete(c.aliases, t.Id)
	case *ast.Tuple:
		for _, e := range t.Elts {
			c.bindGlobal(e)
		}
	case *ast.List:
		for _, e := range t.Elts {
			c.bindGlobal(e)
		}
	case *ast.Starred:
		c.bindGlobal(t.Value)
	}
}

// position returns the 1-based line and code-point column of p.
func (c *checker) position(p token.Pos) (int, int) {
	pos := c.file.Position(p)
	if !pos.IsValid() {
		return 0, 0
	}
	start := pos.Offset - (pos.Column - 1)
	if start < 0 || pos.Offset > len(c.src) {
		return pos.Line, pos.Column
	}
	return pos.Line, utf8.RuneCount(c.src[start:pos.Offset]) + 1
}

func (c *checker) line(n ast.Node) int {
	l, _ := c.position(n.Pos())
	return l
}

// add records a finding of rule code at node n, once per rule and place.
func (c *checker) add(code string, n ast.Node, tool, msg string) {
	k := findingKey{code, n.Pos()}
	if c.seen[k] {
		return
	}
	c.seen[k] = true
	r := rulesByID[code]
	line, col := c.position(n.Pos())
	c.out = append(c.out, Finding{Severity: r.Severity, Code: code, Message: msg, Fix: r.Fix,
		File: c.filename, Line: line, Column: col, Tool: strings.Clone(tool)})
}

// libraryRisk reports a library that takes a sensitive step where no
// tool's analysis can tie it to a tool (in a class, at import time, in a
// nested function, in a helper no tool calls) and never uses the confirm
// handler: the library-level form of risky-pattern, which is what lcp check
// reported for every library before the analysis per tool. It stays silent
// when a tool already has a risky-pattern finding or the library mentions
// any confirmation name.
func (c *checker) libraryRisk() {
	for _, f := range c.out {
		if f.Code == "risky-pattern" {
			return
		}
	}
	var steps []step
	for _, fn := range c.order {
		if c.tools[fn] == nil && !c.called[fn] {
			if s := c.sums[fn]; s != nil {
				steps = append(steps, s.steps...)
			}
		}
	}
	if c.mentionsConfirm() {
		return
	}
	inspect := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			call, ok := n.(*ast.Call)
			if !ok || c.seenCalls[call.Pos()] {
				return true
			}
			path := c.resolveGlobal(call.Func)
			desc := sensitiveCall(path)
			if desc == "" && (path == "builtins.eval" || path == "builtins.exec" || path == "builtins.compile") &&
				len(call.Args) > 0 && !isStrLit(call.Args[0]) {
				desc = "runs code with " + opName(path)
			}
			if desc != "" {
				steps = append(steps, step{node: call, desc: desc})
			}
			return true
		})
	}
	// The analysed functions' own statements were seen: only the functions
	// and classes nested in them, and everything outside them, are walked.
	analysed := map[*ast.FunctionDef]bool{}
	for _, fn := range c.order {
		analysed[fn] = true
	}
	var walk func(list []ast.Stmt, inFunc bool)
	walk = func(list []ast.Stmt, inFunc bool) {
		for _, st := range list {
			switch st := st.(type) {
			case *ast.FunctionDef:
				if analysed[st] {
					walk(st.Body, true)
				} else {
					inspect(st)
				}
				continue
			case *ast.ClassDef:
				inspect(st)
				continue
			}
			if !inFunc {
				inspect(st)
				continue
			}
			for _, body := range stmtBodies(st) {
				walk(body, true)
			}
		}
	}
	walk(c.mod.Body, false)
	if len(steps) == 0 {
		return
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].node.Pos() < steps[j].node.Pos() })
	c.add("risky-pattern", steps[0].node, "", "the library "+c.describeSteps(steps)+
		", in code that no tool gates, and never uses the confirm handler (get it from set_confirm_handler or init_tools_library's config)")
}

// stmtBodies returns the statement lists nested in a compound statement.
func stmtBodies(st ast.Stmt) [][]ast.Stmt {
	switch st := st.(type) {
	case *ast.If:
		return [][]ast.Stmt{st.Body, st.OrElse}
	case *ast.For:
		return [][]ast.Stmt{st.Body, st.OrElse}
	case *ast.While:
		return [][]ast.Stmt{st.Body, st.OrElse}
	case *ast.With:
		return [][]ast.Stmt{st.Body}
	case *ast.Try:
		out := [][]ast.Stmt{st.Body, st.OrElse, st.FinalBody}
		for _, h := range st.Handlers {
			if h != nil {
				out = append(out, h.Body)
			}
		}
		return out
	case *ast.Match:
		var out [][]ast.Stmt
		for _, mc := range st.Cases {
			if mc != nil {
				out = append(out, mc.Body)
			}
		}
		return out
	}
	return nil
}

// describeSteps lists up to three different steps, the lines of all but
// the first (where the finding is).
func (c *checker) describeSteps(steps []step) string {
	var parts []string
	seen := map[string]bool{}
	for i, s := range steps {
		if seen[s.desc] {
			continue
		}
		seen[s.desc] = true
		if len(parts) == 3 {
			parts = append(parts, "...")
			break
		}
		if i == 0 {
			parts = append(parts, s.desc)
			continue
		}
		parts = append(parts, s.desc+" (line "+strconv.Itoa(c.line(s.node))+")")
	}
	return strings.Join(parts, ", ")
}

// resolveGlobal resolves a callee with the module's imports only.
func (c *checker) resolveGlobal(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Name:
		if p, ok := c.aliases[e.Id]; ok {
			return p
		}
		if !c.globals[e.Id] && c.funcs[e.Id] == nil && builtinNames()[e.Id] {
			return "builtins." + e.Id
		}
	case *ast.Attribute:
		if b := c.resolveGlobal(e.Value); b != "" {
			return b + "." + e.Attr
		}
	}
	return ""
}

// mentionsConfirm reports whether any name of the module looks like a
// confirmation handler or an approval helper. The text is searched first
// so that most files are not walked.
func (c *checker) mentionsConfirm() bool {
	text := false
	for _, w := range []string{"onfirm", "ONFIRM", "pprov", "PPROV"} {
		if bytes.Contains(c.src, []byte(w)) {
			text = true
			break
		}
	}
	if !text {
		return false
	}
	found := false
	ast.Inspect(c.mod, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.Name:
			found = isConfirmName(n.Id)
		case *ast.Attribute:
			found = isConfirmName(n.Attr)
		case *ast.FunctionDef:
			found = isConfirmName(n.Name)
		}
		return !found
	})
	return found
}
