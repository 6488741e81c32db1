package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/lcptools/lcp/sandbox"
	"mvdan.cc/sh/v3/syntax"
)

// Some commands off the read-only list are proven harmless by rules of
// their own, so that safe mode without a sandbox runs everyday work
// without asking (see docs/decisions.md, "Issue 21: seccomp and the
// classifier"):
//
//   - python3 -c CODE and python3 SCRIPT.py, when Options.Python judges
//     the code harmless and no file in the folder Python puts first on
//     sys.path shadows a standard module (or is a sitecustomize);
//   - pip list, pip freeze, pip show, pip check with options that only
//     change the listing;
//   - tar creating a new archive (c) or listing one (t), with z, j, J, v
//     and f only;
//   - make of targets whose recipes Classify passes, in a makefile that
//     expands nothing and includes nothing (makeProven).
//
// Every argument must be static. Anything else takes the ordinary path
// (ask).

// maxScript is the largest script or makefile read to judge it.
const maxScript = 1 << 20

// proven reports whether name with args is proven harmless by the rules
// above; it may record findings (a write judged the ordinary way) and still
// return true, since the command itself was judged.
func (c *classifier) proven(n syntax.Node, name string, args []*syntax.Word) bool {
	texts := make([]string, 0, len(args))
	for _, w := range args {
		a := analyze(w)
		if !a.static {
			return false
		}
		texts = append(texts, a.text)
	}
	switch {
	case strings.HasPrefix(name, "pip") && isPythonName(name):
		return pipListing(texts)
	case isPythonName(name):
		return c.pythonProven(texts)
	case name == "tar":
		return c.tarProven(n, texts)
	case name == "make" || name == "gmake":
		return c.makeProven(n, texts)
	}
	return false
}

// pythonFlags change nothing about what Python runs.
var pythonFlags = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"-u": true, "-B": true, "-E": true, "-s": true, "-I": true, "-q": true, "-b": true, "-bb": true}
})

func (c *classifier) pythonProven(t []string) bool {
	if c.python == nil || c.cwdMoved || c.paths.ws == "" {
		return false
	}
	i := 0
	for i < len(t) && pythonFlags()[t[i]] {
		i++
	}
	if i >= len(t) {
		return false // reads code from stdin or a terminal
	}
	var code, dir string
	switch {
	case t[i] == "-c":
		if i+1 >= len(t) {
			return false
		}
		code, dir = t[i+1], c.paths.ws
	case strings.HasPrefix(t[i], "-") || !strings.HasSuffix(t[i], ".py"):
		return false
	default:
		p := t[i]
		if !filepath.IsAbs(p) {
			p = filepath.Join(c.paths.ws, p)
		}
		if !c.paths.inside(p) {
			return false
		}
		f, err := os.Open(p)
		if err != nil {
			return false
		}
		buf := make([]byte, maxScript+1)
		m, _ := f.Read(buf)
		f.Close()
		if m > maxScript {
			return false
		}
		code, dir = string(buf[:m]), filepath.Dir(p)
	}
	if c.pythonShadowed(dir) {
		return false
	}
	return len(c.python(code, dir)) == 0
}

// pythonShadowed reports whether dir (first on sys.path) or a PYTHONPATH
// entry in the workspace holds a module or package named like a standard
// module, a sitecustomize or a usercustomize, or cannot be read
// (sandbox.PythonPathShadows).
func (c *classifier) pythonShadowed(dir string) bool {
	found, err := sandbox.PythonPathShadows(c.paths.ws, dir, os.Getenv("PYTHONPATH"))
	return err != nil || len(found) > 0
}

// pipSubs are pip's listing subcommands, with the options allowed.
var pipSubs = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"list": {"-l", "--local", "--user", "--not-required", "-e", "--editable", "--exclude-editable",
			"--include-editable", "-v", "--verbose", "-q", "--quiet", "--no-color", "--disable-pip-version-check",
			"--format=columns", "--format=freeze", "--format=json", "--pre"},
		"freeze": {"-l", "--local", "--user", "--all", "--exclude-editable", "-q", "--quiet", "--disable-pip-version-check"},
		"show":   {"-f", "--files", "-v", "--verbose", "-q", "--quiet", "--disable-pip-version-check", "--no-color"},
		"check":  {"-q", "--quiet", "--disable-pip-version-check"},
	}
})

// pipListing accepts pip list/freeze/show/check: pip's console script puts
// its own folder on sys.path, not the working folder, and these read the
// installed packages only (pip list's weekly version check asks PyPI
// which pip is newest).
func pipListing(t []string) bool {
	if len(t) == 0 {
		return false
	}
	allowed, ok := pipSubs()[t[0]]
	if !ok {
		return false
	}
	for i := 1; i < len(t); i++ {
		a := t[i]
		switch {
		case a == "--format" && t[0] == "list" && i+1 < len(t) && slices.Contains([]string{"columns", "freeze", "json"}, t[i+1]):
			i++
		case strings.HasPrefix(a, "-"):
			if !slices.Contains(allowed, a) {
				return false
			}
		case t[0] != "show":
			return false // list, freeze and check take no operands
		}
	}
	return true
}

