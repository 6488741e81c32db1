package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// disabledSuffix ends the names lcp moves a new repository's hooks and
// configuration to.
const disabledSuffix = ".lcp-disabled"

// gitDirs returns the git dirs of the repositories in ws, found as
// gitPaths finds them.
func gitDirs(ws string) (map[string]bool, error) {
	g, err := findGit(ws)
	if err != nil {
		return nil, err
	}
	return g.gitDirSet(), nil
}

func (g *gitFinder) gitDirSet() map[string]bool {
	out := make(map[string]bool, len(g.dirs))
	for _, d := range g.dirs {
		out[d] = true
	}
	return out
}

// neutraliseNewRepos finds the repositories in ws whose git dir is not in
// known (a run created them) and disables what git would run from them
// later: a hooks folder holding anything but git's ".sample" files is
// moved to "hooks.lcp-disabled"; a configuration that names a hooks path,
// an include or a program is moved to "config.lcp-disabled" and replaced
// by its other variables. It returns one line per change for the run's
// report.
func neutraliseNewRepos(ws string, known map[string]bool) ([]string, error) {
	g := &gitFinder{ws: filepath.Clean(ws), seen: map[string]bool{}}
	// A configuration git cannot parse stops the walk; the run made it,
	// so the lines below still handle the repositories found before.
	walkErr := g.walk()
	var lines []string
	var errs []error
	for _, dir := range g.dirs {
		if known[dir] || !pathWithin(dir, g.ws) {
			continue
		}
		name := g.rel(dir)
		if l, err := disableHooks(g.ws, dir); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		} else if l != "" {
			lines = append(lines, "new repository "+name+": "+l)
		}
		for _, cfg := range []string{filepath.Join(dir, "config"), filepath.Join(dir, "config.worktree")} {
			if l, err := disableConfig(g.ws, cfg); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			} else if l != "" {
				lines = append(lines, "new repository "+name+": "+l)
			}
		}
	}
	if walkErr != nil {
		errs = append(errs, walkErr)
	}
	return lines, errors.Join(errs...)
}

// disableHooks moves dir/hooks aside when it holds a hook git would run.
func disableHooks(ws, dir string) (string, error) {
	hooks := filepath.Join(dir, "hooks")
	ents, err := os.ReadDir(hooks)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".sample") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	to, err := moveAside(hooks)
	if err != nil {
		return "", err
	}
	return "hooks disabled: " + strings.Join(names, ", ") + " (moved to " + relTo(ws, to) + ")", nil
}

// disableConfig moves the configuration file cfg aside when it names a
// hooks path, an include or a program, and writes its other variables
// back in its place.
func disableConfig(ws, cfg string) (string, error) {
	b, err := os.ReadFile(cfg)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	vars, perr := parseGitConfig(b)
	var bad []string
	var keep strings.Builder
	section, sub := "", ""
	for _, v := range vars {
		if runsLaterVar(v) {
			bad = append(bad, gitVarName(v))
			continue
		}
		if v.Section != section || v.Sub != sub || keep.Len() == 0 {
			section, sub = v.Section, v.Sub
			if sub == "" {
				fmt.Fprintf(&keep, "[%s]\n", section)
			} else {
				fmt.Fprintf(&keep, "[%s \"%s\"]\n", section, strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(sub))
			}
		}
		fmt.Fprintf(&keep, "\t%s = %s\n", v.Key, quoteGitValue(v.Value))
	}
	if perr != nil {
		// git refuses it now; moved aside, it cannot be fixed into
		// something that runs a program without the user seeing it.
		bad, keep = []string{"a configuration lcp cannot parse"}, strings.Builder{}
	}
	if len(bad) == 0 {
		return "", nil
	}
	to, err := moveAside(cfg)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(cfg, []byte(keep.String()), 0o644); err != nil {
		return "", err
	}
	return filepath.Base(cfg) + " disabled: " + strings.Join(bad, ", ") + " (moved to " + relTo(ws, to) + ", the rest kept)", nil
}

// runsLaterVar reports whether git runs or loads something named by v.
func runsLaterVar(v gitVar) bool {
	return v.Section == "core" && v.Sub == "" && v.Key == "hookspath" ||
		(v.Section == "include" && v.Sub == "" || v.Section == "includeif") && v.Key == "path" ||
		isProgramKey(v)
}

func gitVarName(v gitVar) string {
	if v.Sub != "" {
		return v.Section + "." + v.Sub + "." + v.Key
	}
	return v.Section + "." + v.Key
}

// quoteGitValue writes a value so that git reads it back unchanged.
func quoteGitValue(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\b", `\b`)
	return `"` + r.Replace(s) + `"`
}

// moveAside renames p to p+disabledSuffix (or a numbered variant when
// that exists) and returns the new name.
func moveAside(p string) (string, error) {
	for i := 0; i < 100; i++ {
		to := p + disabledSuffix
		if i > 0 {
			to += "." + strconv.Itoa(i)
		}
		if _, err := os.Lstat(to); err == nil {
			continue
		}
		if err := os.Rename(p, to); err != nil {
			return "", err
		}
		return to, nil
	}
	return "", fmt.Errorf("%s: no free name to move it to", p)
}

func relTo(ws, p string) string {
	if r, err := filepath.Rel(ws, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}
