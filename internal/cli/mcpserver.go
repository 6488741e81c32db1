package cli

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/lcptools/lcp/mcp"
)

// aliasPrefix matches the "alias=" a --mcp-server value may start with.
var aliasPrefix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([^\s=/'"\\]+)=(.*)$`)
})

// parseServerFlag reads one --mcp-server value: a command line run as a
// stdio server ("npx -y @modelcontextprotocol/server-everything", quoted
// as a POSIX shell would) or an http(s) URL of a streamable HTTP server,
// optionally preceded by "alias=". Without an alias, one is made from the
// command's first word after the program that is not a flag (its package
// or script: "everything"; "run" and "exec" of docker and uv are passed
// over) or from the URL's host.
// named reports whether the value gave the alias.
func parseServerFlag(value string) (sc mcp.ServerConfig, named bool, err error) {
	value = strings.TrimSpace(value)
	if m := aliasPrefix().FindStringSubmatch(value); m != nil {
		sc.Alias, value, named = m[1], strings.TrimSpace(m[2]), true
	}
	if value == "" {
		return sc, named, errors.New("empty: give a command line (npx -y PACKAGE) or an http(s) URL")
	}
	if strings.HasPrefix(value, "http://") || strings.HasPrefix(value, "https://") {
		u, err := url.Parse(value)
		if err != nil || u.Host == "" {
			return sc, named, fmt.Errorf("%q is not a URL", value)
		}
		sc.Type, sc.URL = mcp.TypeHTTP, value
		if sc.Alias == "" {
			sc.Alias = aliasOf(strings.Split(u.Hostname(), ".")[0])
		}
		return sc, named, nil
	}
	words, err := splitCommandLine(value)
	if err != nil {
		return sc, named, err
	}
	if len(words) == 0 {
		return sc, named, errors.New("empty: give a command line (npx -y PACKAGE) or an http(s) URL")
	}
	sc.Type, sc.Command, sc.Args = mcp.TypeStdio, words[0], words[1:]
	if read := pathsShown(words[1:]); len(read) > 0 {
		sc.Sandbox = &mcp.SandboxConfig{Read: read}
	}
	if sc.Alias == "" {
		name := words[0]
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") && w != "run" && w != "exec" {
				name = w
				break
			}
		}
		sc.Alias = aliasOf(name)
	}
	return sc, named, nil
}

// pathsShown are the folders a server's sandbox shows read-only for the
// words of its command line that name existing files or folders (a local
// script: "node ./server/index.js"): the folder itself, the folder of a
// file, or the node_modules folder a path lies in, where its imports are.
// Words starting with "-" are flags, not paths.
func pathsShown(words []string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, "-") || !strings.ContainsAny(w, `/\`) && !strings.Contains(w, ".") {
			continue
		}
		abs, err := filepath.Abs(w)
		if err != nil {
			continue
		}
		st, err := os.Stat(abs)
		if err != nil {
			continue
		}
		dir := abs
		if !st.IsDir() {
			dir = filepath.Dir(abs)
		}
		nm := string(filepath.Separator) + "node_modules"
		if i := strings.LastIndex(dir, nm); i >= 0 {
			if rest := dir[i+len(nm):]; rest == "" || rest[0] == filepath.Separator {
				dir = dir[:i+len(nm)]
			}
		}
		if !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	return out
}

// aliasOf makes an alias from a package, script or host name: its base
// name without an npm scope, a version, an extension, or the "mcp-server-",
// "server-" and "mcp-" of package names; "mcp" when nothing is left.
func aliasOf(word string) string {
	name := path.Base(strings.ReplaceAll(word, `\`, "/"))
	if i := strings.LastIndexByte(name, '@'); i > 0 {
		name = name[:i] // pkg@1.2.3
	}
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i] // server.py, index.js
	}
	for _, p := range []string{"mcp-server-", "server-", "mcp-"} {
		if rest, ok := strings.CutPrefix(name, p); ok && rest != "" {
			name = rest
			break
		}
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, name)
	if strings.Trim(name, "_") == "" {
		return "mcp"
	}
	return name
}

// splitCommandLine splits a command line into words as a POSIX shell
// does for plain words: blanks separate, single quotes keep everything,
// double quotes keep all but backslash escapes of ", \, $ and `, and a
// backslash outside quotes keeps the next character. Nothing is expanded.
func splitCommandLine(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("%q: a single quote is not closed", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("%q: a double quote is not closed", s)
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("%q: ends with a backslash", s)
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// serverFlags turns the --mcp-server values into server entries, after
// those of the --mcp-config file (taken): an alias made from a command
// that another server has already gets "-2", "-3"...
func serverFlags(values []string, taken []mcp.ServerConfig) ([]mcp.ServerConfig, error) {
	used := map[string]bool{}
	for _, sc := range taken {
		used[sc.Alias] = true
	}
	var out []mcp.ServerConfig
	for _, v := range values {
		sc, named, err := parseServerFlag(v)
		if err != nil {
			return nil, usagef("--mcp-server: %v", err)
		}
		if used[sc.Alias] {
			if named {
				return nil, usagef("--mcp-server: the alias %q is used twice", sc.Alias)
			}
			base := sc.Alias
			for n := 2; used[sc.Alias]; n++ {
				sc.Alias = fmt.Sprintf("%s-%d", base, n)
			}
		}
		if err := sc.Validate(); err != nil {
			return nil, usagef("--mcp-server: %v", err)
		}
		used[sc.Alias] = true
		out = append(out, sc)
	}
	return out, nil
}

// startNotes writes the start-up progress of MCP servers as lines on w:
// "starting MCP server X…" when a start begins, then how it ended. The
// lines of servers starting side by side do not mix.
func startNotes(w io.Writer) func(alias string, started bool, tools int, err error) {
	var mu sync.Mutex
	return func(alias string, started bool, tools int, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case !started:
			fmt.Fprintf(w, "lcp: starting MCP server %s…\n", alias)
		case err != nil:
			fmt.Fprintf(w, "lcp: MCP server %s did not start: %s\n", alias, oneLine(err.Error()))
		default:
			fmt.Fprintf(w, "lcp: MCP server %s started: %d tool(s) as %s%s<tool>\n", alias, tools, alias, mcp.Separator)
		}
	}
}
