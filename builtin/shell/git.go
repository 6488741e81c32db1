package shell

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/lcptools/lcp/sandbox"
	"mvdan.cc/sh/v3/syntax"
)

// gitGlobalFlags are the options before a git subcommand that change
// nothing about which programs git runs or which repository it uses.
var gitGlobalFlags = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"--no-pager": true, "-P": true, "--no-optional-locks": true, "--literal-pathspecs": true,
		"--glob-pathspecs": true, "--noglob-pathspecs": true, "--icase-pathspecs": true,
		"--no-replace-objects": true, "--no-lazy-fetch": true, "--no-advice": true,
	}
})

// gitReadOnly are subcommands that only read the repository. Git itself is
// further hardened when safe mode runs a command (see SafeEnv): hooks,
// fsmonitor, pagers and remote transports are switched off.
var gitReadOnly = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"status": true, "log": true, "diff": true, "show": true, "shortlog": true, "blame": true,
		"annotate": true, "describe": true, "rev-parse": true, "rev-list": true, "ls-files": true,
		"ls-tree": true, "cat-file": true, "show-ref": true, "for-each-ref": true, "name-rev": true,
		"merge-base": true, "count-objects": true, "check-ignore": true, "check-attr": true,
		"whatchanged": true, "version": true, "cherry": true, "diff-tree": true, "diff-files": true,
		"diff-index": true, "show-branch": true, "grep": true, "range-diff": true,
	}
})

var gitNetwork = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"fetch": true, "pull": true, "push": true, "clone": true, "ls-remote": true, "remote-update": true,
		"submodule": true, "send-email": true, "request-pull": true, "archive": true,
	}
})

func checkGit(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	var texts []string
	static := true
	for _, w := range args {
		a := analyze(w)
		if !a.optionSafe() {
			c.ask(n, "argument `%s` of git is expanded at run time and could become an option", c.snippet(w))
			return
		}
		texts = append(texts, a.text)
		static = static && a.static
	}
	if c.cwdMoved {
		c.ask(n, "git after a change of directory reads that folder's repository and its configuration")
		return
	}
	if why := c.gitConfigRisk(); why != "" {
		c.ask(n, "%s", why)
		return
	}
	i := 0
	for ; i < len(texts); i++ {
		t := texts[i]
		switch {
		case t == "-C":
			if i+1 >= len(texts) || !static || !c.gitDirOK(texts[i+1]) {
				c.ask(n, "git -C runs with another folder's repository and configuration, which can run programs")
				return
			}
			i++
		case t == "--version":
			return
		case gitGlobalFlags()[t]:
		case t == "-c" || strings.HasPrefix(t, "--config-env") || strings.HasPrefix(t, "-c"):
			c.ask(n, "git -c sets configuration, which can run programs (core.pager, core.fsmonitor, ...)")
			return
		case strings.HasPrefix(t, "-"):
			c.ask(n, "git option %s can switch repositories or run programs", t)
			return
		default:
			c.gitSub(n, t, texts[i+1:])
			return
		}
	}
}

func (c *classifier) gitSub(n syntax.Node, sub string, rest []string) {
	for _, t := range rest {
		a := arg{opt: strings.SplitN(t, "=", 2)[0]}
		switch {
		case a.long("output"):
			c.ask(n, "git %s --output writes a file", sub)
			return
		case a.long("ext-diff"):
			c.ask(n, "git %s --ext-diff runs an external diff program", sub)
			return
		case sub == "grep" && (t == "-O" || strings.HasPrefix(t, "-O") || a.long("open-files-in-pager")):
			c.ask(n, "git grep -O runs a pager")
			return
		}
	}
	switch {
	case gitReadOnly()[sub]:
	case sub == "branch":
		c.gitListing(n, sub, rest, map[string]bool{"-a": true, "--all": true, "-r": true, "--remotes": true,
			"-v": true, "-vv": true, "--verbose": true, "--show-current": true, "-i": true, "--ignore-case": true,
			"--no-color": true, "--no-column": true, "--no-abbrev": true, "--omit-empty": true})
	case sub == "tag":
		c.gitListing(n, sub, rest, map[string]bool{"-i": true, "--ignore-case": true, "--no-color": true,
			"--no-column": true, "--omit-empty": true})
	case sub == "remote":
		if len(rest) == 0 || (len(rest) == 1 && (rest[0] == "-v" || rest[0] == "--verbose")) ||
			(len(rest) >= 1 && rest[0] == "get-url") {
			return
		}
		c.ask(n, "git remote %s changes remotes or contacts them", strings.Join(rest, " "))
	case sub == "config":
		c.gitConfig(n, rest)
	case sub == "add":
		c.gitAdd(n, rest)
	case sub == "stash" || sub == "notes":
		if len(rest) > 0 && (rest[0] == "list" || rest[0] == "show") {
			return
		}
		c.ask(n, "git %s without list/show changes the repository", sub)
	case sub == "worktree":
		if len(rest) > 0 && rest[0] == "list" {
			return
		}
		c.ask(n, "git worktree without list changes worktrees")
	case sub == "reflog":
		if len(rest) == 0 || rest[0] == "show" || strings.HasPrefix(rest[0], "-") {
			return
		}
		c.ask(n, "git reflog %s changes the reflog", rest[0])
	case gitNetwork()[sub]:
		c.need(n, sandbox.Network, "", "git %s uses the network", sub)
	default:
		c.need(n, sandbox.WriteVCS, "", "git %s changes the repository or is not on the read-only list", sub)
	}
}

