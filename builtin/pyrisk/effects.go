package pyrisk

import (
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/token"
	"github.com/lcptools/lcp/sandbox"
)

// effects follows, in one unit of code, what matters beyond process
// spawning: files written (which ask without a sandbox: nothing proves
// such code harmless), URLs fetched (the network, beyond the sandbox),
// and modules imported after a write that may have produced them.
type effects struct {
	firstModuleWrite token.Pos // the first write of a .py/.pth/... file or of a computed name
	moduleWrite      string
	importedAfter    bool
}

// imported notes an import (statement or call) at n.
func (e *effects) imported(n ast.Node) {
	if e.firstModuleWrite != 0 && n.Pos() > e.firstModuleWrite {
		e.importedAfter = true
	}
}

// writeFuncs are functions that write, delete or move files.
var writeFuncs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"os.remove": true, "os.unlink": true, "os.rmdir": true, "os.removedirs": true, "os.rename": true,
		"os.renames": true, "os.replace": true, "os.truncate": true, "os.chmod": true, "os.chown": true,
		"os.lchown": true, "os.link": true, "os.symlink": true, "os.mkfifo": true, "os.mknod": true,
		"os.utime": true, "os.mkdir": true, "os.makedirs": true, "os.open": true, "os.write": true,
		"shutil.copy": true, "shutil.copy2": true, "shutil.copyfile": true, "shutil.copytree": true,
		"shutil.move": true, "shutil.rmtree": true, "shutil.make_archive": true, "shutil.unpack_archive": true,
		"shutil.chown": true, "shutil.copymode": true, "shutil.copystat": true,
		// Metadata is data: modes, owners, times, flags and extended
		// attributes of existing entries change what later runs or reads them.
		"os.setxattr": true, "os.removexattr": true, "os.lchmod": true, "os.fchmod": true, "os.fchown": true,
		"os.chflags": true, "os.lchflags": true, "os.ftruncate": true, "os.posix_fallocate": true,
		"os.pwrite": true, "os.pwritev": true, "os.writev": true, "os.sendfile": true, "os.copy_file_range": true,
		"os.splice": true,
	}
})

// writeMethods are method names that write files whatever their object
// (pathlib, pandas, numpy, matplotlib, PIL, archives...).
var writeMethods = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"write_text": true, "write_bytes": true, "unlink": true, "rmdir": true, "rename": true, "replace": true,
		"touch": true, "chmod": true, "symlink_to": true, "hardlink_to": true, "to_csv": true, "to_excel": true,
		"to_json": true, "to_parquet": true, "to_pickle": true, "to_feather": true, "to_hdf": true, "to_sql": true,
		"to_html": true, "to_latex": true, "to_markdown": true, "to_stata": true, "to_orc": true, "savefig": true,
		"save": true, "savez": true, "savez_compressed": true, "savetxt": true, "tofile": true, "imwrite": true,
		"imsave": true, "extractall": true, "extract": true, "write_image": true, "write_html": true,
	}
})

// pathMethods are the write methods of pathlib.Path, whose file is the
// path they are called on.
var pathMethods = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"write_text": true, "write_bytes": true, "unlink": true, "rmdir": true,
		"touch": true, "chmod": true, "symlink_to": true, "hardlink_to": true, "rename": true, "replace": true}
})

// socketMethods are methods that open network connections whatever
// their object (asyncio's loops and streams).
var socketMethods = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"open_connection": true, "create_connection": true, "start_server": true,
		"create_datagram_endpoint": true, "sock_connect": true, "create_server": true, "open_unix_connection": true}
})

// fetchMethods are function names that fetch what a URL names.
var fetchMethods = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"get": true, "post": true, "put": true, "delete": true, "head": true,
		"patch": true, "request": true, "urlopen": true, "urlretrieve": true, "Request": true, "read_csv": true,
		"read_json": true, "read_html": true, "read_excel": true, "read_parquet": true, "read_table": true,
		"read_xml": true, "load": true, "open": true, "fetch": true, "download": true, "stream": true,
		"load_dataset": true, "from_pretrained": true, "imread": true, "loadtxt": true, "genfromtxt": true}
})

