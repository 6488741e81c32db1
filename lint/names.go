package lint

import (
	"strings"
	"sync"
	"unicode"

	"github.com/lcptools/lcp/builtin/pyrisk"
)

// words splits an identifier into lowercase words at underscores and
// lower-to-upper case changes: "openaiApiKey" -> [openai api key].
func words(name string) []string {
	var out []string
	var cur []rune
	var prev rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.':
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// secretWords end the names of secrets ("password", "auth_token").
var secretWords = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"password": true, "passwd": true, "passphrase": true, "secret": true, "token": true,
		"apikey": true, "credential": true, "credentials": true, "creds": true,
	}
})

// keyQualifiers make "<word>_key" a secret ("api_key", not "sort_key").
var keyQualifiers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"api": true, "access": true, "secret": true, "private": true, "auth": true, "signing": true,
		"encryption": true, "license": true, "licence": true, "ssh": true, "client": true, "master": true,
		"session": true, "app": true, "bearer": true, "service": true, "account": true, "subscription": true,
		"registry": true, "webhook": true,
	}
})

// notSecretTokens are tokens that are not secrets: pagination cursors and
// the special tokens of language models.
var notSecretTokens = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"page": true, "next": true, "continuation": true, "pagination": true, "start": true, "end": true,
		"eos": true, "bos": true, "pad": true, "unk": true, "sep": true, "cls": true, "mask": true,
		"special": true, "max": true, "min": true, "num": true, "n": true, "stop": true, "cancel": true,
		"cancellation": true, "sync": true, "resume": true, "first": true, "last": true, "prev": true,
		"previous": true, "sentinel": true, "cursor": true,
	}
})

// hasFold reports whether s contains sub, ignoring ASCII case (sub is
// lowercase), without allocating: the cheap test before splitting names
// into words.
func hasFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// isSecretName reports whether an identifier names a secret: its last word
// is password, secret, token, credentials... or it ends in <api|access|
// private|...>_key; a leading is/has/use/... word (a flag about a secret)
// and mask-like words (an already masked value) do not count.
func isSecretName(name string) bool {
	if !hasFold(name, "pass") && !hasFold(name, "secret") && !hasFold(name, "token") && !hasFold(name, "key") && !hasFold(name, "cred") {
		return false
	}
	w := words(name)
	if len(w) == 0 {
		return false
	}
	switch w[0] {
	case "is", "has", "use", "uses", "require", "requires", "needs", "need", "with", "no", "n", "num", "max", "min":
		return false
	}
	for _, x := range w {
		if x == "masked" || x == "redacted" || x == "hashed" || x == "mask" || x == "hint" {
			return false
		}
	}
	last := w[len(w)-1]
	switch {
	case last == "token":
		return len(w) == 1 || !notSecretTokens()[w[len(w)-2]]
	case secretWords()[last]:
		return true
	case last == "key" && len(w) >= 2:
		return keyQualifiers()[w[len(w)-2]]
	}
	return false
}

// maskingName reports whether a function's name says it hides a secret
// (mask, redact, hash...): its result is not the secret.
func maskingName(name string) bool {
	for _, s := range []string{"mask", "redact", "hash", "obfuscat", "censor", "hide", "anonymi", "fingerprint", "digest", "encrypt", "sha256", "sha1", "md5"} {
		if hasFold(name, s) {
			return true
		}
	}
	return false
}

// isConfirmName reports whether a name calls the confirm handler or an
// approval helper.
func isConfirmName(name string) bool {
	return hasFold(name, "confirm") || hasFold(name, "approv")
}

// isInteractionName reports whether a name holds the user interaction
// handler.
func isInteractionName(name string) bool {
	return hasFold(name, "interaction_handler")
}

// Sensitive steps (risky-pattern): what counts besides pyrisk's process
// spawning.

// deleteFuncs remove files or folders.
var deleteFuncs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"os.remove": true, "os.unlink": true, "os.rmdir": true, "os.removedirs": true,
		"shutil.rmtree": true, "send2trash.send2trash": true, "posix.remove": true, "posix.unlink": true,
	}
})