// gitListing accepts branch/tag only in their listing forms: no operand, or
// -l/--list with patterns, and only listing options.
func (c *classifier) gitListing(n syntax.Node, sub string, rest []string, flags map[string]bool) {
	valued := []string{"contains", "no-contains", "merged", "no-merged", "points-at", "sort", "format"}
	list := false
	operand := false
	for i := 0; i < len(rest); i++ {
		t := rest[i]
		name, _, eq := strings.Cut(t, "=")
		switch {
		case t == "-l" || t == "--list":
			list = true
		case flags[t]:
		case strings.HasPrefix(t, "--color") || strings.HasPrefix(t, "--column") || strings.HasPrefix(t, "--abbrev") ||
			(sub == "tag" && strings.HasPrefix(t, "-n")):
		case strings.HasPrefix(t, "--") && takesLong(valued, name[2:]) && name != "--":
			if !eq && i+1 < len(rest) {
				i++
			}
		case strings.HasPrefix(t, "-"):
			c.ask(n, "git %s %s changes %ses", sub, t, sub)
			return
		default:
			operand = true
		}
	}
	if operand && !list {
		c.ask(n, "git %s with a name creates a %s", sub, sub)
	}
}

// gitConfig accepts reading configuration only.
func (c *classifier) gitConfig(n syntax.Node, rest []string) {
	read := false
	operands := 0
	for i := 0; i < len(rest); i++ {
		t := rest[i]
		switch {
		case i == 0 && (t == "get" || t == "list"):
			return
		case i == 0 && (t == "set" || t == "unset" || t == "rename-section" || t == "remove-section" || t == "edit"):
			c.ask(n, "git config %s changes configuration", t)
			return
		case t == "-l" || t == "--list" || strings.HasPrefix(t, "--get"):
			read = true
		case t == "--global" || t == "--system" || t == "--local" || t == "--worktree" ||
			t == "--show-origin" || t == "--show-scope" || t == "--name-only" || t == "-z" || t == "--null" ||
			strings.HasPrefix(t, "--type") || t == "--bool" || t == "--int" || t == "--path" || strings.HasPrefix(t, "--default"):
		case t == "-f" || t == "--file" || t == "--blob":
			i++
		case strings.HasPrefix(t, "--file=") || strings.HasPrefix(t, "--blob="):
		case strings.HasPrefix(t, "-"):
			c.ask(n, "git config %s changes configuration", t)
			return
		default:
			operands++
		}
	}
	if !read && operands > 1 {
		c.ask(n, "git config with a value changes configuration")
	}
}

// gitDirOK reports whether git -C dir stays with the workspace's own
// repository: dir is inside the workspace and is not itself a bare
// repository (a folder with HEAD, objects and config, whose configuration
// git would obey).
func (c *classifier) gitDirOK(dir string) bool {
	if !c.paths.inside(dir) {
		return false
	}
	p := dir
	if !filepath.IsAbs(p) && c.paths.ws != "" {
		p = filepath.Join(c.paths.ws, p)
	}
	return !looksBare(p)
}

func looksBare(dir string) bool {
	for _, f := range []string{"HEAD", "objects", "config"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}

// gitRunsPrograms matches git configuration that makes read-only
// subcommands run programs the hardened environment does not switch
// off: diff drivers (external, textconv, command), filters (clean,
// smudge, process) and includes of other files.
var gitRunsPrograms = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?im)^\s*(external|textconv|command|clean|smudge|process)\s*=|^\s*\[\s*include`)
})

// gitConfigRisk says why git's configuration (the workspace's repository,
// or a bare repository that the workspace is, and the user's own) can
// make git run programs; "" when it cannot. Read once per command.
func (c *classifier) gitConfigRisk() string {
	if c.gitRisk != nil {
		return *c.gitRisk
	}
	why := ""
	var files []string
	if ws := c.paths.ws; ws != "" {
		files = append(files, filepath.Join(ws, ".git", "config"))
		if looksBare(ws) {
			files = append(files, filepath.Join(ws, "config"))
		}
		if raw, err := os.ReadFile(filepath.Join(ws, ".git")); err == nil {
			if gd, ok := strings.CutPrefix(strings.TrimSpace(string(raw)), "gitdir:"); ok {
				gd = strings.TrimSpace(gd)
				if !filepath.IsAbs(gd) {
					gd = filepath.Join(ws, gd)
				}
				files = append(files, filepath.Join(gd, "config"))
			}
		}
	}
	if h := c.paths.home; h != "" {
		files = append(files, filepath.Join(h, ".gitconfig"), filepath.Join(h, ".config", "git", "config"))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err == nil && gitRunsPrograms().Match(raw) {
			why = "git's configuration (" + f + ") sets diff drivers, filters or includes, which run programs"
			break
		}
	}
	c.gitRisk = &why
	return why
}
