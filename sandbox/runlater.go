package sandbox

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// runLaterRule is a kind of file that a common tool runs or loads later,
// outside the sandbox: a new or changed file matching it is never applied
// without the operator's approval.
type runLaterRule struct {
	// Pattern is matched against the end of a workspace path, one path.Match
	// pattern per segment ("name", "dir/name", "*.ext"); "dir/**" matches
	// anything below a folder named dir, at any depth.
	Pattern string
	// Why is the reason shown in the confirmation.
	Why string
}

// runLaterRules is the one list of files that run later. Version control
// folders (VCSDirs) and what git's configuration names (gitPaths) are
// protected on their own; a module named like the standard library's is
// judged by stdlibShadow.
var runLaterRules = []runLaterRule{
	{".envrc", "direnv runs it when a shell enters the folder"},
	{"sitecustomize.py", "Python imports it at every start when its folder is on sys.path"},
	{"usercustomize.py", "Python imports it at every start when its folder is on sys.path"},
	{"*.pth", "Python runs its import lines at every start when its folder is a site folder"},
	{"conftest.py", "pytest imports it on every run"},
	{"setup.py", "pip and setuptools run it to build or install the project"},
	{"pyproject.toml", "pip runs the build backend it names to install the project"},
	{"noxfile.py", "nox runs it"},
	{".pdbrc", "pdb runs its commands when it starts in the folder"},
	{".pre-commit-config.yaml", "pre-commit runs the hooks it names at every git commit"},
	{".gitattributes", "it selects the filters and diff drivers git runs"},
	{".gitmodules", "git fetches and checks out what it names"},
	{"package.json", "npm runs its install scripts (and npm run its scripts)"},
	{".npmrc", "npm runs the shell and node options it names"},
	{".yarnrc", "yarn runs the programs it names"},
	{".yarnrc.yml", "yarn runs the program its yarnPath names"},
	{"bunfig.toml", "bun preloads the scripts it names"},
	{".cargo/config.toml", "cargo runs the runners and linkers it names"},
	{".cargo/config", "cargo runs the runners and linkers it names"},
	{"build.rs", "cargo runs it at every build"},
	{"Makefile", "make runs its recipes"},
	{"makefile", "make runs its recipes"},
	{"GNUmakefile", "make runs its recipes"},
	{".mise.toml", "mise runs the hooks and tasks it names when a shell enters the folder"},
	{"mise.toml", "mise runs the hooks and tasks it names when a shell enters the folder"},
	{".vscode/tasks.json", "VS Code runs its tasks (some when the folder opens)"},
	{".vscode/launch.json", "VS Code runs the programs it names"},
	{".vscode/settings.json", "VS Code runs the interpreters and tools it names"},
	{"*.code-workspace", "VS Code runs the tasks and tools it names"},
	{".idea/**", "JetBrains IDEs run the run configurations and tools it holds"},
	{".gdbinit", "gdb runs it when it starts in the folder"},
	{".exrc", "vim and neovim run it with the exrc option"},
	{".nvimrc", "neovim runs it with the exrc option"},
	{".nvim.lua", "neovim runs it with the exrc option"},
	{".bashrc", "bash runs it when this folder is a home folder"},
	{".bash_profile", "bash runs it when this folder is a home folder"},
	{".profile", "login shells run it when this folder is a home folder"},
	{".zshrc", "zsh runs it when this folder is a home folder"},
	{".zshenv", "zsh runs it when this folder is a home folder"},
}

// runsLater returns why a file at the workspace path p (forward slashes)
// runs later, or "".
func runsLater(p string) string {
	segs := strings.Split(path.Clean(p), "/")
	for _, r := range runLaterRules {
		if matchRunLater(r.Pattern, segs) {
			return r.Why
		}
	}
	return stdlibShadow(segs)
}

