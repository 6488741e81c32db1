package shell

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// checkAwk accepts awk programs given inline that run no command (system,
// pipes), load nothing (@include, @load) and write files only through a
// literal name judged like any write. The program is tokenized as awk
// reads it: strings, regular expression literals and comments cannot hide
// a call or a pipe.
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
	for _, f := range awkFindings(p.text) {
		switch {
		case f.write != "":
			c.writeArg(n, arg{value: f.write, static: true})
		case f.read != "":
			if c.paths.sensitiveRead(f.read) {
				c.ask(n, "reads credentials (%s)", f.read)
			}
		default:
			c.ask(n, "%s", f.why)
		}
	}
}

// awkFinding is one thing an awk program does beyond reading its input
// and printing: a reason to ask, or a file it writes or reads by name.
type awkFinding struct {
	why, write, read string
}

type awkTok struct {
	kind byte // 'i' identifier, 's' string, 'r' regex, 'n' number, ';' end of statement, 'o' operator
	text string
}

// awkFindings tokenizes an awk program and reports calls of system, pipes,
// directives, and the targets of output redirections and getline <.
func awkFindings(prog string) []awkFinding {
	toks, ok := awkTokens(prog)
	if !ok {
		return []awkFinding{{why: "the awk program cannot be read"}}
	}
	var out []awkFinding
	depth, inPrint := 0, false
	for i, t := range toks {
		next := awkTok{}
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		switch {
		case t.kind == ';' || t.text == "{" || t.text == "}":
			inPrint, depth = false, 0
		case t.text == "(":
			depth++
		case t.text == ")":
			depth--
		case t.kind == 'i' && t.text == "system":
			out = append(out, awkFinding{why: "awk system() runs a command"})
		case t.kind == 'i' && (t.text == "print" || t.text == "printf"):
			inPrint = true
		case t.text == "@":
			out = append(out, awkFinding{why: "awk @ directives load code"})
		case t.text == "|" || t.text == "|&":
			out = append(out, awkFinding{why: "awk pipes run commands"})
		case (t.text == ">" || t.text == ">>") && inPrint && depth == 0:
			if next.kind == 's' {
				out = append(out, awkFinding{write: next.text})
			} else {
				out = append(out, awkFinding{why: "awk writes to a file whose name is computed"})
			}
		case t.kind == 'i' && t.text == "getline":
			// getline [var] < file
			j := i + 1
			if next.kind == 'i' {
				j++
			}
			if j+1 < len(toks) && toks[j].text == "<" && toks[j+1].kind == 's' {
				out = append(out, awkFinding{read: toks[j+1].text})
			}
		}
	}
	return out
}

// awkTokens splits an awk program into tokens. A '/' starts a regular
// expression literal where an operand is expected, as awk's grammar has
// it.
func awkTokens(s string) ([]awkTok, bool) {
	var toks []awkTok
	operand := func() bool {
		if len(toks) == 0 {
			return false
		}
		t := toks[len(toks)-1]
		switch t.kind {
		case 'n', 's', 'r':
			return true
		case 'i':
			return !awkKeywords()[t.text]
		}
		return t.text == ")" || t.text == "]" || t.text == "$" || t.text == "++" || t.text == "--"
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i += 2 // a continued line
		case c == '\n' || c == ';':
			toks = append(toks, awkTok{kind: ';'})
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"':
			j, text, ok := awkString(s, i+1)
			if !ok {
				return nil, false
			}
			toks, i = append(toks, awkTok{kind: 's', text: text}), j
		case c == '/' && !operand():
			j, ok := awkRegex(s, i+1)
			if !ok {
				return nil, false
			}
			toks, i = append(toks, awkTok{kind: 'r'}), j
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			toks, i = append(toks, awkTok{kind: 'i', text: s[i:j]}), j
		case c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E' || s[j] == 'x' || s[j] >= 'a' && s[j] <= 'f') {
				j++
			}
			toks, i = append(toks, awkTok{kind: 'n'}), j
		default:
			op := string(c)
			for _, two := range []string{"||", "&&", ">>", "|&", "++", "--", "<=", ">=", "==", "!=", "+=", "-=", "*=", "/=", "%=", "^=", "**"} {
				if strings.HasPrefix(s[i:], two) {
					op = two
					break
				}
			}
			toks, i = append(toks, awkTok{kind: 'o', text: op}), i+len(op)
		}
	}
	return toks, true
}

// awkKeywords are identifiers after which a '/' starts a regex.
var awkKeywords = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"print": true, "printf": true, "return": true, "in": true, "if": true,
		"while": true, "for": true, "do": true, "else": true, "getline": true, "case": true}
})

// awkString reads a string literal's content from i (after the quote).
func awkString(s string, i int) (int, string, bool) {
	var b strings.Builder
	for i < len(s) {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				switch s[i+1] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(s[i+1])
				}
			}
			i += 2
		case '"':
			return i + 1, b.String(), true
		case '\n':
			return 0, "", false
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return 0, "", false
}

// awkRegex skips a regex literal from i (after the slash); a '/' inside a
// bracket expression does not end it.
func awkRegex(s string, i int) (int, bool) {
	bracket := false
	for i < len(s) {
		switch c := s[i]; {
		case c == '\\':
			i += 2
			continue
		case c == '[':
			bracket = true
		case c == ']':
			bracket = false
		case c == '/' && !bracket:
			return i + 1, true
		case c == '\n':
			return 0, false
		}
		i++
	}
	return 0, false
}
