package shell

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/lcptools/lcp/sandbox"
	"mvdan.cc/sh/v3/syntax"
)

// A checker judges the arguments of one allowed command and calls c.ask
// for anything that needs approval.
type checker func(c *classifier, n syntax.Node, name string, args []*syntax.Word)

// allowList is the documented read-only allow-list: commands that safe mode
// runs without asking, each with the checks its options need. Built at the
// first judgement (allowed), not at init: most lcp commands never judge a
// shell command, and wrappers refer back to it.
var (
	allowList     map[string]checker
	allowListOnce sync.Once
)

// allowed returns the checker of an allow-listed command.
func allowed(name string) (checker, bool) {
	allowListOnce.Do(buildAllowList)
	c, ok := allowList[name]
	return c, ok
}

func plain(*classifier, syntax.Node, string, []*syntax.Word) {}

func buildAllowList() {
	allowList = map[string]checker{
		// Shell builtins that only read state or steer control flow.
		":": plain, "true": plain, "false": plain, "echo": plain, "pwd": plain,
		"cd": plain, "pushd": plain, "popd": plain, // relative writes are judged as unknown after them
		"exit": plain, "return": plain, "break": plain, "continue": plain, "shift": plain,
		"jobs": plain, "type": plain, "which": plain,
		"printf": checkPrintf, "read": checkRead, "test": checkTest, "[": checkTest, "set": checkSet, "wait": checkWait,
		// Reading and listing files.
		"ls": plain, "dir": plain, "vdir": plain, "cat": plain, "tac": plain, "head": plain, "tail": plain,
		"wc": plain, "nl": plain, "grep": checkGrep, "egrep": checkGrep, "fgrep": checkGrep,
		"zcat": plain, "bzcat": plain, "xzcat": plain, "zgrep": checkGrep,
		"stat": plain, "du": plain, "df": plain, "basename": plain, "dirname": plain,
		"realpath": plain, "readlink": plain, "diff": plain, "cmp": plain, "comm": plain,
		"od": plain, "hexdump": plain, "strings": plain, "jq": plain,
		"md5sum": plain, "sha1sum": plain, "sha224sum": plain, "sha256sum": plain,
		"sha384sum": plain, "sha512sum": plain, "b2sum": plain, "cksum": plain, "sum": plain,
		"base64": plain, "base32": plain, "basenc": plain,
		"find": checkFind, "tree": checkTree, "file": checkFile, "rg": checkRg, "fd": checkFd, "fdfind": checkFd,
		// Text filters.
		"cut": plain, "tr": plain, "rev": plain, "fold": plain, "fmt": plain, "column": plain,
		"paste": plain, "join": plain, "expand": plain, "unexpand": plain, "numfmt": plain,
		"expr": plain, "tsort": plain, "seq": plain, "yes": plain, "sleep": plain,
		"sort": checkSort, "uniq": checkUniq, "shuf": checkShuf, "xxd": checkXxd,
		"sed": checkSed, "awk": checkAwk, "gawk": checkAwk, "mawk": checkAwk, "nawk": checkAwk,
		// System information.
		"uname": plain, "whoami": plain, "id": plain, "groups": plain, "arch": plain,
		"nproc": plain, "uptime": plain, "free": plain, "ps": plain, "locale": plain,
		"getconf": plain, "printenv": plain, "cal": plain, "lsb_release": plain,
		"date": checkDate, "hostname": checkHostname,
		// Writes that stay inside the workspace.
		"tee": checkTee, "mkdir": checkMkdir, "touch": checkTouch, "cp": checkCp, "mv": checkMv,
		// Version control, read-only subcommands.
		"git": checkGit,
		// Wrappers: judged by the command they run.
		"env": checkEnv, "xargs": checkXargs, "timeout": checkTimeout, "nice": checkNice, "command": checkCommand,
		"time": checkTime, "stdbuf": checkStdbuf, "nohup": checkNohup,
	}
}

// systemDirs are the directories from which a program named by path is
// judged like its bare name.
var systemDirs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"/bin": true, "/usr/bin": true, "/usr/local/bin": true,
		"/sbin": true, "/usr/sbin": true, "/usr/local/sbin": true,
	}
})

