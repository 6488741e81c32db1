package shell

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/lcptools/lcp/sandbox"
)

// maxSymlinks bounds symlink resolution, as the kernel does.
const maxSymlinks = 40

// pathJudge decides whether a path a command writes to stays inside the
// workspace.
type pathJudge struct {
	ws     string // absolute, cleaned; "" when no workspace was given
	wsReal string // ws with symlinks resolved
	home   string
}

func newPathJudge(ws, home string) pathJudge {
	j := pathJudge{home: home}
	if ws != "" {
		if abs, err := filepath.Abs(ws); err == nil {
			j.ws = abs
			j.wsReal = abs
			if real, ok := resolve(abs, 0); ok {
				j.wsReal = real
			}
		}
	}
	return j
}

// specialWrite lists write targets that are always harmless.
var specialWrite = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/dev/(null|stdout|stderr|fd/[0-9]+)$`)
})

// expandTilde turns "~" and "~/x" into paths under home. Other tilde forms
// (~user, ~+, ~-) are not judged.
func (j pathJudge) expandTilde(s string) (string, bool) {
	if j.home == "" {
		return "", false
	}
	if s == "~" {
		return j.home, true
	}
	if rest, ok := strings.CutPrefix(s, "~/"); ok {
		return filepath.Join(j.home, rest), true
	}
	return "", false
}

// judgement is a reason to ask and the permission beyond the sandbox it
// implies ("" when the sandbox contains it).
type judgement struct {
	why  string
	perm sandbox.PermissionKind
	path string
}

func outside(p string) judgement {
	return judgement{why: "writes outside the workspace (" + p + ")", perm: sandbox.WritePath, path: p}
}

var inGit = judgement{why: "writes inside .git, where git keeps hooks and configuration", perm: sandbox.WriteVCS}

// writeVerdict judges a static write target; replace says the write
// replaces an existing file's content. Its why is "" when the write stays
// inside the workspace and loses nothing.
func (j pathJudge) writeVerdict(p string, cwdMoved, replace bool) judgement {
	if p == "" {
		return judgement{why: "writes to an empty path"}
	}
	if specialWrite().MatchString(p) {
		return judgement{}
	}
	if strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/") {
		return judgement{why: "opens a network connection through " + p, perm: sandbox.Network}
	}
	if !filepath.IsAbs(p) {
		if cwdMoved {
			return judgement{why: "writes to a relative path after changing directory"}
		}
		if j.ws == "" {
			if !filepath.IsLocal(p) {
				return judgement{why: "writes outside the workspace (" + p + ")"}
			}
			if inGitDir(p) {
				return inGit
			}
			return replacing(p, p, replace)
		}
		p = j.ws + string(filepath.Separator) + p
	} else if j.ws == "" {
		return outside(p)
	}
	real, ok := resolve(p, 0)
	if !ok {
		return judgement{why: "writes through a symbolic link loop (" + p + ")"}
	}
	rel, err := filepath.Rel(j.wsReal, real)
	if err != nil || !filepath.IsLocal(rel) {
		return outside(real)
	}
	if inGitDir(rel) {
		return inGit
	}
	if fi, err := os.Lstat(real); err == nil && fi.Mode().IsRegular() && linkCount(fi) > 1 {
		return judgement{why: "writes to a file with several hard links, which may be outside the workspace (" + p + ")"}
	}
	return replacing(real, p, replace)
}

// replacing judges a write into an existing file: it loses its content
// (without a sandbox, nothing brings it back).
func replacing(real, shown string, replace bool) judgement {
	if !replace {
		return judgement{}
	}
	if fi, err := os.Lstat(real); err == nil && !fi.IsDir() && fi.Mode()&os.ModeDevice == 0 {
		return judgement{why: "overwrites an existing file (" + shown + ")"}
	}
	return judgement{}
}

// procFiles matches paths into the files of a process through /proc (its
// root, working directory, descriptors, executable, environment, memory),
// whatever PID they name (even one expanded at run time: the literal parts
// are matched).
var procFiles = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|/)proc/[^/]*/+(root|cwd|fd|fdinfo|exe|environ|mem|map_files|task|cmdline)(/|$)`)
})

// procPath reports whether a path reaches another process's files.
func procPath(p string) bool {
	return strings.Contains(p, "proc/") && procFiles().MatchString(filepath.ToSlash(p)) &&
		!specialWrite().MatchString(p)
}

