package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// gitPath is a path in the workspace that git runs or loads later, found
// the way git finds it.
type gitPath struct {
	// Path is absolute and clean.
	Path string
	// Why says what git does with it, for the operator.
	Why string
}

// maxGitWalk bounds the entries gitPaths looks at while it searches the
// workspace for repositories (it never descends into git dirs).
const maxGitWalk = 200_000

// maxGitIncludes bounds how deep include files may nest (git's own limit
// is 10).
const maxGitIncludes = 10

// gitPaths finds every repository in the workspace ws (nested ones,
// worktrees and submodules with a "gitdir:" file, separate git dirs) and
// returns what inside ws git would run or load from it later: each real
// git dir, each core.hooksPath, each include.path and includeIf target
// (existing or not), and each program a configuration names by a path.
// A configuration git could not read either is an error naming the file.
func gitPaths(ws string) ([]gitPath, error) {
	g, err := findGit(ws)
	if err != nil {
		return nil, err
	}
	return g.out, nil
}

// findGit searches ws for repositories once: the finder holds what
// gitPaths returns and the git dirs (gitDirs).
func findGit(ws string) (*gitFinder, error) {
	g := &gitFinder{ws: filepath.Clean(ws), seen: map[string]bool{}}
	if err := g.walk(); err != nil {
		return nil, err
	}
	return g, nil
}

type gitFinder struct {
	ws   string
	out  []gitPath
	seen map[string]bool // git dirs and config files already read
	dirs []string        // the git dirs found, in order
}

func (g *gitFinder) add(p, why string) {
	p = filepath.Clean(p)
	if !pathWithin(p, g.ws) || p == g.ws {
		return
	}
	if slices.ContainsFunc(g.out, func(q gitPath) bool { return q.Path == p }) {
		return
	}
	g.out = append(g.out, gitPath{Path: p, Why: why})
}

func (g *gitFinder) walk() error {
	n := 0
	return filepath.WalkDir(g.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == g.ws {
				return err
			}
			return nil // unreadable: git cannot read it either
		}
		if n++; n > maxGitWalk {
			return filepath.SkipAll
		}
		if d.Name() != ".git" {
			return nil
		}
		top := filepath.Dir(p)
		var gitdir string
		switch {
		case d.IsDir():
			gitdir = p
		case d.Type().IsRegular():
			g.add(p, "the gitdir file of the repository in "+g.rel(top))
			target, err := readGitdirFile(p)
			if err != nil {
				return nil // git ignores it too
			}
			gitdir = target
		default:
			return nil
		}
		if err := g.repo(top, gitdir); err != nil {
			return err
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
}

func (g *gitFinder) rel(p string) string {
	r, err := filepath.Rel(g.ws, p)
	if err != nil || r == "." {
		return "the workspace"
	}
	return r
}

// readGitdirFile reads a ".git" file ("gitdir: <path>", relative to the
// file's folder).
func readGitdirFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	if len(b) > 64<<10 {
		return "", errors.New("too large")
	}
	line, _, _ := strings.Cut(string(b), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", errors.New("no gitdir")
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(p), target)
	}
	return filepath.Clean(target), nil
}

// repo records the git dir of the working tree top and what its
// configuration names.
func (g *gitFinder) repo(top, gitdir string) error {
	if g.seen[gitdir] {
		return nil
	}
	g.seen[gitdir] = true
	g.dirs = append(g.dirs, gitdir)
	where := g.rel(top)
	g.add(gitdir, "the git dir of the repository in "+where+": git runs its hooks and configuration")
	common := gitdir
	if b, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		common = filepath.Clean(c)
		g.add(common, "the common git dir of the worktree in "+where)
	}
	for _, cfg := range []string{filepath.Join(common, "config"), filepath.Join(gitdir, "config.worktree")} {
		if err := g.config(cfg, top, where, 0); err != nil {
			return err
		}
	}
	return nil
}