func systemProgram(p string) (string, bool) {
	p = filepath.Clean(p)
	if systemDirs()[filepath.Dir(p)] {
		return filepath.Base(p), true
	}
	return "", false
}

// categories explain, for the operator, why a command off the allow-list
// is asked for. Commands in none of them get the generic reason.
var categories = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"escalates privileges": {"sudo", "su", "doas", "pkexec", "runuser", "setpriv", "chroot", "unshare", "nsenter", "capsh"},
		"uses the network": {"curl", "wget", "nc", "ncat", "netcat", "ssh", "scp", "sftp", "rsync", "ftp", "telnet",
			"socat", "nmap", "ping", "ping6", "dig", "nslookup", "host", "whois", "traceroute", "tftp", "lftp",
			"aria2c", "http", "https", "axel", "lynx", "w3m", "links", "mosh"},
		"starts a nested shell": {"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "busybox"},
		"runs an interpreter on code that is not judged": {"node", "nodejs", "deno", "bun", "perl", "ruby", "php",
			"lua", "luajit", "Rscript", "R", "julia", "tclsh", "wish", "osascript", "pwsh", "powershell", "java",
			"jshell", "groovy", "scala", "swift", "irb", "ipython", "jupyter"},
		"runs build or package scripts": {"npm", "npx", "pnpm", "yarn", "pipx", "uv", "uvx", "poetry", "cargo",
			"go", "make", "cmake", "ninja", "gradle", "mvn", "gcc", "g++", "cc", "clang", "rustc", "javac",
			"dotnet", "bundle", "gem", "composer"},
		"runs commands that are not judged": {"eval", "exec", "source", ".", "parallel", "watch",
			"setsid", "script", "expect", "trap", "alias", "builtin", "enable", "coproc", "fc", "bind"},
		"deletes files": {"rm", "rmdir", "shred", "unlink", "truncate", "srm", "wipe"},
		"changes files or other processes": {"chmod", "chown", "chgrp", "chattr", "kill", "pkill", "killall",
			"ln", "dd", "install", "patch", "tar", "unzip", "gzip", "gunzip", "bzip2", "xz", "zip", "split", "csplit"},
		"changes the system": {"mount", "umount", "shutdown", "reboot", "halt", "poweroff", "systemctl", "service",
			"crontab", "at", "batch", "useradd", "userdel", "usermod", "groupadd", "passwd", "apt", "apt-get", "dpkg",
			"yum", "dnf", "pacman", "apk", "brew", "snap", "flatpak", "docker", "podman", "kubectl", "iptables", "ufw",
			"sysctl", "mkfs", "fdisk", "modprobe", "insmod", "rmmod", "losetup", "swapon", "swapoff", "update-alternatives"},
		"changes shell state in ways that are not judged": {"ulimit", "umask", "shopt", "unset", "mapfile",
			"readarray", "hash", "declare", "local", "export", "let", "typeset", "readonly", "getopts", "disown"},
	}
})

var versionFlags = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"--version": true, "-V": true, "-version": true}
})

// categoryOf maps a command to its category, made at its first use.
var categoryOf = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for why, names := range categories() {
		for _, n := range names {
			m[n] = why
		}
	}
	return m
})

// isPythonName reports whether a command is a Python interpreter or pip:
// `^(python|pip|pypy)[0-9.]*$`.
func isPythonName(name string) bool {
	rest, ok := strings.CutPrefix(name, "python")
	if !ok {
		if rest, ok = strings.CutPrefix(name, "pypy"); !ok {
			if rest, ok = strings.CutPrefix(name, "pip"); !ok {
				return false
			}
		}
	}
	return strings.Trim(rest, "0123456789.") == ""
}

// hostCategories are the categories of commands that need the host
// itself: a sandbox (no privileges, no devices, no services) cannot give
// them what they want.
var hostCategories = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"escalates privileges": true, "changes the system": true}
})

