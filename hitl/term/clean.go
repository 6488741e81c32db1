package term

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// clean makes text that came from a tool safe to print on a terminal: a
// tool must not be able to move the cursor, clear the screen, recolour or
// reorder the prompt (escape sequences, other control characters,
// bidirectional overrides, line separators) to make the operator approve something else
// than what they read. Such characters are shown escaped (\x1b, \u202e);
// a tab becomes four spaces; newlines are kept when multiline is set and
// shown as \n otherwise.
func clean(s string, multiline bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' && multiline:
			b.WriteByte('\n')
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0x200e || r == 0x200f || r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// truncate returns the first n characters of s followed by "..." when s
// is longer, as the seeds show a confirmation's source.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "..."
		}
		i++
	}
	return s
}

// fit cuts a line of text to width columns, counting one per character
// (wide characters may overflow; the select list still redraws right,
// since it moves by lines it wrote, not by columns).
func fit(s string, width int) string {
	if width <= 1 || utf8.RuneCountInString(s) < width {
		return s
	}
	r := []rune(s)
	return string(r[:width-2]) + "…"
}
