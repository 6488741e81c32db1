package shell

import (
	"errors"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// checkSed accepts sed when its script runs no command (e, s///e), the
// files it writes (w, W, s///w) and edits in place (-i) are judged like
// any write, and an in-place backup suffix keeps backups beside their
// file. Scripts read from a file (-f) are not judged. The options are
// read as GNU sed reads them: -i takes its suffix attached (-in is -i with
// the suffix "n", not -i -n), --in-place only with '='.
func checkSed(c *classifier, n syntax.Node, name string, args []*syntax.Word) {
	o, ok := c.sedOptions(n, args)
	if !ok {
		return
	}
	if o.file {
		c.ask(n, "sed -f runs a script from a file, which is not judged")
		return
	}
	files := o.operands
	if len(o.scripts) == 0 {
		if len(files) == 0 {
			return
		}
		o.scripts, files = files[:1], files[1:]
	}
	if !o.sandbox {
		var text []string
		for _, s := range o.scripts {
			if !s.static {
				c.ask(n, "the sed script is computed at run time")
				return
			}
			text = append(text, s.value)
		}
		c.sedScript(n, strings.Join(text, "\n"))
	}
	if !o.inPlace {
		return
	}
	c.ask(n, "sed -i rewrites existing files")
	switch {
	case strings.Contains(o.suffix, "/"):
		c.ask(n, "the backup suffix %q puts sed's backups in another folder", o.suffix)
	case o.follow:
		c.ask(n, "sed -i --follow-symlinks edits the files links point to")
	}
	for _, f := range files {
		c.writeArg(n, f)
	}
}

// sedOpts are the options of one sed command line.
type sedOpts struct {
	scripts, operands []arg
	file, inPlace     bool
	sandbox, follow   bool
	suffix            string
}

// sedOptions reads sed's options as GNU getopt does with sed's option
// string "bsnrzuEe:f:l:i::V:" (-i's argument is optional and attached).
func (c *classifier) sedOptions(n syntax.Node, args []*syntax.Word) (sedOpts, bool) {
	var o sedOpts
	for i := 0; i < len(args); i++ {
		w := analyze(args[i])
		if !w.optionSafe() {
			c.ask(n, "argument `%s` of sed is expanded at run time and could become an option", c.snippet(args[i]))
			return o, false
		}
		t := w.text
		switch {
		case !w.static || t == "-" || !strings.HasPrefix(t, "-"):
			o.operands = append(o.operands, arg{value: t, word: args[i], static: w.static})
		case t == "--":
			for _, rest := range args[i+1:] {
				r := analyze(rest)
				o.operands = append(o.operands, arg{value: r.text, word: rest, static: r.static})
			}
			return o, true
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t, "=")
			a := arg{opt: name}
			switch {
			case a.long("expression", "file", "line-length"):
				if !eq && i+1 < len(args) {
					i++
					v := analyze(args[i])
					val, eq = v.text, v.static
				}
				if a.long("file") {
					o.file = true
				} else if a.long("expression") {
					o.scripts = append(o.scripts, arg{value: val, static: eq})
				}
			case a.long("in-place"):
				o.inPlace, o.suffix = true, val
			case a.long("sandbox"):
				o.sandbox = true
			case a.long("follow-symlinks"):
				o.follow = true
			}
		default:
			i = o.shortOptions(t, args, i)
		}
	}
	return o, true
}

// shortOptions reads one cluster of short options; it returns the index
// of the last word it used.
func (o *sedOpts) shortOptions(t string, args []*syntax.Word, i int) int {
	for j := 1; j < len(t); j++ {
		switch t[j] {
		case 'i':
			o.inPlace, o.suffix = true, t[j+1:]
			return i
		case 'e', 'f', 'l':
			val, static := t[j+1:], true
			if val == "" && i+1 < len(args) {
				i++
				v := analyze(args[i])
				val, static = v.text, v.static
			}
			switch t[j] {
			case 'e':
				o.scripts = append(o.scripts, arg{value: val, static: static})
			case 'f':
				o.file = true
			}
			return i
		}
	}
	return i
}

