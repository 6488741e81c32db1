package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word is what can be known about a shell word without running anything.
type word struct {
	node *syntax.Word
	// text is the word's value with quotes and escapes removed. It is exact
	// when static is true; otherwise it holds the literal parts only.
	text string
	// static: no expansion of any kind (parameter, command, arithmetic,
	// process substitution, glob, brace, tilde, $'...').
	static bool
	// tilde: the word starts with an unquoted ~ and is otherwise static.
	tilde bool
	// splits: an unquoted expansion (or "$@") can turn the word into
	// several words, any of which could start with '-'.
	splits bool
	// lead is the literal text before the first expansion or glob.
	lead string
}

// optionSafe reports whether the word can only ever be one argument that is
// either its static text or something that cannot start with '-'. Words
// that fail this may smuggle options into a command whose options are
// checked.
func (w word) optionSafe() bool {
	if w.static {
		return true
	}
	return !w.splits && w.lead != "" && w.lead[0] != '-'
}

// analyze describes w.
func analyze(w *syntax.Word) word {
	a := analyzer{res: word{node: w, static: true}, leadOpen: true}
	for i, part := range w.Parts {
		a.part(part, i == 0, false)
	}
	a.res.text = a.text.String()
	if a.res.tilde && a.res.static {
		// Only the tilde is dynamic; keep static false so that callers
		// that need the exact text resolve the tilde themselves.
		a.res.static = false
	}
	return a.res
}

type analyzer struct {
	res      word
	text     strings.Builder
	leadOpen bool // still collecting the lead
}

func (a *analyzer) lit(s string) {
	a.text.WriteString(s)
	if a.leadOpen {
		a.res.lead += s
	}
}

// dynamic marks the word as not static from here on.
func (a *analyzer) dynamic(splits bool) {
	a.res.static = false
	a.leadOpen = false
	if splits {
		a.res.splits = true
	}
}

func (a *analyzer) part(p syntax.WordPart, first, quoted bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		if quoted {
			a.lit(unescapeDouble(p.Value))
			return
		}
		a.unquotedLit(p.Value, first)
	case *syntax.SglQuoted:
		if p.Dollar {
			// $'...' has its own escapes ($'\x2d' is '-'): not judged.
			a.dynamic(false)
			return
		}
		a.lit(p.Value)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			a.part(q, false, true)
		}
	case *syntax.ParamExp:
		// "$@" and "${a[@]}" become several words even when quoted.
		many := p.Param != nil && (p.Param.Value == "@" || p.Param.Value == "*") && !quoted
		if p.Param != nil && p.Param.Value == "@" {
			many = true
		}
		if idx, ok := p.Index.(*syntax.Word); ok && (idx.Lit() == "@" || (!quoted && idx.Lit() == "*")) {
			many = true
		}
		a.dynamic(!quoted || many)
	case *syntax.CmdSubst, *syntax.ArithmExp:
		a.dynamic(!quoted)
	case *syntax.ProcSubst:
		// Expands to a /dev/fd path: one word, never an option.
		a.res.static = false
		if a.leadOpen && a.res.lead == "" {
			a.res.lead = "/dev/fd/"
		}
		a.leadOpen = false
	default: // ExtGlob, BraceExp, and anything new
		a.dynamic(false)
	}
}

// unquotedLit handles an unquoted literal: backslash escapes, globs, brace
// expansion and a leading tilde.
func (a *analyzer) unquotedLit(s string, first bool) {
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			a.lit(b.String())
			b.Reset()
		}
	}
	// A '[' is a glob only if a ']' follows; a '{' may expand only if the
	// literal has a '}' after it and a ',' or "..". Both are decided once
	// per literal to stay linear.
	lastClose := strings.LastIndexByte(s, ']')
	braces := strings.LastIndexByte(s, '}')
	if !strings.Contains(s, ",") && !strings.Contains(s, "..") {
		braces = -1
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
			}
		case c == '*' || c == '?' || (c == '[' && i < lastClose) || (c == '{' && i < braces):
			flush()
			a.text.WriteByte(c)
			a.dynamic(false)
		case c == '~' && first && i == 0:
			a.res.tilde = true
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	flush()
}

// unescapeDouble removes the backslashes that are special inside double
// quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isNumber reports whether s is an integer literal as bash arithmetic reads
// it (decimal, 0x hex, octal, base#digits).
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		s = h
		if s == "" {
			return false
		}
		for _, c := range s {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	base, digits, hasBase := strings.Cut(s, "#")
	if hasBase {
		if !isDigits(base) || digits == "" {
			return false
		}
		for _, c := range digits {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '@' || c == '_') {
				return false
			}
		}
		return true
	}
	return isDigits(s)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