// unknownReason says why a command off the allow-list asks, and which
// permission beyond a sandbox it needs, if any.
func unknownReason(name string, args []*syntax.Word) judgement {
	why, ok := categoryOf()[name]
	switch {
	case ok && why == "uses the network":
		return judgement{why: name + " " + why, perm: sandbox.Network}
	case ok && hostCategories()[why]:
		return judgement{why: name + " " + why, perm: sandbox.Unsandboxed}
	case ok:
		if fetches(name, args) {
			return judgement{why: name + " " + why + " and downloads packages", perm: sandbox.Network}
		}
		return judgement{why: name + " " + why}
	case isPythonName(name):
		if fetches(name, args) {
			return judgement{why: name + " installs packages from the network", perm: sandbox.Network}
		}
		return judgement{why: name + " runs an interpreter on code that is not judged"}
	}
	return judgement{why: name + " is not on the read-only allow-list"}
}

// installers are the subcommands of package managers that download.
var installers = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"npm": {"install", "i", "ci", "add", "update", "upgrade", "exec", "x", "init", "create", "publish", "audit", "outdated", "view", "info"},
		"npx": nil, "pnpm": {"install", "i", "add", "update", "up", "dlx", "create"}, "yarn": {"install", "add", "upgrade", "dlx", "create"},
		"go": {"get", "install", "download"}, "cargo": {"install", "fetch", "update", "search", "publish"},
		"gem": {"install", "update", "fetch"}, "bundle": {"install", "update"}, "composer": {"install", "update", "require"},
		"pipx": {"install", "run", "upgrade"}, "uvx": nil, "uv": {"pip", "add", "sync", "tool", "run"},
		"poetry": {"install", "add", "update", "lock"}, "mvn": nil, "gradle": nil,
	}
})

// fetches reports whether a package manager's command line downloads
// (npm install, pip install, go get, go mod download...).
func fetches(name string, args []*syntax.Word) bool {
	subs, ok := installers()[name]
	if isPythonName(name) && strings.HasPrefix(name, "pip") {
		subs, ok = []string{"install", "download", "wheel", "search", "index"}, true
	}
	if !ok {
		return false
	}
	if subs == nil {
		return true
	}
	for _, w := range args {
		a := analyze(w)
		if !a.static {
			continue
		}
		if name == "go" && a.text == "mod" {
			continue
		}
		if strings.HasPrefix(a.text, "-") {
			if isPythonName(name) && a.text == "-m" {
				continue
			}
			continue
		}
		return slices.Contains(subs, a.text)
	}
	return false
}

// versionProbe accepts "<toolchain> --version" (and "go version"): asking
// which interpreter is installed runs no user code.
func versionProbe(name string, args []*syntax.Word) bool {
	why := categoryOf()[name]
	tool := isPythonName(name) || why == "runs an interpreter on code that is not judged" ||
		why == "runs build or package scripts" || why == "starts a nested shell"
	if !tool || len(args) != 1 {
		return false
	}
	a := analyze(args[0])
	if !a.static {
		return false
	}
	return versionFlags()[a.text] || (name == "go" && a.text == "version") || (name == "node" && a.text == "-v")
}

// riskyVariable says why assigning name changes how later commands run, or
// "" when it does not.
func riskyVariable(name string) string {
	switch name {
	case "PATH", "EXECIGNORE":
		return "which changes the programs later commands run"
	case "IFS":
		return "which changes how later words are split"
	case "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND":
		return "which the shell expands and runs"
	case "HOME", "CDPATH":
		return "which changes where later paths point"
	case "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "BASH_LOADABLES_PATH":
		return "which changes how shells start"
	case "PAGER", "MANPAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "RIPGREP_CONFIG_PATH",
		"GCONV_PATH", "LOCPATH", "NLSPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "BROWSER", "SHELL",
		"SSH_ASKPASS", "SUDO_ASKPASS", "CURL_HOME", "WGETRC", "AWKPATH", "AWKLIBPATH", "TAR_OPTIONS",
		"GOFLAGS", "ZDOTDIR", "INPUTRC", "GNUPGHOME", "TERMINFO":
		return "which makes programs run or load other code"
	}
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "PYTHON", "NODE_", "PERL", "RUBY", "BASH_FUNC_", "XDG_"} {
		if strings.HasPrefix(name, p) {
			return "which makes programs run or load other code"
		}
	}
	if !validName().MatchString(name) {
		return "which is not a plain variable name"
	}
	return ""
}

