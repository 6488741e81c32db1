package pysrc

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/parser"
	"github.com/lcptools/lcp/pysrc/pyval"
)

// fallbackDefRE is `^\s*(async\s+)?def\s+(tool_\w+)\s*\(` with Python's
// Unicode \s and \w.
var fallbackDefRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^` + pySpace + `*(async` + pySpace + `+)?def` + pySpace + `+(tool_[\p{L}\p{N}_]+)` + pySpace + `*\(`)
})

// FallbackTools is the extractor used for files that are not valid
// Python. It reads the text line by line and never fails: every line that
// matches `^\s*(async\s+)?def\s+(tool_\w+)\s*\(` is a tool (prompt
// providers excepted). The parameters are the comma-separated names up to
// the matching ')' (possibly over several lines), each typed from a simple
// annotation and optional when it has a default; the description comes
// from a triple-quoted string right after the def line's colon. Only the
// names and the fallback mark are dependable.
func FallbackTools(src string) []*Tool {
	f := &File{}
	fallback(f, src)
	return f.Tools
}

func fallback(f *File, src string) {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	// Lines as Python's str.splitlines cuts them (form feeds, U+2028...
	// end lines too), with the offset of each.
	var lines []string
	var offs []int
	start := 0
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRuneInString(src[i:])
		if isLineBoundary(r) {
			lines = append(lines, src[start:i])
			offs = append(offs, start)
			start = i + n
		}
		i += n
	}
	if start < len(src) {
		lines = append(lines, src[start:])
		offs = append(offs, start)
	}
	for i, line := range lines {
		m := fallbackDefRE().FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		name := line[m[4]:m[5]]
		if IsPromptName(name) {
			continue
		}
		t := &Tool{Name: name, Line: i + 1, Async: m[2] >= 0, ParsedViaRegexFallback: true,
			TopLevel: strings.HasPrefix(line, "def") || strings.HasPrefix(line, "async")}
		start := offs[i] + m[1] // just after '('
		params, end := fallbackParams(src, start)
		doc := fallbackDoc(src, end)
		t.Description = description(doc)
		docs := paramDocs(doc)
		for _, p := range params {
			t.Declared = append(t.Declared, p.Name)
			if strings.HasPrefix(p.Name, "**") {
				t.AcceptsKwargs = true
				continue
			}
			if strings.HasPrefix(p.Name, "*") || IsHiddenParam(p.Name) {
				continue
			}
			if d, ok := docs[p.Name]; ok {
				p.Description = d
			} else {
				p.Description = "Parameter '" + p.Name + "'"
			}
			if p.Default == nil {
				t.Required = append(t.Required, p.Name)
			}
			t.Params = append(t.Params, p)
		}
		f.Tools = append(f.Tools, t)
	}
}

// fallbackParams reads the parameter list starting just after '(' up to
// the matching ')' (brackets counted, strings skipped), and returns the
// parameters and the offset after the ')'.
func fallbackParams(src string, start int) ([]Param, int) {
	depth := 0
	i := start
	var parts []string
	last := start
	// A parameter list that never closes is read for at most maxParamText
	// bytes, so that a file of unclosed defs stays linear.
	limit := len(src)
	if limit-start > maxParamText {
		limit = start + maxParamText
	}
	for i < limit {
		c := src[i]
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				parts = append(parts, src[last:i])
				return parseFallbackParams(parts), i + 1
			}
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, src[last:i])
				last = i + 1
			}
		case '\'', '"':
			// skip a simple string literal on the same line
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		case '\n':
			// a def whose parameters never close: stop at a blank line
			if strings.HasPrefix(src[i:], "\n\n") {
				parts = append(parts, src[last:i])
				return parseFallbackParams(parts), i
			}
		}
		i++
	}
	if last > limit {
		last = limit
	}
	parts = append(parts, src[last:limit])
	return parseFallbackParams(parts), limit
}

const maxParamText = 16 << 10

func parseFallbackParams(parts []string) []Param {
	var params []Param
	for _, part := range parts {
		part = pyStrip(part)
		if part == "" || part == "/" || part == "*" {
			continue
		}
		def := ""
		hasDef := false
		if i := strings.IndexByte(part, '='); i >= 0 {
			def, part, hasDef = pyStrip(part[i+1:]), pyStrip(part[:i]), true
		}
		ann := ""
		if i := strings.IndexByte(part, ':'); i >= 0 {
			ann, part = pyStrip(part[i+1:]), pyStrip(part[:i])
		}
		name := part
		if !isFallbackName(strings.TrimLeft(name, "*")) {
			continue
		}
		p := Param{Name: name, Type: "string"}
		if ann != "" {
			p.Type = jsonType(ann)
		}
		if hasDef {
			p.Default = fallbackDefault(def)
		}
		params = append(params, p)
	}
	return params
}

func isFallbackName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0x80) {
			return false
		}
	}
	return true
}

// fallbackDefault evaluates a default's text with the real parser when it
// is a valid expression, else keeps the text.
func fallbackDefault(text string) json.RawMessage {
	if mod, err := parser.ParseFile("", []byte(text+"\n")); err == nil && len(mod.Body) == 1 {
		if es, ok := mod.Body[0].(*ast.ExprStmt); ok {
			return defaultJSON(es.Value)
		}
	}
	return json.RawMessage(pyval.JSONString(stripQuotes(text)))
}

// fallbackDoc returns the cleaned triple-quoted string that follows the
// header's colon (only white space and comments in between), or "".
func fallbackDoc(src string, from int) string {
	// the colon must be on the header's last line (after a return
	// annotation, maybe)
	line := src[from:]
	if nl := strings.IndexByte(line, '\n'); nl >= 0 {
		line = line[:nl]
	}
	i := strings.IndexByte(line, ':')
	if i < 0 {
		return ""
	}
	j := from + i + 1
	for j < len(src) {
		c := src[j]
		if c == ' ' || c == '\t' || c == '\n' || c == '\f' {
			j++
			continue
		}
		if c == '#' {
			for j < len(src) && src[j] != '\n' {
				j++
			}
			continue
		}
		break
	}
	rest := src[j:]
	k := 0
	for k < len(rest) && k < 2 && strings.ContainsRune("rRuU", rune(rest[k])) {
		k++
	}
	body := rest[k:]
	for _, q := range []string{`"""`, `'''`} {
		if strings.HasPrefix(body, q) {
			end := strings.Index(body[3:], q)
			if end < 0 {
				return ""
			}
			text := body[3 : 3+end]
			raw := k > 0 && strings.ContainsAny(rest[:k], "rR")
			if !raw {
				text = decodeEscapes(text)
			}
			return cleandoc(text)
		}
	}
	return ""
}

// decodeEscapes decodes the escapes of a str literal body, leaving it as
// is when they are invalid.
func decodeEscapes(s string) string {
	if mod, err := parser.ParseFile("", []byte(`"""`+s+`"""`+"\n")); err == nil && len(mod.Body) == 1 {
		if es, ok := mod.Body[0].(*ast.ExprStmt); ok {
			if c, ok := es.Value.(*ast.Constant); ok && c.Kind == ast.Str {
				return c.Str
			}
		}
	}
	return s
}