// tarProven accepts `tar c[zjJv]f NEW.tar SOURCES...` (also with a dash)
// and `tar t[zjJv]f ARCHIVE [MEMBERS...]`: a new archive is judged as a
// new file; sources and members are only read.
func (c *classifier) tarProven(n syntax.Node, t []string) bool {
	if len(t) < 2 {
		return false
	}
	letters := strings.TrimPrefix(t[0], "-")
	if letters == "" || strings.Trim(letters, "ctzjJvf") != "" || strings.Count(letters, "f") != 1 ||
		strings.Count(letters, "c")+strings.Count(letters, "t") != 1 {
		return false
	}
	// The archive is the value of f: the rest of a dashed cluster, or the
	// next word.
	var archive string
	rest := t[1:]
	if strings.HasPrefix(t[0], "-") && !strings.HasSuffix(letters, "f") {
		return false // -fz would read "z" as the archive
	}
	archive, rest = rest[0], rest[1:]
	if strings.Contains(archive, ":") {
		return false // GNU tar reads host:file as a remote archive (rsh)
	}
	for _, r := range rest {
		if strings.HasPrefix(r, "-") && !strings.HasPrefix(r, "--exclude=") {
			return false
		}
	}
	if strings.Contains(letters, "c") && archive != "-" {
		if strings.Contains(letters, "t") || len(rest) == 0 {
			return false
		}
		c.writeArgAs(n, arg{value: archive, static: true}, true)
	}
	return true
}

// checkTouchTimes asks for touch on an existing entry: its times are part
// of what the workspace is (make and other tools act on them).
func (c *classifier) checkTouchTimes(n syntax.Node, a arg) {
	if !a.static || c.cwdMoved {
		return // judged as a write already
	}
	p := a.value
	if !filepath.IsAbs(p) {
		if c.paths.ws == "" {
			return
		}
		p = filepath.Join(c.paths.ws, p)
	}
	if _, err := os.Lstat(p); err == nil {
		c.ask(n, "touch changes the times of an existing entry (%s)", a.value)
	}
}

// gitAddFlags are the options of git add that only choose what is staged.
var gitAddFlags = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"-A": true, "--all": true, "-u": true, "--update": true, "-v": true,
		"--verbose": true, "-n": true, "--dry-run": true, "-N": true, "--intent-to-add": true, "-f": true,
		"--force": true, "--ignore-errors": true, "--no-all": true, "--ignore-removal": true, "--": true}
})

// gitAdd accepts git add of paths: it writes the index and new objects
// only, runs no hook, and the filters it could run are named by the
// configuration, which checkGit has judged. -p, -i and -e run an editor
// or a terminal dialogue, and ask.
func (c *classifier) gitAdd(n syntax.Node, rest []string) {
	for _, t := range rest {
		if strings.HasPrefix(t, "-") && !gitAddFlags()[t] {
			c.ask(n, "git add %s is interactive or not judged", t)
			return
		}
	}
	// A sandbox that shows .git read-only must let it write there.
	msg := fmt.Sprintf("`%s`: git add writes the repository's index", c.snippet(n))
	if !slices.ContainsFunc(c.needs, func(p sandbox.Permission) bool { return p.Kind == sandbox.WriteVCS }) {
		c.needs = append(c.needs, sandbox.Permission{Kind: sandbox.WriteVCS, Reason: msg})
	}
}

// makeFlags are the options of make that change nothing about what runs.
var makeFlags = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"-s": true, "--silent": true, "--quiet": true, "-n": true, "--dry-run": true,
		"--just-print": true, "--recon": true, "-k": true, "--keep-going": true}
})

// makeDirectives start lines that are not rules; a makefile with any of
// them is not judged.
var makeDirectives = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"include": true, "-include": true, "sinclude": true, "export": true,
		"unexport": true, "override": true, "define": true, "endef": true, "ifeq": true, "ifneq": true,
		"ifdef": true, "ifndef": true, "else": true, "endif": true, "vpath": true, "private": true,
		"undefine": true, "load": true, "-load": true}
})

// makeSpecial are the special targets allowed: they change nothing about
// which recipes run.
var makeSpecial = sync.OnceValue(func() map[string]bool {
	return map[string]bool{".PHONY": true, ".SILENT": true, ".NOTPARALLEL": true, ".DELETE_ON_ERROR": true}
})

type makeRule struct {
	prereqs []string
	recipe  []string
}