var validName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
})

// writeArg judges an option value or operand that names a file written
// from its start (an existing one loses its content).
func (c *classifier) writeArg(n syntax.Node, a arg) { c.writeArgAs(n, a, true) }

// createArg judges an operand that names a file or folder created, or
// touched (mkdir, touch): an existing one loses nothing.
func (c *classifier) createArg(n syntax.Node, a arg) { c.writeArgAs(n, a, false) }

func (c *classifier) writeArgAs(n syntax.Node, a arg, replace bool) {
	if a.word != nil {
		c.writeTarget(n, a.word, replace)
		return
	}
	if procPath(a.value) {
		c.ask(n, "writes through /proc into another process's files")
		return
	}
	p := a.value
	if strings.HasPrefix(p, "~") {
		e, ok := c.paths.expandTilde(p)
		if !ok {
			c.need(n, sandbox.Unsandboxed, "", "writes to a path under another user's home")
			return
		}
		p = e
	}
	c.judged(n, c.paths.writeVerdict(p, c.cwdMoved, replace))
}

func checkPrintf(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	if len(args) == 0 {
		return
	}
	a := analyze(args[0])
	if !a.optionSafe() {
		c.ask(n, "the first argument of printf is expanded at run time and could be -v")
		return
	}
	if a.static && strings.HasPrefix(a.text, "-v") {
		c.ask(n, "printf -v assigns to a variable, which can evaluate subscripts")
	}
}

// checkRead accepts read into plain variable names: a name with a
// subscript would be evaluated.
func checkRead(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "adinNptu"})
	if !ok {
		return
	}
	for _, a := range scanned {
		if a.opt != "" && !a.isOpt("-a") {
			continue
		}
		if !a.static || !validName().MatchString(a.value) {
			c.ask(n, "read into `%s`, which is not a plain variable name", a.value)
			return
		}
		c.assign(n, a.value) // read PS4, read PATH: assignments
	}
}

// testBinary are the binary operators of test; their operands are strings
// or numbers that test does not evaluate.
var testBinary = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"=": true, "==": true, "!=": true, "<": true, ">": true, "-eq": true,
		"-ne": true, "-lt": true, "-le": true, "-gt": true, "-ge": true, "-nt": true, "-ot": true, "-ef": true}
})

// checkTest judges test and [. Their -v and -R look a variable up, and a
// subscript in its name runs command substitutions; an operand that
// expands at run time could be such an operator unless the grammar fixes
// its role (after a unary operator, around a binary one).
func checkTest(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	if name == "[" && len(args) > 0 {
		if a := analyze(args[len(args)-1]); a.static && a.text == "]" {
			args = args[:len(args)-1]
		}
	}
	ws := make([]word, len(args))
	for i, w := range args {
		ws[i] = analyze(w)
		if ws[i].splits {
			c.ask(n, "unquoted expansion `%s` in %s could become -v, which evaluates subscripts", c.snippet(w), name)
			return
		}
		if ws[i].static && (ws[i].text == "-v" || ws[i].text == "-R") {
			c.ask(n, "%s %s evaluates subscripts, which can run code", name, ws[i].text)
			return
		}
	}
	isOp := func(i int) bool { return ws[i].static && strings.HasPrefix(ws[i].text, "-") && len(ws[i].text) == 2 }
	for len(ws) > 0 && ws[0].static && ws[0].text == "!" {
		ws = ws[1:]
	}
	switch {
	case len(ws) <= 1:
		return
	case len(ws) == 3 && ws[1].static && testBinary()[ws[1].text]:
		return
	}
	for i, w := range ws {
		if w.optionSafe() {
			continue
		}
		afterOp := i > 0 && (isOp(i-1) || ws[i-1].static && testBinary()[ws[i-1].text]) &&
			ws[i-1].text != "-a" && ws[i-1].text != "-o"
		if !afterOp {
			c.ask(n, "operand `%s` of %s is expanded at run time and could become -v, which evaluates subscripts", c.snippet(w.node), name)
			return
		}
	}
}

// setOptions are the `set -o` names and letters that do not change what
// later commands run.
var setOptions = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"errexit": true, "nounset": true, "xtrace": true, "pipefail": true,
		"verbose": true, "noglob": true, "noclobber": true}
})