// programKeys are configuration variables whose value is a command git
// runs: section, subsection ("*" any, "" none) and key ("*" any).
var programKeys = [][3]string{
	{"core", "", "fsmonitor"}, {"core", "", "pager"}, {"core", "", "editor"},
	{"core", "", "sshcommand"}, {"core", "", "askpass"}, {"sequence", "", "editor"},
	{"gpg", "", "program"}, {"gpg", "*", "program"}, {"credential", "", "helper"},
	{"credential", "*", "helper"}, {"diff", "", "external"}, {"diff", "*", "textconv"},
	{"diff", "*", "command"}, {"filter", "*", "clean"}, {"filter", "*", "smudge"},
	{"filter", "*", "process"}, {"merge", "*", "driver"}, {"difftool", "*", "cmd"},
	{"mergetool", "*", "cmd"}, {"pager", "", "*"}, {"alias", "", "*"},
	{"uploadpack", "", "packobjectshook"}, {"receive", "", "procreceiverefs"},
}

func isProgramKey(v gitVar) bool {
	return slices.ContainsFunc(programKeys, func(k [3]string) bool {
		return k[0] == v.Section &&
			(k[1] == "*" && v.Sub != "" || k[1] == "" && v.Sub == "") &&
			(k[2] == "*" || k[2] == v.Key)
	})
}

// config reads one configuration file (missing is fine: git skips it).
func (g *gitFinder) config(file, top, where string, depth int) error {
	if g.seen[file] {
		return nil
	}
	g.seen[file] = true
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox: git configuration %s: %w", file, err)
	}
	vars, err := parseGitConfig(b)
	if err != nil {
		return fmt.Errorf("sandbox: git configuration %s cannot be parsed, so lcp cannot tell what git would run from it: %w", file, err)
	}
	for _, v := range vars {
		switch {
		case v.Section == "core" && v.Sub == "" && v.Key == "hookspath":
			g.add(resolveGitPath(v.Value, top), "core.hooksPath of the repository in "+where+": git runs hooks from there")
		case (v.Section == "include" && v.Sub == "" || v.Section == "includeif") && v.Key == "path":
			inc := resolveGitPath(v.Value, filepath.Dir(file))
			g.add(inc, "included by "+g.rel(file)+": git loads it as configuration")
			if depth < maxGitIncludes && inc != "" {
				if err := g.config(inc, top, where, depth+1); err != nil {
					return err
				}
			}
		case isProgramKey(v):
			cmd := strings.TrimPrefix(strings.TrimSpace(v.Value), "!")
			first, _, _ := strings.Cut(strings.TrimSpace(cmd), " ")
			if strings.Contains(first, "/") {
				g.add(resolveGitPath(first, top), v.Section+"."+v.Key+" of the repository in "+where+": git runs it")
			}
		}
	}
	return nil
}

// resolveGitPath resolves a path from a git configuration: "~/" is the
// home folder, a relative path is relative to base.
func resolveGitPath(p, base string) string {
	if p == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		return filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// pathWithin reports whether p is dir or below it (both clean and
// absolute).
func pathWithin(p, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// Protected describes, one line each ("sub/.git: the git dir of …"), what
// git runs or loads from the repositories of the workspace ws: what a
// Write run keeps read-only and a copy-on-write run asks about. A
// confirmation shows it. The error names a configuration git could not
// read.
func Protected(ws string) ([]string, error) {
	found, err := gitPaths(ws)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(found))
	for _, g := range found {
		out = append(out, relLine(ws, g))
	}
	return out, nil
}

// relLine is a gitPath as "path: why", the path relative to ws.
func relLine(ws string, g gitPath) string {
	rel, err := filepath.Rel(ws, g.Path)
	if err != nil {
		rel = g.Path
	}
	return filepath.ToSlash(rel) + ": " + g.Why
}

// KeptReadOnly describes, one line each, what a Write run in the workspace
// ws keeps read-only (the set the run's mounts are made from): the
// version control folders at its top (VCSDirs) and what Protected lists
// outside them, each as "path: why" with the path relative to ws. It
// creates nothing (a Write run's set-up makes placeholders for missing
// paths). The error names a configuration git could not read, for which
// a Write run does not start.
func KeptReadOnly(ws string) ([]string, error) {
	ws = filepath.Clean(ws)
	var tops []string
	var out []string
	for _, d := range VCSDirs {
		if _, err := os.Lstat(filepath.Join(ws, d)); err == nil {
			tops = append(tops, filepath.Join(ws, d))
			out = append(out, d+": a version control folder")
		}
	}
	found, err := gitPaths(ws)
	if err != nil {
		return nil, err
	}
	for _, g := range found {
		if slices.ContainsFunc(tops, func(t string) bool { return pathWithin(g.Path, t) }) {
			continue
		}
		out = append(out, relLine(ws, g))
	}
	return out, nil
}