// sedScript judges a script: commands that run programs ask; files it
// writes are judged as writes and files it reads as reads.
func (c *classifier) sedScript(n syntax.Node, script string) {
	cmds, err := parseSed(script)
	if err != nil {
		c.ask(n, "the sed script cannot be read (%v)", err)
		return
	}
	for _, cmd := range cmds {
		switch {
		case cmd.name == 'e' || strings.ContainsRune(cmd.flags, 'e'):
			c.ask(n, "sed e runs a command")
		case cmd.name == 'w' || cmd.name == 'W' || cmd.file != "":
			f := cmd.file
			if f == "" {
				f = cmd.arg
			}
			c.writeArg(n, arg{value: f, static: true})
		case cmd.name == 'r' || cmd.name == 'R':
			if c.paths.sensitiveRead(cmd.arg) {
				c.ask(n, "reads credentials (%s)", cmd.arg)
			}
		}
	}
}

// sedCmd is one command of a sed script.
type sedCmd struct {
	name  byte
	arg   string // label, text, file name of r/R/w/W, or the command of e
	flags string // the flags of s
	file  string // the file of s///w
}

// sedParser reads a script the way GNU sed's compile.c does: whitespace
// and ';' between commands, addresses, '!', then one command with its
// own rules for where it ends (a label at whitespace or ';', a file
// name, e's command and a/i/c's text at the end of the line).
type sedParser struct {
	s    string
	i    int
	cmds []sedCmd
}

var errSedEnd = errors.New("unexpected end of the script")

// parseSed parses a GNU sed script into its commands.
func parseSed(script string) ([]sedCmd, error) {
	p := &sedParser{s: script}
	for {
		p.skip(" \t\n;")
		if p.i >= len(p.s) {
			return p.cmds, nil
		}
		if err := p.addresses(); err != nil {
			return nil, err
		}
		if err := p.command(); err != nil {
			return nil, err
		}
	}
}

func (p *sedParser) skip(set string) {
	for p.i < len(p.s) && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *sedParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// addresses reads up to two addresses and the '!'s after them.
func (p *sedParser) addresses() error {
	if err := p.address(); err != nil {
		return err
	}
	p.skip(" \t")
	if p.peek() == ',' {
		p.i++
		p.skip(" \t")
		if c := p.peek(); c == '+' || c == '~' {
			p.i++
		}
		if err := p.address(); err != nil {
			return err
		}
	}
	p.skip(" \t")
	for p.peek() == '!' {
		p.i++
		p.skip(" \t")
	}
	return nil
}

func (p *sedParser) address() error {
	switch c := p.peek(); {
	case c >= '0' && c <= '9':
		for c := p.peek(); c >= '0' && c <= '9' || c == '~'; c = p.peek() {
			p.i++
		}
	case c == '$':
		p.i++
	case c == '/' || c == '\\':
		if c == '\\' {
			p.i++
		}
		if p.i >= len(p.s) || p.s[p.i] == '\n' || p.s[p.i] == '\\' {
			return errSedEnd
		}
		delim := p.s[p.i]
		p.i++
		if _, err := p.delimited(delim); err != nil {
			return err
		}
		for c := p.peek(); c == 'I' || c == 'M'; c = p.peek() {
			p.i++
		}
	}
	return nil
}

// delimited reads up to an unescaped delim (a newline ends it early,
// unless escaped) and returns what it read.
func (p *sedParser) delimited(delim byte) (string, error) {
	start := p.i
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '\\':
			p.i += 2
			continue
		case c == delim:
			p.i++
			return p.s[start : p.i-1], nil
		case c == '\n':
			return "", errors.New("a newline inside a regular expression or replacement")
		}
		p.i++
	}
	return "", errSedEnd
}

// label reads a label: up to whitespace or ';'.
func (p *sedParser) label() string {
	p.skip(" \t")
	start := p.i
	for p.i < len(p.s) && strings.IndexByte(" \t\n;", p.s[p.i]) < 0 {
		p.i++
	}
	return p.s[start:p.i]
}

// toLineEnd reads the rest of the line (a file name, e's command).
func (p *sedParser) toLineEnd() string {
	p.skip(" \t")
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != '\n' {
		p.i++
	}
	return p.s[start:p.i]
}