// call judges one call for its effects.
func (e *effects) call(u *unit, n *ast.Call) {
	f := u.resolve(n.Func)
	method := ""
	if a, ok := n.Func.(*ast.Attribute); ok {
		method = a.Attr
	} else if name, ok := n.Func.(*ast.Name); ok {
		method = name.Id
	}
	if url := urlArg(n); url != "" && (fetchMethods()[method] || networkModule(f) != "") {
		u.c.needNetwork(u.where(n), "fetches "+url)
	}
	if socketMethods()[method] {
		u.c.needNetwork(u.where(n), "opens network connections ("+method+")")
	}
	e.reads(u, n, f)
	var target ast.Expr
	switch {
	case f == "builtins.open" || f == "io.open" || f == "codecs.open":
		if !writeMode(arg(n, 1, "mode")) {
			return
		}
		target = arg(n, 0, "file")
	case f == "importlib.reload" || f == "runpy.run_path" || f == "builtins.__import__" ||
		f == "importlib.import_module" || f == "importlib.__import__":
		e.imported(n)
		return
	case writeFuncs()[f]:
		target = arg(n, 0, "")
		if f == "os.rename" || f == "os.replace" || strings.HasPrefix(f, "shutil.") && f != "shutil.rmtree" {
			target = arg(n, 1, "dst")
		}
	case writeMethods()[method]:
		a, ok := n.Func.(*ast.Attribute)
		if !ok {
			return // a local function named like a method
		}
		target = arg(n, 0, "")
		if pathMethods()[method] {
			// Path("x").write_text(...): the path is the receiver's.
			target = nil
			if recv, ok := a.Value.(*ast.Call); ok {
				target = arg(recv, 0, "")
			}
		}
	default:
		return
	}
	e.write(u, n, target)
}

// write records one write to target (nil or computed when not literal).
func (e *effects) write(u *unit, n *ast.Call, target ast.Expr) {
	name, literalName := literal(target)
	shown := name
	if !literalName {
		shown = "a file whose name is computed"
	}
	u.c.write(u.where(n), "writes or changes files ("+shown+")")
	if literalName && strings.HasPrefix(name, "/") {
		u.c.needWrite(u.where(n), path.Clean(name))
	}
	if !literalName || moduleFile(name) {
		if e.firstModuleWrite == 0 {
			e.firstModuleWrite, e.moduleWrite = n.Pos(), shown
		}
	}
}

// moduleFile reports whether a file name is one Python can import.
func moduleFile(name string) bool {
	for _, ext := range []string{".py", ".pyc", ".pth", ".so", ".pyd", ".zip", ".egg", ".whl"} {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			return true
		}
	}
	return false
}

// writeMode reports whether an open mode writes: a literal with w, a, x
// or +, or a computed one.
func writeMode(mode ast.Expr) bool {
	if mode == nil {
		return false
	}
	s, ok := literal(mode)
	return !ok || strings.ContainsAny(s, "wax+")
}

// urlArg returns the first argument of a call that is a URL literal.
func urlArg(n *ast.Call) string {
	for _, a := range n.Args {
		if s, ok := literal(a); ok {
			for _, scheme := range []string{"http://", "https://", "ftp://", "ws://", "wss://", "s3://", "gs://"} {
				if strings.HasPrefix(s, scheme) {
					return s
				}
			}
		}
	}
	return ""
}

// finish asks, at the end of a unit, when it imported modules after
// writing a file it may import.
func (e *effects) finish(u *unit) {
	if e.importedAfter {
		u.c.ask(u.label, "writes "+e.moduleWrite+" and imports modules afterwards: it may import what it wrote, which is not judged")
	}
}

// needNetwork records that the code uses the network.
func (c *classifier) needNetwork(where, reason string) {
	c.need(sandbox.Permission{Kind: sandbox.Network, Reason: where + ": " + reason})
}

