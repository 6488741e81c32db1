package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// checkSed accepts sed when its script neither writes files (w, W, s///w)
// nor runs commands (e, s///e), and -i edits only files inside the
// workspace. Scripts read from a file (-f) are not judged.
func checkSed(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	scanned, ok := c.scan(n, name, args, optSpec{short: "efl", long: []string{"expression", "file", "line-length"}})
	if !ok {
		return
	}
	var scripts []arg
	inPlace, sandbox := false, false
	for _, a := range scanned {
		switch {
		case a.isOpt("-e") || a.long("expression"):
			scripts = append(scripts, a)
		case a.isOpt("-f") || a.long("file"):
			c.ask(n, "sed -f runs a script from a file, which is not judged")
			return
		case a.isOpt("-i") || a.long("in-place"):
			inPlace = true
		case a.long("sandbox"):
			sandbox = true
		}
	}
	files := operands(scanned)
	if len(scripts) == 0 {
		if len(files) == 0 {
			return
		}
		scripts, files = files[:1], files[1:]
	}
	if !sandbox {
		var text []string
		for _, s := range scripts {
			if !s.static {
				c.ask(n, "the sed script is computed at run time")
				return
			}
			text = append(text, s.value)
		}
		if why := sedRisk(strings.Join(text, "\n")); why != "" {
			c.ask(n, "%s", why)
		}
	}
	if inPlace {
		for _, f := range files {
			c.writeArg(n, f)
		}
	}
}

// sedRisk scans a GNU sed script and says why it is risky, or "" when it
// only reads its input and writes standard output.
func sedRisk(s string) string {
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// delimited reads a delimited part (regex or replacement) ending at an
	// unescaped delim; it reports false if the script ends first.
	delimited := func(delim byte) bool {
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case delim:
				i++
				return true
			case '\n':
				if delim != '\n' {
					return false
				}
			}
			i++
		}
		return false
	}
	toEOL := func() {
		for i < len(s) && s[i] != '\n' {
			i++
		}
	}
	// toEOLCont skips text of a/i/c, which continues after a trailing backslash.
	toEOLCont := func() {
		for i < len(s) && s[i] != '\n' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
	}
	address := func() bool {
		switch {
		case i < len(s) && s[i] >= '0' && s[i] <= '9':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < len(s) && s[i] == '$':
			i++
		case i < len(s) && s[i] == '/':
			i++
			if !delimited('/') {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case i+1 < len(s) && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		}
		return true
	}
	for {
		for i < len(s) && strings.IndexByte(" \t\n;", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return ""
		}
		if !address() {
			return "the sed script cannot be read"
		}
		skipSpace()
		if i < len(s) && s[i] == ',' {
			i++
			skipSpace()
			if i < len(s) && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !address() {
				return "the sed script cannot be read"
			}
			skipSpace()
		}
		for i < len(s) && (s[i] == '!' || s[i] == ' ') {
			i++
		}
		if i >= len(s) {
			return ""
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case '#', ':', 'r', 'R', 'b', 't', 'T', 'v':
			// Comments, labels, reads and branches run to the end of the
			// line (labels also to ';' in GNU sed: harmless either way).
			if cmd == '#' || cmd == 'r' || cmd == 'R' {
				toEOL()
			} else {
				for i < len(s) && s[i] != '\n' && s[i] != ';' {
					i++
				}
			}
		case 'q', 'Q', 'l', 'L':
			skipSpace()
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case 'a', 'i', 'c':
			toEOLCont()
		case 'w', 'W':
			return "sed w writes to a file"
		case 'e':
			return "sed e runs a command"
		case 's', 'y':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				return "the sed script cannot be read"
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return "the sed script cannot be read"
			}
			if cmd == 'y' {
				continue
			}
			for i < len(s) && strings.IndexByte("gpiImM0123456789ew", s[i]) >= 0 {
				switch s[i] {
				case 'w':
					return "sed s///w writes to a file"
				case 'e':
					return "sed s///e runs the pattern space as a command"
				}
				i++
			}
		default:
			return "sed command " + string(cmd) + " is not judged"
		}
	}
}

// checkAwk accepts awk programs given inline that contain no system(), no
// pipes and no output redirection. Comparisons with '>' are asked for too:
// the text check cannot tell them from redirections.
func checkAwk(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	i := 0
	for ; i < len(args); i++ {
		a := analyze(args[i])
		if !a.optionSafe() {
			c.ask(n, "argument `%s` of %s is expanded at run time", c.snippet(args[i]), name)
			return
		}
		t := a.text
		switch {
		case !a.static || !strings.HasPrefix(t, "-") || t == "-":
			goto program
		case t == "--":
			i++
			goto program
		case t == "-F" || t == "-v":
			i++
		case strings.HasPrefix(t, "-F") || strings.HasPrefix(t, "-v"):
		default:
			c.ask(n, "%s %s is not judged (program files, extensions, includes)", name, t)
			return
		}
	}
program:
	if i >= len(args) {
		return
	}
	p := analyze(args[i])
	if !p.static {
		c.ask(n, "the %s program is computed at run time", name)
		return
	}
	if why := awkRisk(p.text); why != "" {
		c.ask(n, "%s", why)
	}
}

func awkRisk(prog string) string {
	// Drop string literals: "a|b" and "x > y" inside quotes are harmless.
	var b strings.Builder
	inStr := false
	for i := 0; i < len(prog); i++ {
		ch := prog[i]
		switch {
		case inStr && ch == '\\':
			i++
		case ch == '"':
			inStr = !inStr
		case !inStr:
			b.WriteByte(ch)
		}
	}
	code := b.String()
	code = strings.ReplaceAll(code, "||", " ")
	code = strings.ReplaceAll(code, ">=", " ")
	switch {
	case strings.Contains(code, "system"):
		return "awk system() runs a command"
	case strings.Contains(code, "|"):
		return "awk pipes run commands"
	case strings.Contains(code, ">"):
		return "awk > may redirect output to a file"
	case strings.Contains(code, "@"):
		return "awk @ directives load code"
	}
	return ""
}
