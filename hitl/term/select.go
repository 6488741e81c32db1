package term

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lcptools/lcp/tool"
	xterm "golang.org/x/term"
)

// choose asks for one of r.Options, the default preselected.
func (t *Terminal) choose(ctx context.Context, r *tool.Request) (tool.Response, error) {
	t.questionHeader(r, "Choose one")
	def := -1
	if r.Default != nil {
		def = slices.Index(r.Options, *r.Default)
	}
	shown := r.Options
	if len(r.OptionTitles) == len(r.Options) {
		shown = r.OptionTitles // titled choices: people read the titles
	}
	i, err := t.pick(ctx, shown, def)
	if err != nil {
		if ctx.Err() != nil || !isCancel(err) {
			return tool.Response{}, err
		}
		return r.Declined(QuestionCancelled), nil
	}
	return r.Submitted(r.Options[i]), nil
}

// pick returns the index of the option chosen: on a terminal with the
// arrow keys (or j/k, Home, End) or by typing its number, then Enter;
// otherwise by a line with its number or its text (empty for the
// default). def is the preselected index, -1 for none.
func (t *Terminal) pick(ctx context.Context, options []string, def int) (int, error) {
	if !t.tty {
		return t.pickPlain(ctx, options, def)
	}
	n := len(options)
	width, height, err := xterm.GetSize(t.fd)
	if err != nil || width <= 0 {
		width, height = 80, 24
	}
	// Show a window of the list when it is taller than the terminal.
	visible := n
	if height > 0 {
		visible = min(n, max(3, height-8))
	}
	cur, top := max(def, 0), 0
	scroll := func() {
		if cur < top {
			top = cur
		}
		if cur >= top+visible {
			top = cur - visible + 1
		}
	}
	scroll()
	draw := func(redraw bool) {
		var b strings.Builder
		if redraw {
			fmt.Fprintf(&b, "\x1b[%dA\r", visible)
		}
		for i := top; i < top+visible; i++ {
			mark := "  "
			if i == cur {
				mark = "> "
			}
			line := fmt.Sprintf("%s%d. %s", mark, i+1, clean(options[i], false))
			if i == def {
				line += " (default)"
			}
			b.WriteString("\x1b[2K" + fit(line, width) + "\n")
		}
		hint := "↑/↓ or a number, Enter to choose, Ctrl-C to cancel"
		if visible < n {
			hint = fmt.Sprintf("[%d-%d of %d] %s", top+1, top+visible, n, hint)
		}
		b.WriteString("\x1b[2K" + fit(hint, width))
		t.write(b.String())
	}
	draw(false)
	var num []byte
	for {
		k, err := t.readKey(ctx)
		if err != nil {
			return 0, err
		}
		digit := k.kind == keyRune && k.r >= '0' && k.r <= '9'
		if !digit {
			num = num[:0]
		}
		switch {
		case k.kind == keyEnter:
			t.printf("\nChosen: %s\n", clean(options[cur], false))
			return cur, nil
		case k.kind == keyInterrupt:
			t.write("^C\n")
			return 0, errInterrupt
		case k.kind == keyEOF:
			t.write("\n")
			return 0, errInterrupt
		case k.kind == keyUp || (k.kind == keyRune && k.r == 'k'):
			cur = (cur - 1 + n) % n
		case k.kind == keyDown || (k.kind == keyRune && k.r == 'j'):
			cur = (cur + 1) % n
		case k.kind == keyHome:
			cur = 0
		case k.kind == keyEnd:
			cur = n - 1
		case digit:
			// Digits accumulate into an option number (for lists of ten
			// or more); one that goes past the list starts a new number.
			num = append(num, byte(k.r))
			v, _ := strconv.Atoi(string(num))
			if v < 1 || v > n {
				num = append(num[:0], byte(k.r))
				v, _ = strconv.Atoi(string(num))
			}
			if v >= 1 && v <= n {
				cur = v - 1
			} else {
				num = num[:0]
			}
		default:
			continue
		}
		scroll()
		draw(true)
	}
}

func (t *Terminal) pickPlain(ctx context.Context, options []string, def int) (int, error) {
	for i, o := range options {
		line := fmt.Sprintf("  %d. %s", i+1, clean(o, false))
		if i == def {
			line += " (default)"
		}
		t.write(line + "\n")
	}
	for {
		if def >= 0 {
			t.printf("Choose 1-%d (Enter for %d): ", len(options), def+1)
		} else {
			t.printf("Choose 1-%d: ", len(options))
		}
		line, err := t.readPlainLine(ctx)
		if err != nil {
			return 0, err
		}
		line = strings.TrimSpace(line)
		if line == "" && def >= 0 {
			return def, nil
		}
		if v, err := strconv.Atoi(line); err == nil && v >= 1 && v <= len(options) {
			return v - 1, nil
		}
		if i := slices.Index(options, line); i >= 0 {
			return i, nil
		}
		t.write("Invalid selection.\n")
	}
}

