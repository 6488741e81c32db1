package cli

import (
	"bytes"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// columns aligns tab-separated cells like text/tabwriter (two spaces
// between columns, the last cell of a line not padded), measuring each
// cell by the columns a terminal gives it: emoji and East Asian wide
// characters take two, combining marks, variation selectors and joiners
// none, and colour escapes none, so a library icon does not shift the
// columns after it.
type columns struct {
	w   io.Writer
	buf bytes.Buffer
}

func newColumns(w io.Writer) *columns { return &columns{w: w} }

// Write buffers p until Flush.
func (c *columns) Write(p []byte) (int, error) { return c.buf.Write(p) }

// Flush writes the buffered lines with their cells aligned.
func (c *columns) Flush() error {
	text := strings.TrimSuffix(c.buf.String(), "\n")
	c.buf.Reset()
	if text == "" {
		return nil
	}
	var rows [][]string
	var widths []int
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(line, "\t")
		rows = append(rows, cells)
		for i, cell := range cells[:len(cells)-1] {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(cell))
		}
	}
	var out strings.Builder
	for _, cells := range rows {
		for i, cell := range cells {
			out.WriteString(cell)
			if i < len(cells)-1 {
				out.WriteString(strings.Repeat(" ", widths[i]-displayWidth(cell)+2))
			}
		}
		out.WriteByte('\n')
	}
	_, err := io.WriteString(c.w, out.String())
	return err
}

// displayWidth is the number of terminal columns s takes.
func displayWidth(s string) int {
	n, last, joined := 0, 0, false
	for i := 0; i < len(s); {
		if s[i] == 0x1b { // a CSI escape: ESC [ ... final byte
			j := i + 1
			if j < len(s) && s[j] == '[' {
				j++
				for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
					j++
				}
			}
			i = j + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case joined:
			joined = false // the rest of a ZWJ sequence: one emoji
		case r == 0xfe0f && last == 1:
			n++ // VS16 asks for the emoji form of a narrow symbol
			last = 2
		default:
			w := runeWidth(r)
			n += w
			if w > 0 {
				last = w
			}
		}
		if r == 0x200d {
			joined = true
		}
	}
	return n
}

// runeWidth is the number of terminal columns r takes.
func runeWidth(r rune) int {
	switch {
	case r == 0x200d, r >= 0xfe00 && r <= 0xfe0f, r >= 0x1f3fb && r <= 0x1f3ff,
		unicode.Is(unicode.Mn, r), unicode.Is(unicode.Me, r), unicode.IsControl(r):
		return 0 // joiners, variation selectors, skin tones, combining marks
	case r >= 0x1f000 && r <= 0x1faff:
		return 2 // the emoji planes (pictographs, symbols, flags)
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}
