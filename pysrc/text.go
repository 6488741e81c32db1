package pysrc

import (
	"iter"
	"regexp"
	"strings"
	"sync"
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

// asciiLineBoundary is isLineBoundary for the ASCII characters, as a
// table: pyLines asks it for every character of every docstring.
var asciiLineBoundary = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = isLineBoundary(rune(c))
	}
	return
}()

// asciiSpace is isSpace for the ASCII characters, as a table.
var asciiSpace = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = isSpace(rune(c))
	}
	return
}()

// pyLines yields the lines of Python's str.splitlines() (without
// keepends), without making the list.
func pyLines(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := 0
		for i := 0; i < len(s); {
			r, n := rune(s[i]), 1
			if r < utf8.RuneSelf {
				if !asciiLineBoundary[r] {
					i++
					continue
				}
			} else if r, n = utf8.DecodeRuneInString(s[i:]); !isLineBoundary(r) {
				i += n
				continue
			}
			if !yield(s[start:i]) {
				return
			}
			i += n
			if r == '\r' && i < len(s) && s[i] == '\n' {
				i++
			}
			start = i
		}
		if start < len(s) {
			yield(s[start:])
		}
	}
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
// empty lines dropped. It makes one string and no list of lines: every
// tool's docstring goes through it.
func cleandoc(doc string) string {
	doc = expandTabs(doc)
	first, rest, multi := strings.Cut(doc, "\n")
	first = pyLStrip(first)
	if !multi {
		return first
	}
	margin := -1
	for line := range strings.SplitSeq(rest, "\n") {
		if indent, blank := lineIndent(line); !blank && (margin < 0 || indent < margin) {
			margin = indent
		}
	}
	// The lines joined by "\n", without the empty ones at either end:
	// empty lines wait until a line with text follows them.
	var b strings.Builder
	b.Grow(len(doc))
	empty := 0
	add := func(line string) {
		switch {
		case line == "":
			if b.Len() > 0 {
				empty++
			}
			return
		case b.Len() > 0:
			for range empty + 1 {
				b.WriteByte('\n')
			}
		}
		b.WriteString(line)
		empty = 0
	}
	add(first)
	for line := range strings.SplitSeq(rest, "\n") {
		if margin >= 0 {
			line = dropRunes(line, margin)
		}
		add(line)
	}
	return b.String()
}