// homeOrAbove reports whether p names the home folder or a folder above
// it (/, /home, /root): a recursive search there reads credentials.
func (j pathJudge) homeOrAbove(p string) bool {
	if strings.HasPrefix(p, "~") {
		if e, ok := j.expandTilde(p); ok {
			p = e
		} else {
			return true
		}
	}
	if !filepath.IsAbs(p) || j.home == "" {
		return false
	}
	p = filepath.Clean(p)
	rel, err := filepath.Rel(p, j.home)
	return err == nil && (rel == "." || filepath.IsLocal(rel)) || p == "/home"
}

func inGitDir(rel string) bool {
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part == ".git" {
			return true
		}
	}
	return false
}

// resolve returns the absolute path p with every symbolic link that exists
// resolved, processing ".." after each link the way the kernel does. Missing
// components are joined as they are.
func resolve(p string, depth int) (string, bool) {
	if depth > maxSymlinks {
		return "", false
	}
	parts := strings.Split(filepath.ToSlash(p), "/")
	cur := string(filepath.Separator)
	if v := filepath.VolumeName(p); v != "" {
		cur = v + string(filepath.Separator)
		parts = strings.Split(filepath.ToSlash(p[len(v):]), "/")
	}
	for i, part := range parts {
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			// The rest does not exist: a write there creates it (or fails).
			rest := filepath.Join(append([]string{next}, parts[i+1:]...)...)
			return filepath.Clean(rest), true
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		real, ok := resolve(target, depth+1)
		if !ok {
			return "", false
		}
		cur = real
	}
	return cur, true
}

// sensitive matches paths that hold credentials. Reading them is asked for
// even by read-only commands: their content would go to the LLM.
var sensitive = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[/=])(\.ssh|\.gnupg|\.aws|\.azure|\.kube|\.password-store|\.docker/config\.json|\.config/gcloud|\.git-credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc|id_(rsa|dsa|ecdsa|ed25519)[^/]*)(/|$)|/etc/(shadow|gshadow|sudoers)|/proc/[^/]+/(environ|mem)$`)
})

// sensitiveFiles are concrete credential paths that glob patterns are
// matched against ("~" is the home directory).
var sensitiveFiles = []string{"~/.ssh/id_rsa", "~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.aws/credentials",
	"~/.netrc", "~/.git-credentials", "~/.pgpass", "~/.npmrc", "~/.pypirc", "~/.docker/config.json",
	"~/.kube/config", "~/.gnupg/private-keys-v1.d", "/etc/shadow", "/etc/gshadow", "/etc/sudoers",
	"/proc/self/environ"}

// sensitiveRead reports whether reading p may expose credentials. A glob
// pattern counts when it can match a credential file or one of its parent
// directories (~/.s*/id_* or ~/.s* for grep -r). It is a best effort
// against leaking secrets to the LLM, not a boundary: reads are allowed.
func (j pathJudge) sensitiveRead(p string) bool {
	if strings.HasPrefix(p, "~") {
		if e, ok := j.expandTilde(p); ok {
			p = e
		}
	}
	if sensitive().MatchString(filepath.ToSlash(filepath.Clean(p))) {
		return true
	}
	if !strings.ContainsAny(p, "*?[") || !filepath.IsAbs(p) {
		return false
	}
	for _, f := range sensitiveFiles {
		if strings.HasPrefix(f, "~") {
			if j.home == "" {
				continue
			}
			f = filepath.Join(j.home, f[1:])
		}
		for d := f; d != "/" && d != "."; d = filepath.Dir(d) {
			if ok, _ := filepath.Match(p, d); ok {
				return true
			}
		}
	}
	return false
}

// inside reports whether a path (relative to the workspace, or absolute)
// is inside the workspace once its links are resolved.
func (j pathJudge) inside(p string) bool {
	if !filepath.IsAbs(p) {
		if j.ws == "" {
			return filepath.IsLocal(p)
		}
		p = filepath.Join(j.ws, p)
	}
	real, ok := resolve(p, 0)
	if !ok || j.wsReal == "" {
		return false
	}
	rel, err := filepath.Rel(j.wsReal, real)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// isDir reports whether a path (relative to the workspace, or absolute)
// is an existing folder.
func (j pathJudge) isDir(p string) bool {
	if !filepath.IsAbs(p) && j.ws != "" {
		p = filepath.Join(j.ws, p)
	}
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