// pickMany returns the indexes of the options chosen, in list order: on
// a terminal by moving with the arrow keys (or j/k, a number) and
// toggling with Space, then Enter; otherwise by a line of numbers or
// option texts separated by commas (empty for the preselected ones).
// chosen are the indexes preselected.
func (t *Terminal) pickMany(ctx context.Context, options []string, chosen []int) ([]int, error) {
	on := make([]bool, len(options))
	for _, i := range chosen {
		on[i] = true
	}
	if !t.tty {
		return t.pickManyPlain(ctx, options, on)
	}
	n := len(options)
	width, height, err := xterm.GetSize(t.fd)
	if err != nil || width <= 0 {
		width, height = 80, 24
	}
	visible := n
	if height > 0 {
		visible = min(n, max(3, height-8))
	}
	cur, top := 0, 0
	scroll := func() {
		if cur < top {
			top = cur
		}
		if cur >= top+visible {
			top = cur - visible + 1
		}
	}
	draw := func(redraw bool) {
		var b strings.Builder
		if redraw {
			fmt.Fprintf(&b, "\x1b[%dA\r", visible)
		}
		for i := top; i < top+visible; i++ {
			mark, box := "  ", "[ ]"
			if i == cur {
				mark = "> "
			}
			if on[i] {
				box = "[x]"
			}
			b.WriteString("\x1b[2K" + fit(fmt.Sprintf("%s%s %d. %s", mark, box, i+1, clean(options[i], false)), width) + "\n")
		}
		hint := "↑/↓ or a number to move, Space to choose, Enter when done, Ctrl-C to cancel"
		if visible < n {
			hint = fmt.Sprintf("[%d-%d of %d] %s", top+1, top+visible, n, hint)
		}
		b.WriteString("\x1b[2K" + fit(hint, width))
		t.write(b.String())
	}
	draw(false)
	for {
		k, err := t.readKey(ctx)
		if err != nil {
			return nil, err
		}
		switch {
		case k.kind == keyEnter:
			var out []int
			var names []string
			for i, o := range on {
				if o {
					out = append(out, i)
					names = append(names, clean(options[i], false))
				}
			}
			t.printf("\nChosen: %s\n", strings.Join(names, ", "))
			return out, nil
		case k.kind == keyInterrupt:
			t.write("^C\n")
			return nil, errInterrupt
		case k.kind == keyEOF:
			t.write("\n")
			return nil, errInterrupt
		case k.kind == keyRune && k.r == ' ':
			on[cur] = !on[cur]
		case k.kind == keyUp || (k.kind == keyRune && k.r == 'k'):
			cur = (cur - 1 + n) % n
		case k.kind == keyDown || (k.kind == keyRune && k.r == 'j'):
			cur = (cur + 1) % n
		case k.kind == keyHome:
			cur = 0
		case k.kind == keyEnd:
			cur = n - 1
		case k.kind == keyRune && k.r >= '1' && k.r <= '9' && int(k.r-'1') < n:
			cur = int(k.r - '1')
		default:
			continue
		}
		scroll()
		draw(true)
	}
}

func (t *Terminal) pickManyPlain(ctx context.Context, options []string, on []bool) ([]int, error) {
	var defs []string
	for i, o := range options {
		line := fmt.Sprintf("  %d. %s", i+1, clean(o, false))
		if on[i] {
			line += " (default)"
			defs = append(defs, strconv.Itoa(i+1))
		}
		t.write(line + "\n")
	}
	for {
		if len(defs) > 0 {
			t.printf("Choose any of 1-%d, separated by commas (Enter for %s): ", len(options), strings.Join(defs, ","))
		} else {
			t.printf("Choose any of 1-%d, separated by commas (Enter for none): ", len(options))
		}
		line, err := t.readPlainLine(ctx)
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			var out []int
			for i, o := range on {
				if o {
					out = append(out, i)
				}
			}
			return out, nil
		}
		picked := make([]bool, len(options))
		ok := true
		for _, part := range strings.Split(line, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if v, err := strconv.Atoi(part); err == nil && v >= 1 && v <= len(options) {
				picked[v-1] = true
			} else if i := slices.Index(options, part); i >= 0 {
				picked[i] = true
			} else {
				ok = false
				break
			}
		}
		if !ok {
			t.write("Invalid selection.\n")
			continue
		}
		var out []int
		for i, p := range picked {
			if p {
				out = append(out, i)
			}
		}
		return out, nil
	}
}