func checkSet(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	for i := 0; i < len(args); i++ {
		a := analyze(args[i])
		if !a.static || len(a.text) < 2 || (a.text[0] != '-' && a.text[0] != '+') {
			c.ask(n, "set with operands changes the positional parameters")
			return
		}
		for _, l := range a.text[1:] {
			switch l {
			case 'e', 'u', 'x', 'v', 'f', 'C':
			case 'o':
				if i+1 >= len(args) {
					return // prints the options
				}
				i++
				o := analyze(args[i])
				if !o.static || !setOptions()[o.text] {
					c.ask(n, "set -o %s is not judged", o.text)
					return
				}
			default:
				c.ask(n, "set %s is not judged", a.text)
				return
			}
		}
	}
}

func checkWait(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	for _, w := range args {
		a := analyze(w)
		if !a.static || !(isDigits(a.text) || strings.HasPrefix(a.text, "%") || a.text == "-n" || a.text == "-f") {
			c.ask(n, "wait %s is not judged", c.snippet(w))
			return
		}
	}
}

// findActions run commands, delete or write files.
var findActions = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"-exec": true, "-execdir": true, "-ok": true, "-okdir": true,
		"-delete": true, "-fprint": true, "-fprint0": true, "-fprintf": true, "-fls": true}
})

func checkFind(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	for _, w := range args {
		a := analyze(w)
		if !a.optionSafe() {
			c.ask(n, "argument `%s` of find is expanded at run time and could become an action", c.snippet(w))
			return
		}
		if a.static && findActions()[a.text] {
			c.ask(n, "find %s runs commands, deletes or writes files", a.text)
		}
	}
}

func checkTree(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "LPIoHT", long: []string{"output", "charset", "filelimit", "timefmt", "sort", "fromfile"}})
	if !ok {
		return
	}
	for _, a := range scanned {
		switch {
		case a.isOpt("-o"):
			c.writeArg(n, a)
		case a.isOpt("-R"):
			c.ask(n, "tree -R writes HTML files into every directory")
		}
	}
}

func checkFile(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "mfeFP", long: []string{"magic-file", "files-from", "exclude", "separator", "parameter"}})
	if !ok {
		return
	}
	for _, a := range scanned {
		if a.isOpt("-C") || a.long("compile") {
			c.ask(n, "file -C writes a compiled magic file")
		}
	}
}

// checkGrep asks when grep searches the home folder (or a folder above
// it) recursively: the lines it prints would carry credentials to the
// LLM.
func checkGrep(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "efmABCdD", long: []string{"regexp", "file", "max-count",
		"after-context", "before-context", "context", "directories", "devices", "include", "exclude", "exclude-dir",
		"exclude-from", "label", "color", "colour", "binary-files"}})
	if !ok {
		return
	}
	recursive, pattern := false, false
	for _, a := range scanned {
		switch {
		case a.isOpt("-r", "-R") || a.long("recursive", "dereference-recursive") || (a.isOpt("-d") || a.long("directories")) && a.value == "recurse":
			recursive = true
		case a.isOpt("-e", "-f") || a.long("regexp", "file"):
			pattern = true
		}
	}
	ops := operands(scanned)
	if !pattern && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, f := range ops {
		if recursive && c.paths.homeOrAbove(f.value) {
			c.ask(n, "%s searches the home folder recursively, where credentials live (%s)", name, f.value)
			return
		}
	}
}

func checkRg(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "efgtTmABCEjMrd", long: []string{"regexp", "file", "glob", "iglob",
		"type", "type-not", "max-count", "after-context", "before-context", "context", "encoding", "threads",
		"max-columns", "replace", "max-depth", "pre", "pre-glob", "hostname-bin", "type-add", "sort", "sortr"}})
	if !ok {
		return
	}
	pattern := false
	for _, a := range scanned {
		if a.long("pre", "pre-glob", "hostname-bin") {
			c.ask(n, "rg %s runs another program", a.opt)
		}
		pattern = pattern || a.isOpt("-e", "-f") || a.long("regexp", "file")
	}
	ops := operands(scanned)
	if !pattern && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, f := range ops {
		if c.paths.homeOrAbove(f.value) {
			c.ask(n, "rg searches the home folder, where credentials live (%s)", f.value)
			return
		}
	}
}