// networkFuncs talk to the network (exact names). socket.socket is not
// one: tools make sockets to find a free local port; connecting is a
// method of the socket, which the analysis cannot tie to the network.
var networkFuncs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"urllib.request.urlopen": true, "urllib.request.urlretrieve": true, "urllib.urlopen": true,
		"urllib2.urlopen": true, "http.client.HTTPConnection": true, "http.client.HTTPSConnection": true,
		"socket.create_connection": true, "ftplib.FTP": true, "ftplib.FTP_TLS": true,
		"smtplib.SMTP": true, "smtplib.SMTP_SSL": true, "smtplib.LMTP": true, "poplib.POP3": true,
		"poplib.POP3_SSL": true, "imaplib.IMAP4": true, "imaplib.IMAP4_SSL": true, "telnetlib.Telnet": true,
		"xmlrpc.client.ServerProxy": true, "asyncio.open_connection": true, "websocket.create_connection": true,
		"websockets.connect": true, "aiohttp.ClientSession": true, "aiohttp.request": true,
		"paramiko.SSHClient": true, "urllib3.PoolManager": true, "urllib3.request": true, "pycurl.Curl": true,
	}
})

// networkModules are modules whose every call may use the network.
var networkModules = []string{"requests.", "httpx."}

// sensitiveCall classifies a resolved callee: process spawning and code
// running (pyrisk's list, shared with execute_python's safe mode),
// deletion, network. It returns a phrase for the message, or "".
func sensitiveCall(path string) string {
	if path == "" {
		return ""
	}
	if why := pyrisk.Reason(path); why != "" {
		return "calls " + opName(path) + ", " + why
	}
	if deleteFuncs()[path] {
		return "deletes files with " + opName(path)
	}
	if networkFuncs()[path] {
		return "uses the network with " + opName(path)
	}
	for _, m := range networkModules {
		if strings.HasPrefix(path, m) {
			return "uses the network with " + opName(path)
		}
	}
	return ""
}

// File operations (path-escape). pathArgs says which positional
// arguments are paths: 1 for the first only, 2 for the first two, -1 for
// all.
var fileFuncs = sync.OnceValue(func() map[string]int {
	return map[string]int{
		"builtins.open": 1, "io.open": 1, "codecs.open": 1, "os.open": 1, "tarfile.open": 1,
		"zipfile.ZipFile": 1, "gzip.open": 1, "bz2.open": 1, "lzma.open": 1,
		"os.listdir": 1, "os.scandir": 1, "os.walk": 1, "os.fwalk": 1, "glob.glob": 1, "glob.iglob": 1,
		"os.remove": 1, "os.unlink": 1, "os.rmdir": 1, "os.removedirs": 1, "os.mkdir": 1, "os.makedirs": 1,
		"os.rename": 2, "os.renames": 2, "os.replace": 2, "os.link": 2, "os.symlink": 2,
		"os.chmod": 1, "os.chown": 1, "os.truncate": 1, "os.utime": 1, "os.mkfifo": 1,
		"shutil.copy": 2, "shutil.copy2": 2, "shutil.copyfile": 2, "shutil.copytree": 2, "shutil.move": 2,
		"shutil.rmtree": 1, "shutil.copymode": 2, "shutil.copystat": 2, "shutil.chown": 1,
		"shutil.make_archive": 2, "shutil.unpack_archive": 2,
	}
})

// fileKeywords are keyword arguments of those functions that take paths.
var fileKeywords = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"file": true, "path": true, "src": true, "dst": true, "name": true,
		"filename": true, "top": true, "base_name": true, "root_dir": true, "extract_dir": true, "pathname": true}
})

// pathMethods are methods of pathlib paths that open, list, write or
// remove; the value is the number of arguments of the pathlib method (-1:
// any), so that str.replace(a, b) is not mistaken for Path.replace(t).
var pathMethods = sync.OnceValue(func() map[string]int {
	return map[string]int{
		"open": -1, "read_text": -1, "read_bytes": -1, "write_text": -1, "write_bytes": -1,
		"unlink": -1, "rmdir": -1, "iterdir": 0, "mkdir": -1, "touch": -1, "glob": -1, "rglob": -1,
		"rename": 1, "replace": 1, "symlink_to": -1, "hardlink_to": -1, "chmod": -1, "walk": -1,
	}
})

