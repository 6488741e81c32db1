package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
	xterm "golang.org/x/term"
)

// live shows on stderr what a running call does: on a terminal, a status
// line (spinner, elapsed time, progress; see spinner.go) and the lines the
// tool prints and logs as they come; elsewhere, those lines only with -v.
// Results never go through it: they stay on stdout, apart.
//
// The terminal's prompts (confirmations, questions, secrets) share stderr:
// frontEnd wraps the terminal front end so that the status line is erased
// before a prompt is drawn and not drawn again, nor any line printed, until
// the prompt is done; what the tool printed meanwhile is held and shown
// after it. Every text from a tool is escaped (safeText): a tool cannot
// move the cursor or recolour the terminal.
type live struct {
	w io.Writer
	// spin draws the status line (stderr is a terminal).
	spin bool
	// lines prints the calls' output and log records (a terminal, or -v).
	lines bool
	// verbose (-v) adds debug log records, and progress lines where there
	// is no status line.
	verbose bool
	colour  bool
	// indent goes before each line of a tool (lcp chat indents them under
	// its "-> tool" line).
	indent string
	width  func() int
	now    func() time.Time

	// tty is the terminal keys are typed on (Env.TTY), nil when none;
	// its echo is off while a call runs (quietInput).
	tty *os.File

	mu      sync.Mutex
	running bool
	label   string
	started time.Time
	// waited is the time spent in prompts since started, which the
	// elapsed time leaves out; pausedAt is when the current prompt came.
	waited   time.Duration
	pausedAt time.Time
	unquiet  func()
	prog     progress
	frame    int
	drawn    bool // the status line is on the screen
	paused   int  // prompts being shown
	held     []string
	dropped  int // held lines dropped past maxHeld
	partial  map[string]*strings.Builder
	// lastProgress is when a progress line was last printed (no status
	// line, -v), lastMessage its message.
	lastProgress time.Time
	lastMessage  string
	stop, done   chan struct{}
}

const (
	// maxPartial bounds a printed line still waiting for its newline;
	// longer, it is shown as it is.
	maxPartial = 16 << 10
	// maxHeld bounds the lines held while a prompt is shown.
	maxHeld = 1000
	// progressLineEvery bounds the progress lines of -v without a
	// terminal (a new message is always shown).
	progressLineEvery = time.Second
)

// newLive returns the live view of a command: a status line when stderr
// is a terminal that takes escape sequences (not TERM=dumb; on Windows, a
// console that lets lcp turn them on), the tools' lines there or with
// verbose, colour unless NO_COLOR is set.
func newLive(env *Env, verbose bool) *live {
	getenv := env.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	l := &live{w: env.Stderr, verbose: verbose, lines: verbose, width: func() int { return 80 }, now: time.Now}
	if f, ok := env.Stderr.(*os.File); ok && xterm.IsTerminal(int(f.Fd())) {
		fd := int(f.Fd())
		l.lines = true
		l.spin = getenv("TERM") != "dumb" && enableVT(f.Fd())
		l.tty = env.TTY
		l.colour = l.spin && getenv("NO_COLOR") == ""
		l.width = func() int {
			if w, _, err := xterm.GetSize(fd); err == nil && w > 0 {
				return w
			}
			return 80
		}
	}
	return l
}

// begin shows that label runs: the status line appears after spinDelay
// and is redrawn every spinInterval until end. A running status changes
// its label.
func (l *live) begin(label string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running {
		l.label = label
		return
	}
	l.running, l.label, l.started, l.prog, l.frame, l.waited = true, label, l.now(), progress{}, 0, 0
	if !l.spin {
		return
	}
	if l.tty != nil {
		l.unquiet = quietInput(l.tty)
	}
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go l.ticker(l.stop, l.done)
}

func (l *live) ticker(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTimer(spinDelay)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			l.mu.Lock()
			if l.running && l.paused == 0 {
				l.frame++
				l.draw()
			}
			l.mu.Unlock()
			t.Reset(spinInterval)
		}
	}
}

// end stops the status line and erases it, and shows what the tool
// printed without a final newline: the terminal is clean for the result.
func (l *live) end() {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.stop, l.done = nil, nil
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running = false
	l.erase()
	if l.unquiet != nil {
		l.unquiet()
		l.unquiet = nil
	}
	// In a stable order: stdout before stderr.
	for _, key := range slices.Sorted(maps.Keys(l.partial)) {
		if b := l.partial[key]; b.Len() > 0 {
			_, stream, _ := strings.Cut(key, "\x00")
			l.emit(l.outputLine(b.String(), stream))
		}
		delete(l.partial, key)
	}
}

// draw writes the status line in place; the caller holds mu.
func (l *live) draw() {
	text := statusText(l.frame, l.label, l.elapsed(), l.prog, l.width(), l.colour)
	_, _ = io.WriteString(l.w, eraseLine+text)
	l.drawn = true
}

// elapsed is the time the call has run, less the time its prompts
// waited for answers; the caller holds mu.
func (l *live) elapsed() time.Duration {
	now := l.now()
	d := now.Sub(l.started) - l.waited
	if l.paused > 0 {
		d -= now.Sub(l.pausedAt)
	}
	return max(d, 0)
}