// makeProven accepts make of targets (the first one by default) of the
// working folder's makefile when that makefile is plain: no $ but $$, no
// variables, directives, pattern, suffix or double-colon rules; every
// target reached has its recipe in the file or is an existing file no
// built-in implicit rule could remake (no other file with its stem, no
// RCS or SCCS folder); and every recipe line passes Classify itself.
func (c *classifier) makeProven(n syntax.Node, t []string) bool {
	if c.cwdMoved || c.paths.ws == "" || c.depth >= 3 {
		return false
	}
	var goals []string
	for _, a := range t {
		switch {
		case makeFlags()[a]:
		case strings.HasPrefix(a, "-") || strings.Contains(a, "="):
			return false
		default:
			goals = append(goals, a)
		}
	}
	ws := c.paths.ws
	var src []byte
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		if fi, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			// make first tries to remake the makefile itself, by the same
			// built-in rules as any file.
			if !fi.Mode().IsRegular() || fi.Size() > maxScript || !makeLeaf(ws, name) {
				return false
			}
			if src, err = os.ReadFile(filepath.Join(ws, name)); err != nil {
				return false
			}
			break
		}
	}
	if src == nil {
		return false
	}
	rules, phony, first, ok := parseMakefile(string(src))
	if !ok {
		return false
	}
	if len(goals) == 0 {
		if first == "" {
			return false
		}
		goals = []string{first}
	}
	for _, d := range []string{"RCS", "SCCS"} {
		if _, err := os.Lstat(filepath.Join(ws, d)); err == nil {
			return false
		}
	}
	seen := map[string]bool{}
	opts := &Options{Workspace: ws, Home: c.paths.home, Python: c.python}
	var walk func(target string) bool
	walk = func(target string) bool {
		if seen[target] {
			return true
		}
		seen[target] = true
		r, ok := rules[target]
		if !ok || len(r.recipe) == 0 && !phony[target] {
			if !makeLeaf(ws, target) {
				return false
			}
			if !ok {
				return true
			}
		}
		for _, p := range r.prereqs {
			if !walk(p) {
				return false
			}
		}
		for _, line := range r.recipe {
			if classify(line, opts, c.depth+1).Decision != Run {
				return false
			}
		}
		return true
	}
	for _, g := range goals {
		if !walk(g) {
			return false
		}
	}
	return true
}

// makeLeaf reports whether target is an existing file of the workspace
// that no built-in implicit rule could remake: no other entry of its
// folder shares its stem (x.c, x.y, x.o, x.sh, ...) or is its RCS/SCCS
// form (x,v, s.x).
func makeLeaf(ws, target string) bool {
	if strings.ContainsAny(target, "*?[") {
		return false
	}
	p := filepath.Join(ws, target)
	if !filepath.IsLocal(target) {
		return false
	}
	if _, err := os.Stat(p); err != nil {
		return false
	}
	dir, base := filepath.Split(p)
	stem, _, _ := strings.Cut(base, ".")
	names, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range names {
		s, _, _ := strings.Cut(e.Name(), ".")
		if e.Name() != base && (s == stem || e.Name() == "s."+base || strings.HasPrefix(e.Name(), base+",")) {
			return false
		}
	}
	return true
}

// parseMakefile reads the plain makefiles makeProven accepts: their rules,
// phony targets (for which make searches no implicit rule) and first
// target; ok false for anything else.
func parseMakefile(src string) (rules map[string]*makeRule, phony map[string]bool, first string, ok bool) {
	if strings.Contains(strings.ReplaceAll(src, "$$", ""), "$") || strings.Contains(src, "\r") {
		return nil, nil, "", false
	}
	src = strings.ReplaceAll(src, "\\\n", " ")
	rules, phony = map[string]*makeRule{}, map[string]bool{}
	var cur []*makeRule
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, "\t") {
			if cur == nil {
				if strings.TrimSpace(line) == "" {
					continue
				}
				return nil, nil, "", false
			}
			cmd := strings.TrimLeft(strings.TrimSpace(line), "@-+ \t")
			cmd = strings.ReplaceAll(cmd, "$$", "$")
			if cmd != "" {
				for _, r := range cur {
					r.recipe = append(r.recipe, cmd)
				}
			}
			continue
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		if makeDirectives()[fields[0]] || strings.ContainsAny(line, "=%") || strings.Contains(line, "::") {
			return nil, nil, "", false
		}
		head, recipe, hasRecipe := strings.Cut(line, ";")
		targets, prereqs, isRule := strings.Cut(head, ":")
		if !isRule || strings.Contains(prereqs, ":") || strings.Contains(prereqs, "|") {
			return nil, nil, "", false
		}
		cur = nil
		for _, tg := range strings.Fields(targets) {
			if strings.HasPrefix(tg, ".") {
				if !makeSpecial()[tg] {
					return nil, nil, "", false
				}
				if tg == ".PHONY" {
					for _, p := range strings.Fields(prereqs) {
						phony[p] = true
					}
				}
				continue
			}
			if first == "" {
				first = tg
			}
			r := rules[tg]
			if r == nil {
				r = &makeRule{}
				rules[tg] = r
			}
			// A later recipe for the same target replaces the earlier
			// one in make; both are judged here.
			r.prereqs = append(r.prereqs, strings.Fields(prereqs)...)
			cur = append(cur, r)
		}
		if hasRecipe {
			cmd := strings.TrimLeft(strings.TrimSpace(strings.ReplaceAll(recipe, "$$", "$")), "@-+ \t")
			for _, r := range cur {
				if cmd != "" {
					r.recipe = append(r.recipe, cmd)
				}
			}
		}
		if cur == nil {
			cur = []*makeRule{} // recipe lines of special targets are dropped
		}
	}
	return rules, phony, first, true
}