// needWrite records a write to an absolute path; outside the workspace
// (and the sandbox's private /tmp), it is a permission beyond the
// sandbox.
func (c *classifier) needWrite(where, p string) {
	if p == "/dev/null" || p == "/tmp" || strings.HasPrefix(p, "/tmp/") || strings.HasPrefix(p, "/dev/") {
		return
	}
	if ws := c.opts.Workspace; ws != "" && (p == ws || strings.HasPrefix(p, strings.TrimSuffix(ws, "/")+"/")) {
		return
	}
	c.need(sandbox.Permission{Kind: sandbox.WritePath, Path: p, Reason: where + ": writes outside the workspace (" + p + ")"})
}

func (c *classifier) need(p sandbox.Permission) {
	for _, q := range c.needs {
		if q.Kind == p.Kind && q.Path == p.Path {
			return
		}
	}
	if len(c.needs) < maxReasons {
		c.needs = append(c.needs, p)
	}
}

// write records a write, a reason to ask without a sandbox.
func (c *classifier) write(where, reason string) {
	r := where + ": " + reason
	for _, w := range c.writes {
		if w == r {
			return
		}
	}
	if len(c.writes) < maxReasons {
		c.writes = append(c.writes, r)
	}
}

// walkFuncs list or read folder trees.
var walkFuncs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"os.walk": true, "os.listdir": true, "os.scandir": true, "glob.glob": true,
		"glob.iglob": true, "os.fwalk": true, "shutil.copytree": true}
})

// reads notes reads of the home folder (Path.home(), expanduser, walks of
// it or of a folder above it), which carry credentials. Without a sandbox,
// safe mode asks for them.
func (e *effects) reads(u *unit, n *ast.Call, f string) {
	switch {
	case f == "pathlib.Path.home" || f == "os.path.expanduser" || f == "os.path.expandvars":
		u.c.read(u.where(n), "reads the home folder, where credentials live")
	case walkFuncs()[f]:
		if s, ok := literal(arg(n, 0, "")); ok && u.c.aboveHome(strings.TrimSuffix(strings.SplitN(s, "*", 2)[0], "/")) {
			u.c.read(u.where(n), "walks "+s+", which holds the home folder and its credentials")
		}
	}
	if a, ok := n.Func.(*ast.Attribute); ok && (a.Attr == "rglob" || a.Attr == "walk") {
		if recv, ok := a.Value.(*ast.Call); ok {
			if s, ok := literal(arg(recv, 0, "")); ok && u.c.aboveHome(s) {
				u.c.read(u.where(n), "walks "+s+", which holds the home folder and its credentials")
			}
		}
	}
}

// aboveHome reports whether p is the home folder, a folder above it, or
// the root.
func (c *classifier) aboveHome(p string) bool {
	if p == "" || p == "/" || p == "~" || p == "/home" || p == "/root" {
		return true
	}
	h := strings.TrimSuffix(c.opts.Home, "/")
	return h != "" && (p == h || strings.HasPrefix(h, strings.TrimSuffix(p, "/")+"/"))
}

// credentials matches text that names a credential store: a string that
// holds it is a read of credentials.
var credentials = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[/~])(\.ssh|\.gnupg|\.aws|\.azure|\.kube|\.password-store|\.docker/config\.json|` +
		`\.config/gcloud|\.git-credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.bash_history|\.zsh_history|\.python_history|` +
		`id_(rsa|dsa|ecdsa|ed25519))(/|$)|/etc/(shadow|gshadow|sudoers)|/proc/[^/]*/(environ|mem|root|cwd|fd)`)
})

// constant judges a string the code holds (joined f-string parts
// included): credential paths and the home folder itself.
func (u *unit) constant(n ast.Node, s string) {
	if len(s) > 4096 {
		return
	}
	if credentials().MatchString(s) {
		u.c.read(u.where(n), "mentions a credential store ("+s+")")
		return
	}
	if h := u.c.opts.Home; h != "" && (s == h || strings.HasPrefix(s, strings.TrimSuffix(h, "/")+"/")) {
		u.c.read(u.where(n), "reads the home folder ("+s+")")
	}
}

// read records a read of credentials or of the home folder, a reason to
// ask without a sandbox.
func (c *classifier) read(where, reason string) {
	r := where + ": " + reason
	for _, w := range c.reads {
		if w == r {
			return
		}
	}
	if len(c.reads) < maxReasons {
		c.reads = append(c.reads, r)
	}
}