// pathBuilders return a path made of their arguments: a parameter's taint
// goes through them.
var pathBuilders = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"pathlib.Path": true, "pathlib.PurePath": true, "pathlib.PosixPath": true, "pathlib.PurePosixPath": true,
		"pathlib.WindowsPath": true, "os.path.join": true, "os.path.expanduser": true, "os.path.expandvars": true,
		"os.path.dirname": true, "os.path.relpath": true, "os.fspath": true, "posixpath.join": true,
		"os.path.abspath": true, "os.path.realpath": true, "os.path.normpath": true, "posixpath.abspath": true,
		"posixpath.realpath": true, "posixpath.normpath": true,
	}
})

// resolvers make a path absolute and free of "..": a prefix check on their
// result is a containment check.
var resolvers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"os.path.abspath": true, "os.path.realpath": true, "os.path.normpath": true,
		"posixpath.abspath": true, "posixpath.realpath": true, "posixpath.normpath": true,
	}
})

// passThrough are functions whose result carries their arguments' values
// (a secret or a parameter path stays one through them).
var passThrough = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"builtins.str": true, "builtins.repr": true, "builtins.format": true, "builtins.ascii": true,
		"builtins.list": true, "builtins.tuple": true, "builtins.sorted": true, "builtins.reversed": true,
		"builtins.bytes": true, "json.dumps": true, "base64.b64encode": true, "base64.urlsafe_b64encode": true,
		"base64.b64decode": true, "urllib.parse.quote": true, "urllib.parse.quote_plus": true,
		"urllib.parse.urlencode": true, "shlex.quote": true, "shlex.join": true, "textwrap.dedent": true,
		"textwrap.indent": true, "textwrap.shorten": true, "pprint.pformat": true, "html.escape": true,
	}
})

// carryMethods return (part of) their receiver or arguments: taint passes.
var carryMethods = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"strip": true, "lstrip": true, "rstrip": true, "lower": true, "upper": true, "casefold": true,
		"title": true, "capitalize": true, "replace": true, "format": true, "format_map": true, "join": true,
		"removeprefix": true, "removesuffix": true, "encode": true, "decode": true, "split": true,
		"rsplit": true, "splitlines": true, "partition": true, "rpartition": true, "expandtabs": true,
		"zfill": true, "ljust": true, "rjust": true, "center": true, "resolve": true, "absolute": true,
		"expanduser": true, "joinpath": true, "with_name": true, "with_stem": true, "with_suffix": true,
		"as_posix": true, "get": true, "pop": true, "copy": true, "values": true, "items": true,
		"__str__": true, "__format__": true, "translate": true,
	}
})

// logMethods are the methods of loggers.
var logMethods = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"debug": true, "info": true, "warning": true, "warn": true, "error": true, "exception": true,
		"critical": true, "fatal": true, "log": true,
	}
})

// printFuncs print their arguments.
var printFuncs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"builtins.print": true, "sys.stdout.write": true, "sys.stderr.write": true, "pprint.pprint": true,
		"warnings.warn": true, "sys.stdout.writelines": true, "sys.stderr.writelines": true,
	}
})

// builtinNames are the builtins the analysis resolves by name.
var builtinNames = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"open": true, "print": true, "eval": true, "exec": true, "compile": true, "__import__": true,
		"str": true, "repr": true, "format": true, "ascii": true, "list": true, "tuple": true, "sorted": true,
		"reversed": true, "bytes": true, "int": true, "float": true, "bool": true, "len": true, "isinstance": true,
		"range": true, "round": true, "abs": true, "min": true, "max": true, "dict": true, "set": true,
		"hash": true, "id": true, "type": true, "sum": true, "divmod": true, "pow": true, "complex": true,
		"getattr": true, "callable": true, "hasattr": true, "iter": true, "next": true, "enumerate": true,
		"zip": true, "map": true, "exit": true, "quit": true, "filter": true, "any": true, "all": true, "frozenset": true, "chr": true, "ord": true,
	}
})

// coercers turn a string into a number or boolean.
var coercers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"builtins.int": true, "builtins.float": true, "builtins.bool": true, "builtins.complex": true,
		"builtins.str": true, "builtins.isinstance": true, "decimal.Decimal": true, "fractions.Fraction": true,
		"builtins.round": false,
	}
})

// numericFuncs take a number: a raw string parameter there fails.
var numericFuncs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"builtins.range": true, "builtins.round": true, "builtins.abs": true, "time.sleep": true,
		"asyncio.sleep": true, "builtins.divmod": true, "builtins.pow": true, "math.sqrt": true,
		"math.floor": true, "math.ceil": true, "math.log": true, "math.exp": true, "builtins.chr": true,
	}
})