func matchRunLater(pattern string, segs []string) bool {
	pat := strings.Split(pattern, "/")
	if pat[len(pat)-1] == "**" {
		pat = pat[:len(pat)-1]
		for i := 0; i+len(pat) < len(segs); i++ {
			if matchSegs(pat, segs[i:i+len(pat)]) {
				return true
			}
		}
		return false
	}
	return len(segs) >= len(pat) && matchSegs(pat, segs[len(segs)-len(pat):])
}

func matchSegs(pat, segs []string) bool {
	for i := range pat {
		if ok, _ := path.Match(pat[i], segs[i]); !ok {
			return false
		}
	}
	return true
}

// stdlibShadow returns why a module or package (name.py, name.pyc,
// name/__init__.py) named like a standard-library module runs later:
// Python imports it instead of the real one when its folder is on sys.path,
// as a script's folder is. "" for anything else.
func stdlibShadow(segs []string) string {
	n := len(segs)
	name := segs[n-1]
	if (name == "__init__.py" || name == "__init__.pyc") && n >= 2 {
		name = segs[n-2]
	} else if mod, ok := strings.CutSuffix(name, ".py"); ok {
		name = mod
	} else if mod, ok := strings.CutSuffix(name, ".pyc"); ok && (n < 2 || segs[n-2] != "__pycache__") {
		name = mod
	} else {
		return ""
	}
	if _, found := slices.BinarySearch(stdlibNames, name); !found {
		return ""
	}
	return "named like Python's standard module " + name + ": Python imports it instead of the real one from a script's folder"
}

// stdlibNames are the public top-level modules of Python's standard
// library (sys.stdlib_module_names of 3.11), sorted.
var stdlibNames = strings.Fields(`abc aifc argparse array ast asynchat asyncio asyncore atexit
audioop base64 bdb binascii bisect builtins bz2 cProfile calendar
cgi cgitb chunk cmath cmd code codecs codeop collections colorsys
compileall concurrent configparser contextlib contextvars copy
copyreg crypt csv ctypes curses dataclasses datetime dbm decimal
difflib dis distutils doctest email encodings ensurepip enum errno
faulthandler fcntl filecmp fileinput fnmatch fractions ftplib
functools gc genericpath getopt getpass gettext glob graphlib grp
gzip hashlib heapq hmac html http idlelib imaplib imghdr imp
importlib inspect io ipaddress itertools json keyword lib2to3
linecache locale logging lzma mailbox mailcap marshal math
mimetypes mmap modulefinder msilib msvcrt multiprocessing netrc
nis nntplib nt ntpath nturl2path numbers opcode operator optparse
os ossaudiodev pathlib pdb pickle pickletools pipes pkgutil
platform plistlib poplib posix posixpath pprint profile pstats pty
pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri random
re readline reprlib resource rlcompleter runpy sched secrets
select selectors shelve shlex shutil signal site smtpd smtplib
sndhdr socket socketserver spwd sqlite3 sre_compile sre_constants
sre_parse ssl stat statistics string stringprep struct subprocess
sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib
tempfile termios textwrap threading time timeit tkinter token
tokenize tomllib trace traceback tracemalloc tty turtle turtledemo
types typing unicodedata unittest urllib uu uuid venv warnings
wave weakref webbrowser winreg winsound wsgiref xdrlib xml xmlrpc
zipapp zipfile zipimport zlib zoneinfo`)

// laterCheck returns a function that says why a change at a workspace path
// runs later ("" when it does not): under what git would run or load
// (gitPaths of the real workspace), or runsLater. When the workspace's git
// configuration cannot be read, every change asks, with that reason.
func (cs *ChangeSet) laterCheck() func(p string) string {
	if len(cs.Changes) == 0 || cs.Workspace == "" {
		return runsLater
	}
	protected, err := gitPaths(cs.Workspace)
	if err != nil {
		return func(string) string { return err.Error() }
	}
	return func(p string) string {
		abs := filepath.Join(cs.Workspace, filepath.FromSlash(p))
		for _, g := range protected {
			if pathWithin(abs, g.Path) {
				return g.Why
			}
		}
		return runsLater(p)
	}
}
