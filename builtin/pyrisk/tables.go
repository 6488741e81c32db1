package pyrisk

import (
	"slices"
	"strings"
	"sync"
)

// riskyModules run other programs or native code when imported or used.
var riskyModules = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"subprocess":                 "which runs other programs",
		"_posixsubprocess":           "which runs other programs",
		"multiprocessing":            "which starts processes",
		"pty":                        "which spawns programs on a terminal",
		"ctypes":                     "which calls native code",
		"_ctypes":                    "which calls native code",
		"cffi":                       "which calls native code",
		"pexpect":                    "which runs other programs",
		"sh":                         "which runs other programs",
		"plumbum":                    "which runs other programs",
		"sarge":                      "which runs other programs",
		"delegator":                  "which runs other programs",
		"envoy":                      "which runs other programs",
		"invoke":                     "which runs other programs",
		"fabric":                     "which runs other programs",
		"webbrowser":                 "which starts a browser",
		"runpy":                      "which runs code that is not judged",
		"code":                       "which runs code that is not judged",
		"pip":                        "which installs and runs packages",
		"ensurepip":                  "which installs and runs packages",
		"venv":                       "which runs other programs",
		"distutils.spawn":            "which runs other programs",
		"zipimport":                  "which loads code that is not judged",
		"popen2":                     "which runs other programs",
		"commands":                   "which runs other programs",
		"asyncio.subprocess":         "which runs other programs",
		"concurrent.futures.process": "which starts processes",
		"pdb":                        "which runs code given as text",
		"bdb":                        "which runs code given as text",
		"imp":                        "which loads code that is not judged",
		"idlelib":                    "which runs code that is not judged",
	}
})