func checkFd(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "dEetSoxXcj", long: []string{"max-depth", "exclude", "extension",
		"type", "size", "owner", "exec", "exec-batch", "color", "threads", "changed-within", "changed-before", "base-directory", "search-path"}})
	if !ok {
		return
	}
	for _, a := range scanned {
		if a.isOpt("-x", "-X") || a.long("exec", "exec-batch") {
			c.ask(n, "%s %s runs a command for each match", name, a.opt)
		}
	}
}

func checkSort(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "kotTS", long: []string{"key", "output", "field-separator",
		"buffer-size", "temporary-directory", "parallel", "files0-from", "random-source", "compress-program", "sort", "batch-size"}})
	if !ok {
		return
	}
	for _, a := range scanned {
		switch {
		case a.long("compress-program"):
			c.ask(n, "sort --compress-program runs another program")
		case a.isOpt("-o") || a.long("output"):
			c.writeArg(n, a)
		}
	}
}

func checkUniq(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	// --group and --all-repeated take their method only after '=':
	// "uniq --group IN OUT" still writes OUT.
	scanned, ok := c.scan(n, name, args, optSpec{short: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars"}})
	if !ok {
		return
	}
	if ops := operands(scanned); len(ops) >= 2 {
		c.writeArg(n, ops[1]) // uniq IN OUT writes OUT
	}
}

func checkShuf(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "nio", long: []string{"head-count", "input-range", "output", "random-source"}})
	if !ok {
		return
	}
	for _, a := range scanned {
		if a.isOpt("-o") || a.long("output") {
			c.writeArg(n, a)
		}
	}
}

// xxdValued are xxd's options that take a value: attached (-c8) or the
// next word, whatever it looks like (xxd reads it as a number anyway).
var xxdValued = []string{"-c", "-cols", "-g", "-groupsize", "-l", "-len", "-n", "-name", "-o", "-offset", "-s", "-seek", "-R"}

// checkXxd judges xxd as xxd parses its arguments: options are matched by
// prefix, a valued option takes the next word unless its value is
// attached, and a second operand is an output file.
func checkXxd(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	var ops []*syntax.Word
	for i := 0; i < len(args); i++ {
		a := analyze(args[i])
		if !a.optionSafe() {
			c.ask(n, "argument `%s` of xxd is expanded at run time", c.snippet(args[i]))
			return
		}
		t := a.text
		switch {
		case !a.static || t == "-" || !strings.HasPrefix(t, "-"):
			ops = append(ops, args[i])
		case t == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		default:
			for _, v := range xxdValued {
				if t == v {
					i++ // the value is the next word
					break
				}
			}
		}
	}
	if len(ops) >= 2 {
		c.writeTarget(n, ops[1], true)
	}
}

func checkDate(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "dfrs", long: []string{"date", "file", "reference", "set", "resolution"}})
	if !ok {
		return
	}
	for _, a := range scanned {
		switch {
		case a.isOpt("-s") || a.long("set"):
			c.ask(n, "date --set changes the system clock")
		case a.opt == "" && !strings.HasPrefix(a.value, "+"):
			c.ask(n, "date with an operand that is not a +FORMAT sets the system clock")
		}
	}
}

func checkHostname(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "F", long: []string{"file"}})
	if !ok {
		return
	}
	for _, a := range scanned {
		if a.opt == "" || a.isOpt("-F", "-b") || a.long("file", "boot") {
			c.ask(n, "hostname with an operand or a file sets the host name")
			return
		}
	}
}

func checkTee(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{})
	if !ok {
		return
	}
	appending := slices.ContainsFunc(scanned, func(a arg) bool { return a.isOpt("-a") || a.long("append") })
	for _, a := range operands(scanned) {
		c.writeArgAs(n, a, !appending)
	}
}

func checkMkdir(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "m", long: []string{"mode"}})
	if !ok {
		return
	}
	for _, a := range operands(scanned) {
		c.createArg(n, a)
		c.checkTouchTimes(n, a)
	}
}