// text reads the text of a, i and c: to the end of the line, a
// backslash before the newline going on to the next.
func (p *sedParser) text() string {
	p.skip(" \t")
	if p.peek() == '\\' {
		p.i++
		p.skip(" \t")
		if p.peek() == '\n' {
			p.i++
		}
	}
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != '\n' {
		if p.s[p.i] == '\\' {
			p.i++
		}
		p.i++
	}
	if p.i > len(p.s) {
		p.i = len(p.s)
	}
	return p.s[start:p.i]
}

// endOfCommand checks that nothing but blanks, ';', '}', '#' or a newline
// follows a command.
func (p *sedParser) endOfCommand() error {
	p.skip(" \t")
	if c := p.peek(); c != 0 && c != ';' && c != '\n' && c != '}' && c != '#' {
		return errors.New("extra characters after a command")
	}
	return nil
}

func (p *sedParser) command() error {
	if p.i >= len(p.s) {
		return errSedEnd
	}
	c := sedCmd{name: p.s[p.i]}
	p.i++
	var err error
	switch c.name {
	case '{':
		// A block: its first command may follow at once.
	case '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		err = p.endOfCommand()
	case '#':
		p.toLineEnd()
	case ':', 'b', 't', 'T', 'v':
		c.arg = p.label()
	case 'q', 'Q', 'l', 'L':
		p.skip(" \t")
		for c := p.peek(); c >= '0' && c <= '9'; c = p.peek() {
			p.i++
		}
		err = p.endOfCommand()
	case 'a', 'i', 'c':
		c.arg = p.text()
	case 'r', 'R', 'w', 'W', 'e':
		c.arg = p.toLineEnd()
	case 's':
		err = p.substitute(&c)
	case 'y':
		err = p.transliterate()
	default:
		err = errors.New("unknown command " + string(c.name))
	}
	if err != nil {
		return err
	}
	p.cmds = append(p.cmds, c)
	return nil
}

func (p *sedParser) substitute(c *sedCmd) error {
	if p.i >= len(p.s) || p.s[p.i] == '\n' || p.s[p.i] == '\\' {
		return errors.New("s needs a delimiter")
	}
	delim := p.s[p.i]
	p.i++
	if _, err := p.delimited(delim); err != nil {
		return err
	}
	if _, err := p.delimited(delim); err != nil {
		return err
	}
	start := p.i
	for p.i < len(p.s) {
		switch ch := p.s[p.i]; {
		case ch == 'w':
			c.flags = p.s[start:p.i]
			p.i++
			c.file = p.toLineEnd()
			return nil
		case strings.IndexByte("gpiImMe0123456789", ch) >= 0:
			p.i++
		case ch == ';' || ch == '\n' || ch == '}' || ch == '#' || ch == ' ' || ch == '\t':
			c.flags = p.s[start:p.i]
			return p.endOfCommand()
		default:
			return errors.New("unknown s flag " + string(ch))
		}
	}
	c.flags = p.s[start:]
	return nil
}

func (p *sedParser) transliterate() error {
	if p.i >= len(p.s) || p.s[p.i] == '\n' || p.s[p.i] == '\\' {
		return errors.New("y needs a delimiter")
	}
	delim := p.s[p.i]
	p.i++
	for range 2 {
		if _, err := p.delimited(delim); err != nil {
			return err
		}
	}
	return p.endOfCommand()
}

// sedRisk says why a script is risky for commands that only read and
// print (the e command and s///e run programs; w, W and s///w write
// files), or "" when it is not. The writes are judged by checkSed; this is
// the short answer for tests and for callers without a workspace.
func sedRisk(script string) string {
	cmds, err := parseSed(script)
	if err != nil {
		return "the sed script cannot be read"
	}
	for _, c := range cmds {
		switch {
		case c.name == 'e':
			return "sed e runs a command"
		case strings.ContainsRune(c.flags, 'e'):
			return "sed s///e runs the pattern space as a command"
		case c.name == 'w' || c.name == 'W':
			return "sed w writes to a file"
		case c.file != "":
			return "sed s///w writes to a file"
		}
	}
	return ""
}