// moduleRisk says why importing or using module name (or a module it is
// part of) asks, "" when it does not.
func moduleRisk(name string) string {
	for p := name; p != ""; {
		if why, ok := riskyModules()[p]; ok {
			return why
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return ""
}

// osProcess are the functions of os (and posix, nt) that run programs.
var osProcess = []string{"system", "popen", "popen2", "popen3", "popen4", "fork", "forkpty",
	"execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe",
	"spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe",
	"posix_spawn", "posix_spawnp", "startfile"}

// riskyAttrs maps module.attribute to why using it asks.
var riskyAttrs = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"asyncio.create_subprocess_exec":           "which runs other programs",
		"asyncio.create_subprocess_shell":          "which runs a shell",
		"concurrent.futures.ProcessPoolExecutor":   "which starts processes",
		"platform.popen":                           "which runs a shell",
		"site.addsitedir":                          "which makes imports load code that is not judged",
		"importlib.util.spec_from_file_location":   "which loads code that is not judged",
		"importlib.machinery.SourceFileLoader":     "which loads code that is not judged",
		"importlib.machinery.SourcelessFileLoader": "which loads code that is not judged",
		"importlib.machinery.ExtensionFileLoader":  "which loads native code",
		"types.CodeType":                           "which builds code that is not judged",
		"types.FunctionType":                       "which builds code that is not judged",
		"pickle.load":                              "which can run any code while deserializing",
		"pickle.loads":                             "which can run any code while deserializing",
		"pickle.Unpickler":                         "which can run any code while deserializing",
		"_pickle.load":                             "which can run any code while deserializing",
		"_pickle.loads":                            "which can run any code while deserializing",
		"_pickle.Unpickler":                        "which can run any code while deserializing",
		"cPickle.loads":                            "which can run any code while deserializing",
		"dill.load":                                "which can run any code while deserializing",
		"dill.loads":                               "which can run any code while deserializing",
		"cloudpickle.load":                         "which can run any code while deserializing",
		"cloudpickle.loads":                        "which can run any code while deserializing",
		"marshal.load":                             "which loads code objects",
		"marshal.loads":                            "which loads code objects",
		"shelve.open":                              "which can run any code while deserializing",
		"pandas.read_pickle":                       "which can run any code while deserializing",
		"builtins.__import__":                      "",
		"pickle._load":                             "which can run any code while deserializing",
		"pickle._loads":                            "which can run any code while deserializing",
		"pickle._Unpickler":                        "which can run any code while deserializing",
		"joblib.load":                              "which can run any code while deserializing",
		"jsonpickle.decode":                        "which can run any code while deserializing",
		"yaml.unsafe_load":                         "which can run any code while deserializing",
		"yaml.unsafe_load_all":                     "which can run any code while deserializing",
		"timeit.timeit":                            "which runs code given as text",
		"timeit.repeat":                            "which runs code given as text",
		"timeit.Timer":                             "which runs code given as text",
		"timeit.main":                              "which runs code given as text",
		"cProfile.run":                             "which runs code given as text",
		"cProfile.runctx":                          "which runs code given as text",
		"cProfile.Profile":                         "which runs code given as text",
		"profile.run":                              "which runs code given as text",
		"profile.runctx":                           "which runs code given as text",
		"profile.Profile":                          "which runs code given as text",
		"trace.Trace":                              "which runs code given as text",
		"doctest.testmod":                          "which runs code found in docstrings",
		"doctest.testfile":                         "which runs code found in docstrings",
		"doctest.run_docstring_examples":           "which runs code found in docstrings",
		"doctest.DocTestRunner":                    "which runs code found in docstrings",
		"doctest.debug_src":                        "which runs code given as text",
		"logging.config.dictConfig":                "which can import and call anything its configuration names",
		"logging.config.fileConfig":                "which evaluates text from its configuration file",
		"logging.config.listen":                    "which accepts configuration, and code, from a socket",
		"pkgutil.resolve_name":                     "which imports a module by a computed name",
		"pkgutil.get_importer":                     "which loads code that is not judged",
		"pkgutil.find_loader":                      "which loads code that is not judged",
		"pkgutil.get_loader":                       "which loads code that is not judged",
		"gc.get_objects":                           "which reaches every object, modules included",
		"gc.get_referrers":                         "which reaches every object, modules included",
		"gc.get_referents":                         "which reaches every object, modules included",
		"builtins.breakpoint":                      "which starts a debugger that runs what it reads",
		"unittest.TestLoader":                      "which imports test files that are not judged",
		"unittest.defaultTestLoader":               "which imports test files that are not judged",
	}
})

// attrRisk says why using the module attribute p asks, "" when it does
// not.
func attrRisk(p string) string {
	if p == "" {
		return ""
	}
	mod, attr, ok := cutLast(p)
	if !ok {
		return ""
	}
	if (mod == "os" || mod == "posix" || mod == "nt") && slices.Contains(osProcess, attr) {
		if attr == "system" || attr == "popen" {
			return "which runs a shell"
		}
		return "which runs other programs"
	}
	return riskyAttrs()[p]
}

func cutLast(p string) (string, string, bool) {
	i := strings.LastIndexByte(p, '.')
	if i < 0 {
		return "", "", false
	}
	return p[:i], p[i+1:], true
}

// starRisky are modules whose star import brings process functions in.
var starRisky = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"os": true, "posix": true, "nt": true, "asyncio": true, "pickle": true,
		"concurrent.futures": true, "platform": true}
})

// pathRisk judges a resolved path as itself and rebased at the last module
// on the way (shutil.os.system is os.system, logging.os.popen is
// os.popen): modules re-export the modules they import.
func pathRisk(p string) string {
	for _, q := range []string{p, rebase(p)} {
		if q == "" {
			continue
		}
		if why := attrRisk(q); why != "" {
			return why
		}
		if why := moduleRisk(q); why != "" && strings.Contains(q, ".") {
			return why
		}
	}
	return ""
}

// reexported are modules that other modules import, and so expose as
// attributes (shutil.os, tempfile._os, logging.sys).
var reexported = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"os": true, "_os": true, "posix": true, "nt": true, "subprocess": true,
		"_subprocess": true, "sys": true, "_sys": true, "builtins": true, "_builtins": true, "importlib": true,
		"pty": true, "ctypes": true, "pickle": true, "marshal": true, "runpy": true, "code": true,
		"_posixsubprocess": true, "multiprocessing": true, "asyncio": true}
})