func checkTouch(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "drt", long: []string{"date", "reference", "time"}})
	if !ok {
		return
	}
	for _, a := range operands(scanned) {
		c.createArg(n, a)
		c.checkTouchTimes(n, a)
	}
}

func checkCp(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "tS", long: []string{"target-directory", "suffix"}})
	if !ok {
		return
	}
	var target *arg
	links := false // copies links as links (-P, -d, -a, -R without -L)
	for i, a := range scanned {
		switch {
		case a.isOpt("-s", "-l") || a.long("symbolic-link", "link"):
			c.ask(n, "cp %s creates links that can point outside the workspace", a.opt)
		case a.isOpt("-t") || a.long("target-directory"):
			target = &scanned[i]
		case a.isOpt("-P", "-d", "-a", "-R", "-r") || a.long("no-dereference", "archive", "recursive"):
			links = true
		}
	}
	c.backupSuffix(n, scanned)
	ops := operands(scanned)
	if target == nil && len(ops) > 0 {
		target, ops = &ops[len(ops)-1], ops[:len(ops)-1]
	}
	for _, src := range ops {
		if links && src.static && !c.paths.inside(src.value) {
			c.ask(n, "cp copies links from outside the workspace (%s), which may point anywhere", src.value)
		}
	}
	if target != nil {
		c.copyTarget(n, *target, ops)
	}
}

// copyTarget judges the target of cp or mv: a folder receives each
// source by its name, and each of those names is judged as a write.
func (c *classifier) copyTarget(n syntax.Node, target arg, sources []arg) {
	c.writeArg(n, target)
	if !target.static || !c.paths.isDir(target.value) {
		return
	}
	for _, s := range sources {
		if s.static {
			c.writeArg(n, arg{value: filepath.Join(target.value, filepath.Base(s.value)), static: true})
		}
	}
}

// backupSuffix asks when a backup suffix (-S, --suffix) names a path:
// the backups would land in another folder.
func (c *classifier) backupSuffix(n syntax.Node, scanned []arg) {
	for _, a := range scanned {
		if (a.isOpt("-S") || a.long("suffix")) && (!a.static || strings.Contains(a.value, "/")) {
			c.ask(n, "the backup suffix %q puts backups in another folder", a.value)
		}
	}
}

func checkMv(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "tS", long: []string{"target-directory", "suffix"}})
	if !ok {
		return
	}
	c.ask(n, "mv moves files away from where they are")
	c.backupSuffix(n, scanned)
	var target *arg
	for i, a := range scanned {
		if a.isOpt("-t") || a.long("target-directory") {
			target = &scanned[i]
		}
	}
	ops := operands(scanned)
	if target == nil && len(ops) > 0 {
		target, ops = &ops[len(ops)-1], ops[:len(ops)-1]
	}
	// mv removes its sources: they must be inside the workspace too.
	for _, a := range ops {
		c.writeArg(n, a)
	}
	if target != nil {
		c.copyTarget(n, *target, ops)
	}
}

// Wrappers.

func checkEnv(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	i := 0
	for ; i < len(args); i++ {
		a := analyze(args[i])
		if !a.optionSafe() {
			c.ask(n, "argument `%s` of env is expanded at run time", c.snippet(args[i]))
			return
		}
		t := a.text
		switch {
		case a.static && t == "--":
			i++
			goto assignments
		case a.static && (t == "-i" || t == "-0" || t == "-" || t == "--ignore-environment" || t == "--null" || t == "-v" || t == "--debug"):
		case a.static && (t == "-u" || t == "--unset"):
			i++
		case a.static && (strings.HasPrefix(t, "-u") || strings.HasPrefix(t, "--unset=")):
		case a.static && strings.HasPrefix(t, "-"):
			c.ask(n, "env %s is not judged", t)
			return
		default:
			goto assignments
		}
	}
assignments:
	for ; i < len(args); i++ {
		a := analyze(args[i])
		name, _, isAssign := strings.Cut(a.lead, "=")
		if !isAssign {
			break
		}
		c.assign(n, name)
	}
	c.argv(n, args[i:])
}

