package pysrc

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lcptools/lcp/pysrc/pyval"
)

// This file emulates the Python str methods and re patterns that SPEC §5
// is written in: str.isspace, str.strip, str.splitlines, str.lower,
// str.expandtabs, inspect.cleandoc (3.12), and the parameter-doc regex with
// Unicode \d and \s.

// isSpace is Python's str.isspace for one character: bidirectional class
// WS, B or S, or category Zs.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyStrip is Python's str.strip() with no argument.
func pyStrip(s string) string { return strings.TrimFunc(s, isSpace) }

func pyLStrip(s string) string { return strings.TrimLeftFunc(s, isSpace) }

// isLineBoundary reports the characters str.splitlines splits on.
func isLineBoundary(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// pySplitLines is Python's str.splitlines() (without keepends).
func pySplitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isLineBoundary(r) {
			i += n
			continue
		}
		lines = append(lines, s[start:i])
		i += n
		if r == '\r' && i < len(s) && s[i] == '\n' {
			i++
		}
		start = i
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// pyLower is Python's str.lower(): full case mapping. The only
// unconditional lowercase mapping of SpecialCasing.txt that differs from
// the simple one is U+0130 (İ -> i̇); the conditional final sigma is also
// applied.
func pyLower(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(s)
	var final []bool // final[i]: rs[i] is a capital sigma in final position
	for i, r := range rs {
		if r == 0x3a3 && final == nil {
			final = finalSigmas(rs)
		}
		switch {
		case r < 0x80:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteRune(r)
		case r == 0x130:
			b.WriteString("i\u0307")
		case r == 0x3a3 && final[i]:
			b.WriteRune(0x3c2)
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func isCased(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }

func isCaseIgnorable(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk) ||
		r == '\'' || r == '.' || r == ':' || r == 0xb7 || r == 0x2019
}

// finalSigmas evaluates the Final_Sigma condition for every capital
// sigma in linear time: preceded by a cased letter (case-ignorable ones
// skipped) and not followed by one.
func finalSigmas(rs []rune) []bool {
	out := make([]bool, len(rs))
	before := make([]bool, len(rs)) // a cased letter precedes, ignorables skipped
	seen := false
	for i, r := range rs {
		before[i] = seen
		if !isCaseIgnorable(r) {
			seen = isCased(r)
		}
	}
	seen = false
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		if r == 0x3a3 {
			out[i] = before[i] && !seen
		}
		if !isCaseIgnorable(r) {
			seen = isCased(r)
		}
	}
	return out
}

// expandTabs is Python's str.expandtabs(8): the column restarts after
// "\n" and "\r" and counts characters.
func expandTabs(s string) string {
	if strings.IndexByte(s, '\t') < 0 {
		return s
	}
	var b strings.Builder
	col := 0
	for i := 0; i < len(s); {
		r, n := pyval.DecodeChar(s[i:])
		c := s[i : i+n]
		i += n
		switch r {
		case '\t':
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
		case '\n', '\r':
			b.WriteString(c)
			col = 0
		default:
			b.WriteString(c)
			col++
		}
	}
	return b.String()
}

// cleandoc is inspect.cleandoc of Python 3.12: tabs expanded, lines split
// on "\n", the first line's leading white space removed, the common
// indentation of the other non-blank lines removed, leading and trailing
// empty lines dropped.
func cleandoc(doc string) string {
	lines := strings.Split(expandTabs(doc), "\n")
	margin := -1
	for _, line := range lines[1:] {
		content := utf8.RuneCountInString(pyLStrip(line))
		if content > 0 {
			indent := utf8.RuneCountInString(line) - content
			if margin < 0 || indent < margin {
				margin = indent
			}
		}
	}
	lines[0] = pyLStrip(lines[0])
	if margin >= 0 {
		for i := 1; i < len(lines); i++ {
			lines[i] = dropRunes(lines[i], margin)
		}
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	return strings.Join(lines, "\n")
}

func dropRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[i:]
		}
		n--
	}
	return ""
}

// description is SPEC §5's rule: the first paragraph of the stripped
// cleaned docstring.
func description(doc string) string {
	if doc == "" {
		return noDescription
	}
	d := pyStrip(doc)
	if i := strings.Index(d, "\n\n"); i >= 0 {
		d = d[:i]
	}
	return pyStrip(d)
}

const noDescription = "No description provided."

// pySpace is the character class of Python's \s for str patterns.
const pySpace = `[\t\n\v\f\r \x1c-\x1f\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

// paramDocRE is `^(?:[-\*\d\.]+\s*)?([a-zA-Z0-9_]+)\s*(?:\(([^)]+)\))?\s*[:\-]\s*(.+)`
// with Python's Unicode \d and \s. Go's regexp picks the same submatches
// as a backtracking engine (leftmost-first).
var paramDocRE = regexp.MustCompile(`^(?:[-\*\p{Nd}\.]+` + pySpace + `*)?([a-zA-Z0-9_]+)` + pySpace + `*(?:\(([^)]+)\))?` + pySpace + `*[:\-]` + pySpace + `*(.+)`)

// paramDocs extracts the parameter descriptions of a cleaned docstring.
func paramDocs(doc string) map[string]string {
	if doc == "" {
		return nil
	}
	var docs map[string]string
	for _, line := range pySplitLines(doc) {
		if !strings.ContainsAny(line, ":-") {
			continue // the pattern needs a ':' or '-'
		}
		line = pyStrip(line)
		m := paramDocRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if docs == nil {
			docs = map[string]string{}
		}
		docs[m[1]] = pyStrip(m[3])
	}
	return docs
}

// jsonType is SPEC §5's annotation rule.
func jsonType(annotation string) string {
	if isASCII(annotation) {
		return jsonTypeASCII(annotation)
	}
	a := pyLower(annotation)
	switch {
	case strings.Contains(a, "int"):
		return "integer"
	case strings.Contains(a, "float") || strings.Contains(a, "number"):
		return "number"
	case strings.Contains(a, "bool"):
		return "boolean"
	case strings.Contains(a, "list") || strings.Contains(a, "array"):
		return "array"
	case strings.Contains(a, "dict") || strings.Contains(a, "object"):
		return "object"
	}
	return "string"
}

// jsonTypeASCII is jsonType for ASCII text, without allocating.
func jsonTypeASCII(a string) string {
	switch {
	case containsFold(a, "int"):
		return "integer"
	case containsFold(a, "float") || containsFold(a, "number"):
		return "number"
	case containsFold(a, "bool"):
		return "boolean"
	case containsFold(a, "list") || containsFold(a, "array"):
		return "array"
	case containsFold(a, "dict") || containsFold(a, "object"):
		return "object"
	}
	return "string"
}

// containsFold reports whether the ASCII text s contains the lower-case
// ASCII needle, ignoring the case of s.
func containsFold(s, needle string) bool {
	for i := 0; i+len(needle) <= len(s); i++ {
		j := 0
		for ; j < len(needle); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != needle[j] {
				break
			}
		}
		if j == len(needle) {
			return true
		}
	}
	return false
}

// stripQuotes is Python's str.strip("'\"").
func stripQuotes(s string) string { return strings.Trim(s, `'"`) }