// rebase returns p from the last re-exported module after its first
// element, "" when there is none.
func rebase(p string) string {
	parts := strings.Split(p, ".")
	for i := len(parts) - 1; i >= 1; i-- {
		if reexported()[parts[i]] {
			name := strings.TrimPrefix(parts[i], "_")
			return strings.Join(append([]string{name}, parts[i+1:]...), ".")
		}
	}
	return ""
}

// valueModules are modules that reach process functions or code
// execution: passed around as values (in a list, as an argument, returned
// by a lambda), they are not followed, so such uses ask.
var valueModules = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"os": true, "posix": true, "nt": true, "subprocess": true, "sys": true,
		"builtins": true, "importlib": true, "pty": true, "ctypes": true, "multiprocessing": true, "shutil": true,
		"pickle": true, "marshal": true, "runpy": true, "code": true, "asyncio": true, "platform": true,
		"tempfile": true, "pathlib": true, "glob": true, "logging": true, "inspect": true, "gc": true,
		"types": true, "operator": true, "_posixsubprocess": true, "_os": true, "_sys": true}
})

// lastModule is the last element of p that names a module of
// valueModules (p itself rebased), "" when none.
func lastModule(p string) string {
	parts := strings.Split(p, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		if valueModules()[parts[i]] {
			if i == len(parts)-1 {
				return parts[i]
			}
			return ""
		}
	}
	return ""
}

func topModule(p string) string {
	top, _, _ := strings.Cut(p, ".")
	return top
}

// gadgets are attribute names that reach code or namespaces that are not
// judged, whatever object they are read from.
var gadgets = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"__subclasses__":   "which reaches code that is not judged",
		"__globals__":      "which reaches code that is not judged",
		"__builtins__":     "which reaches code that is not judged",
		"__code__":         "which reaches code that is not judged",
		"__getattribute__": "which reaches attributes by computed names",
		"__import__":       "which imports modules that are not judged",
		"__loader__":       "which loads modules that are not judged",
		"__spec__":         "which loads modules that are not judged",
		"__reduce_ex__":    "which reaches the functions objects are rebuilt with",
		"f_globals":        "which reaches code that is not judged",
		"f_builtins":       "which reaches code that is not judged",
		"f_locals":         "which reaches code that is not judged",
		"gi_frame":         "which reaches code that is not judged",
		"cr_frame":         "which reaches code that is not judged",
		"tb_frame":         "which reaches code that is not judged",
		"func_globals":     "which reaches code that is not judged",
		"subprocess_exec":  "which runs other programs",
		"subprocess_shell": "which runs a shell",
	}
})

// dangerousName reports whether an attribute name given as text reaches
// processes or code (for getattr, attrgetter, methodcaller).
func dangerousName(s string) bool {
	if _, ok := gadgets()[s]; ok {
		return true
	}
	return slices.Contains(osProcess, s) || s == "system" || s == "popen"
}

// networkModules use the network when imported directly.
var networkModules = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"socket": true, "ssl": true, "http.client": true, "urllib.request": true,
		"urllib3": true, "requests": true, "httpx": true, "aiohttp": true, "ftplib": true, "smtplib": true,
		"poplib": true, "imaplib": true, "telnetlib": true, "nntplib": true, "xmlrpc.client": true,
		"websocket": true, "websockets": true, "paramiko": true, "grpc": true, "pycurl": true, "asyncssh": true,
		"boto3": true, "botocore": true, "openai": true, "anthropic": true, "httplib2": true, "tornado.httpclient": true}
})

// networkModule says why importing name uses the network, "" when it
// does not.
func networkModule(name string) string {
	for p := name; p != ""; {
		if networkModules()[p] {
			return "which uses the network"
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return ""
}
