package cli

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// The status line of a running call: a spinner, what runs, the elapsed
// time, and the progress the tool reported (a bar when it knows its total,
// its count otherwise) with its message. It is drawn on stderr, only on a
// terminal, and always as one line cut to the terminal's width, so that
// "\r" and "erase to the end of the line" redraw it in place.

// spinFrames are the spinner's frames, one per redraw.
var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

const (
	// spinInterval is how often the status line is redrawn.
	spinInterval = 100 * time.Millisecond
	// spinDelay is how long a call runs before its status line appears:
	// a quick call prints its result without a flash of spinner.
	spinDelay = 100 * time.Millisecond
	// barCells is the width of the progress bar.
	barCells = 12
)

// The escape sequences of the status line and of colour.
const (
	eraseLine = "\r\x1b[K"
	sgrReset  = "\x1b[0m"
	sgrBold   = "\x1b[1m"
	sgrDim    = "\x1b[2m"
	sgrRed    = "\x1b[31m"
	sgrGreen  = "\x1b[32m"
	sgrYellow = "\x1b[33m"
	sgrCyan   = "\x1b[36m"
)

// progress is the latest progress a call reported.
type progress struct {
	set      bool
	progress float64
	total    float64
	message  string
}

// paint wraps s in the SGR code when colour is on.
func paint(colour bool, code, s string) string {
	if !colour || s == "" {
		return s
	}
	return code + s + sgrReset
}

// elapsed formats a duration as the status line shows it: 0.4s, 12.3s,
// 2m05s, 1h02m.
func elapsed(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// progressText is the progress part of the status line: a bar and a
// percentage when the total is known, the count otherwise; then the
// message.
func progressText(p progress) (bar, rest string) {
	if !p.set {
		return "", ""
	}
	var parts []string
	if p.total > 0 && !math.IsInf(p.total, 0) && !math.IsNaN(p.progress) {
		frac := math.Max(0, math.Min(1, p.progress/p.total))
		full := int(math.Round(frac * barCells))
		bar = "[" + strings.Repeat("█", full) + strings.Repeat("░", barCells-full) + "]"
		parts = append(parts, fmt.Sprintf("%3.0f%%", frac*100))
	} else if p.progress != 0 && !math.IsNaN(p.progress) && !math.IsInf(p.progress, 0) {
		parts = append(parts, fmt.Sprintf("%g", p.progress))
	}
	if m := clipLine(p.message, 200); m != "" {
		parts = append(parts, m)
	}
	return bar, strings.Join(parts, " ")
}

// statusText is the status line: frame is the spinner's frame number,
// width the terminal's columns (the text is cut to width-1 characters, so
// that it never wraps).
func statusText(frame int, label string, took time.Duration, p progress, width int, colour bool) string {
	spin := spinFrames[frame%len(spinFrames)]
	label = clipLine(label, 80)
	bar, rest := progressText(p)
	plain := []string{spin, label, elapsed(took)}
	if bar != "" {
		plain = append(plain, bar)
	}
	if rest != "" {
		plain = append(plain, rest)
	}
	text := strings.Join(plain, " ")
	if width > 1 && utf8.RuneCountInString(text) > width-1 {
		// Cut as plain text; colour is added to the parts that survive.
		r := []rune(text)
		text = string(r[:width-2]) + "…"
		if !colour || !strings.HasPrefix(text, spin) {
			return text
		}
		return paint(true, sgrCyan, spin) + paint(true, sgrDim, text[len(spin):])
	}
	if !colour {
		return text
	}
	out := paint(true, sgrCyan, spin) + " " + paint(true, sgrBold, label) + " " + paint(true, sgrDim, elapsed(took))
	if bar != "" {
		out += " " + paint(true, sgrCyan, bar)
	}
	if rest != "" {
		out += " " + rest
	}
	return out
}