// lineIndent returns the number of characters of white space that start
// line, and whether that is all the line holds.
func lineIndent(line string) (indent int, blank bool) {
	i := 0
	for i < len(line) && line[i] < utf8.RuneSelf && asciiSpace[line[i]] {
		i++
	}
	switch {
	case i == len(line):
		return 0, true
	case line[i] < utf8.RuneSelf:
		return i, false // i ASCII spaces, then text
	}
	// a non-ASCII character, maybe a space: count as Python does
	content := utf8.RuneCountInString(pyLStrip(line))
	if content == 0 {
		return 0, true
	}
	return utf8.RuneCountInString(line) - content, false
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
var paramDocRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[-\*\p{Nd}\.]+` + pySpace + `*)?([a-zA-Z0-9_]+)` + pySpace + `*(?:\(([^)]+)\))?` + pySpace + `*[:\-]` + pySpace + `*(.+)`)
})

// paramDocs extracts the parameter descriptions of a cleaned docstring.
func paramDocs(doc string) map[string]string {
	if doc == "" {
		return nil
	}
	var docs map[string]string
	for line := range pyLines(doc) {
		if strings.IndexByte(line, ':') < 0 && strings.IndexByte(line, '-') < 0 {
			continue // the pattern needs a ':' or '-'
		}
		name, rest, ok := matchParamDoc(pyStrip(line))
		if !ok {
			continue
		}
		if docs == nil {
			docs = map[string]string{}
		}
		docs[name] = pyStrip(rest)
	}
	return docs
}

// matchParamDoc is paramDocRE().FindStringSubmatch(line)'s groups 1 and 3
// for one line, without the regexp engine (it was a tenth of the time of
// reading a file). The pattern's backtracking has few outcomes, tried
// here in the engine's order; FuzzMatchParamDoc holds the two together.
// Lines with a "\n" (which "." does not match) or that are not UTF-8 go
// to the regexp.
func matchParamDoc(line string) (name, rest string, ok bool) {
	if strings.IndexByte(line, '\n') >= 0 || !utf8.ValidString(line) {
		m := paramDocRE().FindStringSubmatch(line)
		if m == nil {
			return "", "", false
		}
		return m[1], m[3], true
	}
	// First with the prefix [-*\d.]+\s*, its run of [-*\d.] from the
	// longest down: after the whole run, \s* takes all the space (less
	// leaves a space where the name must start); after a part of it, the
	// name can only start with a digit of the run. The name takes the
	// whole run of [a-zA-Z0-9_] (less leaves a name character where \s*,
	// "(" or [:-] must come), so the rest depends only on where the name
	// ends: one try per end.
	pEnd := 0
	for pEnd < len(line) {
		r, n := utf8.DecodeRuneInString(line[pEnd:])
		if r != '-' && r != '*' && r != '.' && !unicode.IsDigit(r) {
			break
		}
		pEnd += n
	}
	lastEnd, lastRest, lastOK := -1, "", false
	for p := pEnd; p > 0; {
		start := p
		if p == pEnd {
			start = skipPySpace(line, p)
		}
		if end := nameEnd(line, start); end > start {
			if end != lastEnd {
				lastEnd = end
				lastRest, lastOK = afterParamName(line, end)
			}
			if lastOK {
				return line[start:end], lastRest, true
			}
		}
		_, n := utf8.DecodeLastRuneInString(line[:p])
		p -= n
	}
	// Then without the prefix.
	end := nameEnd(line, 0)
	if end == 0 {
		return "", "", false
	}
	if rest, ok := afterParamName(line, end); ok {
		return line[:end], rest, true
	}
	return "", "", false
}

// nameEnd is the end of the run of [a-zA-Z0-9_] at i.
func nameEnd(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			break
		}
		i++
	}
	return i
}

// skipPySpace is the end of the run of Python's \s at i.
func skipPySpace(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isPySpace(r) {
			break
		}
		i += n
	}
	return i
}

// isPySpace is pySpace, Python's \s for str patterns.
func isPySpace(r rune) bool {
	switch {
	case r == ' ', '\t' <= r && r <= '\r', 0x1c <= r && r <= 0x1f, r == 0x85, r == 0xa0, r == 0x1680,
		0x2000 <= r && r <= 0x200a, r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

// afterParamName matches \s*(?:\(([^)]+)\))?\s*[:\-]\s*(.+) at i and
// returns group 3. Every \s* takes its whole run (less leaves a space
// where "(", [:-] or the rest must come), except the last one when the
// line ends in space: it gives its last character back to (.+).
func afterParamName(s string, i int) (string, bool) {
	i = skipPySpace(s, i)
	if i < len(s) && s[i] == '(' {
		// [^)]+ takes everything up to the first ")", which must follow.
		if q := strings.IndexByte(s[i+1:], ')'); q > 0 {
			if rest, ok := afterParamType(s, i+1+q+1); ok {
				return rest, true
			}
		}
	}
	return afterParamType(s, i)
}

// afterParamType matches \s*[:\-]\s*(.+) at i and returns group 3.
func afterParamType(s string, i int) (string, bool) {
	i = skipPySpace(s, i)
	if i == len(s) || s[i] != ':' && s[i] != '-' {
		return "", false
	}
	j := skipPySpace(s, i+1)
	switch {
	case j < len(s):
		return s[j:], true
	case j > i+1:
		_, n := utf8.DecodeLastRuneInString(s[:j])
		return s[j-n:], true
	}
	return "", false
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