// promptWait is the time prompts waited for answers since the last
// begin (it stays after end): lcp chat leaves it out of a call's time.
func (l *live) promptWait() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waited
}

// erase removes the status line; the caller holds mu.
func (l *live) erase() {
	if l.drawn {
		_, _ = io.WriteString(l.w, eraseLine)
		l.drawn = false
	}
}

// emit prints one line in place of the status line, or holds it while a
// prompt is shown; the caller holds mu. The status line comes back at the
// next tick: a burst of lines costs one redraw, not one per line.
func (l *live) emit(line string) {
	if l.paused > 0 {
		if len(l.held) < maxHeld {
			l.held = append(l.held, line)
		} else {
			l.dropped++
		}
		return
	}
	l.erase()
	_, _ = io.WriteString(l.w, line+"\n")
}

// println prints a line of the command's own (already safe to show)
// above the status line.
func (l *live) println(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.emit(line)
}

// event is the subscriber of a call's events (tool.CallOptions.OnEvent).
func (l *live) event(e tool.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e.Kind {
	case tool.EventOutput:
		if !l.lines {
			return
		}
		l.output(e)
	case tool.EventProgress:
		// The status line shows it at the next tick.
		l.prog = progress{set: true, progress: e.Progress, total: e.Total, message: e.Text}
		if !l.spin && l.verbose {
			l.progressLine(e)
		}
	case tool.EventLog:
		if !l.lines || (e.Level == "debug" && !l.verbose) {
			return
		}
		l.emit(l.logLine(e))
	}
}

// output prints the complete lines of printed text, keeping the rest
// until its newline comes (or the call ends).
func (l *live) output(e tool.Event) {
	key := e.CallID + "\x00" + e.Stream
	if l.partial == nil {
		l.partial = map[string]*strings.Builder{}
	}
	b := l.partial[key]
	if b == nil {
		b = &strings.Builder{}
		l.partial[key] = b
	}
	b.WriteString(e.Text)
	text := b.String()
	b.Reset()
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			break
		}
		l.emit(l.outputLine(text[:i], e.Stream))
		text = text[i+1:]
	}
	if len(text) > maxPartial {
		l.emit(l.outputLine(text, e.Stream))
		text = ""
	}
	b.WriteString(text)
	if e.Dropped > 0 {
		l.emit(l.indent + paint(l.colour, sgrDim, fmt.Sprintf("(%d characters of output not shown: over the output limit)", e.Dropped)))
	}
}

// outputLine is a printed line as shown: what a terminal would leave of
// it after carriage returns (a tool's own progress bar shows its last
// state), escaped, dimmed (stderr in yellow) on a colour terminal.
func (l *live) outputLine(line, stream string) string {
	line = strings.TrimSuffix(line, "\r")
	if i := strings.LastIndexByte(line, '\r'); i >= 0 {
		line = line[i+1:]
	}
	line = safeText(line, false)
	code := sgrDim
	if stream == "stderr" {
		code = sgrYellow
	}
	return l.indent + paint(l.colour, code, line)
}

// logLine is a log record as shown: "level: text".
func (l *live) logLine(e tool.Event) string {
	level := e.Level
	if level == "" {
		level = "info"
	}
	code := sgrDim
	switch level {
	case "warning", "notice":
		code = sgrYellow
	case "error", "critical", "alert", "emergency":
		code = sgrRed
	}
	return l.indent + paint(l.colour, code, safeText(level, false)+": "+safeText(e.Text, false))
}

// progressLine prints progress as a line (-v without a terminal): a new
// message at once, the same one at most every progressLineEvery.
func (l *live) progressLine(e tool.Event) {
	now := l.now()
	if e.Text == l.lastMessage && now.Sub(l.lastProgress) < progressLineEvery && !(e.Total > 0 && e.Progress >= e.Total) {
		return
	}
	l.lastProgress, l.lastMessage = now, e.Text
	bar, rest := progressText(progress{set: true, progress: e.Progress, total: e.Total, message: e.Text})
	text := strings.TrimSpace("progress: " + strings.TrimSpace(bar+" "+rest))
	l.emit(l.indent + text)
}

// pause erases the status line and holds every line until resume: a
// prompt is shown.
func (l *live) pause() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paused++
	if l.paused == 1 {
		l.pausedAt = l.now()
	}
	l.erase()
}

// resume shows the lines held since pause, and the status line again.
func (l *live) resume() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paused--
	if l.paused > 0 {
		return
	}
	if l.running {
		l.waited += l.now().Sub(l.pausedAt)
	}
	held := l.held
	l.held = nil
	for _, line := range held {
		l.emit(line)
	}
	if l.dropped > 0 {
		l.emit(l.indent + paint(l.colour, sgrDim, fmt.Sprintf("(%d more lines not shown)", l.dropped)))
		l.dropped = 0
	}
	if l.running && l.spin && l.elapsed() >= spinDelay {
		l.draw()
	}
}

// frontEnd wraps the terminal front end: the live view pauses while it
// shows a prompt.
func (l *live) frontEnd(fe hitl.FrontEnd) hitl.FrontEnd {
	return hitl.FrontEndFunc(func(ctx context.Context, r *tool.Request) (tool.Response, error) {
		l.pause()
		defer l.resume()
		return fe.Ask(ctx, r)
	})
}