func checkTimeout(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	i := 0
	for ; i < len(args); i++ {
		a := analyze(args[i])
		if !a.static {
			c.ask(n, "argument `%s` of timeout is expanded at run time", c.snippet(args[i]))
			return
		}
		switch t := a.text; {
		case t == "-s" || t == "-k" || t == "--signal" || t == "--kill-after":
			i++
		case strings.HasPrefix(t, "-"):
		default:
			c.argv(n, args[i+1:]) // after the duration
			return
		}
	}
}

func checkNice(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	i := 0
	for ; i < len(args); i++ {
		a := analyze(args[i])
		if !a.static {
			c.ask(n, "argument `%s` of nice is expanded at run time", c.snippet(args[i]))
			return
		}
		if a.text == "-n" || a.text == "--adjustment" {
			i++
			continue
		}
		if !strings.HasPrefix(a.text, "-") {
			break
		}
	}
	c.argv(n, args[i:])
}

func checkCommand(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	i := 0
options:
	for ; i < len(args); i++ {
		a := analyze(args[i])
		if !a.static {
			break
		}
		switch a.text {
		case "-v", "-V":
			return // only looks the name up
		case "-p":
			continue
		}
		break options
	}
	c.argv(n, args[i:])
}

func checkTime(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	// time's options end at the first operand (the command it runs); -o
	// and -f take a value, attached (-ofile, -ao file) or the next word.
	end := 0
	for end < len(args) {
		a := analyze(args[end])
		if !a.static || !strings.HasPrefix(a.text, "-") || a.text == "-" {
			break
		}
		end++
		switch t := a.text; {
		case t == "--":
		case strings.HasPrefix(t, "--"):
			if (t == "--output" || t == "--format") && end < len(args) {
				end++
			}
			continue
		default:
			if i := strings.IndexAny(t, "of"); i == len(t)-1 && end < len(args) {
				end++
			}
			continue
		}
		break
	}
	scanned, ok := c.scan(n, name, args[:end], optSpec{short: "fo", long: []string{"format", "output"}})
	if !ok {
		return
	}
	appending := slices.ContainsFunc(scanned, func(b arg) bool { return b.isOpt("-a") || b.long("append") })
	for _, a := range scanned {
		if a.isOpt("-o") || a.long("output") {
			c.writeArgAs(n, a, !appending)
		}
	}
	c.argv(n, args[end:])
}

func checkStdbuf(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	i := 0
	for ; i < len(args); i++ {
		a := analyze(args[i])
		if !a.static || !strings.HasPrefix(a.text, "-") {
			break
		}
		if len(a.text) == 2 && strings.ContainsRune("ioe", rune(a.text[1])) {
			i++
		}
	}
	c.argv(n, args[i:])
}

// xargsInner are the commands xargs may run without asking: extra
// arguments read from input cannot make them write or run anything.
//
// Commands that print what the files hold (cat, grep, head...) are not
// among them: fed from find ~, they would print credentials.
var xargsInner = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"echo": true, "ls": true, "wc": true, "stat": true, "du": true, "file": true,
		"basename": true, "dirname": true, "realpath": true, "md5sum": true, "sha1sum": true,
		"sha256sum": true, "sha512sum": true}
})

// checkXargs judges xargs by the command it runs, which must be one of
// xargsInner: the arguments it appends come from input and are not seen.
func checkXargs(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	i := 0
	for ; i < len(args); i++ {
		a := analyze(args[i])
		if !a.optionSafe() {
			c.ask(n, "argument `%s` of xargs is expanded at run time", c.snippet(args[i]))
			return
		}
		t := a.text
		if !a.static || !strings.HasPrefix(t, "-") {
			break
		}
		if t == "--" {
			i++
			break
		}
		// Options that take a separate value.
		if len(t) == 2 && strings.ContainsRune("aEdILnPs", rune(t[1])) {
			i++
		}
	}
	if i >= len(args) {
		return // xargs runs echo
	}
	inner := analyze(args[i])
	if !inner.static || !xargsInner()[inner.text] {
		c.ask(n, "xargs runs %s with arguments read from its input", c.snippet(args[i]))
		return
	}
	c.argv(n, args[i:])
}

func checkNohup(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	c.argv(n, args)
}
