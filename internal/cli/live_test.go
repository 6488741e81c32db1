package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

// render plays what a program wrote to a terminal and returns the lines
// left on the screen, trailing spaces cut: carriage return, newline (also
// a carriage return, as the terminal's output processing makes it),
// backspace, erase in line (CSI K), cursor up (CSI A), erase below (CSI
// J); colours and other sequences are ignored. Lines do not wrap.
func render(raw string) []string {
	var lines [][]rune
	row, col := 0, 0
	ensure := func() {
		for len(lines) <= row {
			lines = append(lines, nil)
		}
	}
	rs := []rune(raw)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		ensure()
		switch {
		case r == '\r':
			col = 0
		case r == '\n': // as a terminal in cooked mode (ONLCR)
			row, col = row+1, 0
		case r == '\b':
			if col > 0 {
				col--
			}
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
				j++
			}
			if j >= len(rs) {
				return finish(lines)
			}
			param := string(rs[i+2 : j])
			n, _ := strconv.Atoi(strings.TrimPrefix(param, "?"))
			switch rs[j] {
			case 'K':
				if param == "2" {
					lines[row] = nil
				} else if col < len(lines[row]) {
					lines[row] = lines[row][:col]
				}
			case 'A':
				row = max(0, row-max(n, 1))
			case 'J':
				if col < len(lines[row]) {
					lines[row] = lines[row][:col]
				}
				lines = lines[:row+1]
			}
			i = j
		case r == 0x1b:
			i++ // a two-character sequence
		case r < 0x20:
		default:
			for len(lines[row]) <= col {
				lines[row] = append(lines[row], ' ')
			}
			lines[row][col] = r
			col++
		}
	}
	return finish(lines)
}

func finish(lines [][]rune) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(string(l), " ")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

func TestRender(t *testing.T) {
	got := render("abc\r\x1b[Kxy\n\x1b[31mred\x1b[0m\r\nline\b\bX\n1\n2\x1b[1A\r\x1b[2Kz")
	want := []string{"xy", "red", "liXe", "z", "2"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("render = %q, want %q", got, want)
	}
}

// syncBuf is a buffer written by the live view's ticker and read by the
// test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hasSpinner reports whether a line holds a spinner frame.
func hasSpinner(lines ...string) bool {
	for _, l := range lines {
		for _, f := range spinFrames {
			if strings.Contains(l, f) {
				return true
			}
		}
	}
	return false
}

func TestStatusText(t *testing.T) {
	tests := []struct {
		name  string
		took  time.Duration
		p     progress
		width int
		want  string
	}{
		{"plain", 1500 * time.Millisecond, progress{}, 80, "⠋ tool_x 1.5s"},
		{"minutes", 125 * time.Second, progress{}, 80, "⠋ tool_x 2m05s"},
		{"bar", time.Second, progress{set: true, progress: 1, total: 4, message: "step\x1b[2J one"}, 80,
			"⠋ tool_x 1.0s [███░░░░░░░░░]  25% step\\u001b[2J one"},
		{"count", time.Second, progress{set: true, progress: 7, message: "files"}, 80, "⠋ tool_x 1.0s 7 files"},
		{"over the total", time.Second, progress{set: true, progress: 9, total: 4}, 80, "⠋ tool_x 1.0s [████████████] 100%"},
		{"cut to the width", time.Second, progress{set: true, progress: 1, total: 2, message: strings.Repeat("m", 100)}, 40,
			"⠋ tool_x 1.0s [██████░░░░░░]  50% mmmm…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := statusText(0, "tool_x", tt.took, tt.p, tt.width, false)
			if got != tt.want {
				t.Errorf("statusText =\n%q\nwant\n%q", got, tt.want)
			}
			if n := len([]rune(got)); n >= tt.width {
				t.Errorf("%d characters for a width of %d", n, tt.width)
			}
			coloured := statusText(0, "tool_x", tt.took, tt.p, tt.width, true)
			if plain := render(coloured); len(plain) != 1 || plain[0] != got {
				t.Errorf("coloured, it reads %q", plain)
			}
		})
	}
}

// terminalLive is a live view as on a terminal, writing to a buffer.
func terminalLive(w *syncBuf, colour bool) *live {
	return &live{w: w, spin: true, lines: true, colour: colour, width: func() int { return 60 }, now: time.Now}
}

func TestLiveOnTerminal(t *testing.T) {
	for _, colour := range []bool{false, true} {
		t.Run("colour="+strconv.FormatBool(colour), func(t *testing.T) {
			w := &syncBuf{}
			l := terminalLive(w, colour)
			l.begin("tool_x")
			eventually(t, "the status line", func() bool { return hasSpinner(w.String()) })
			l.event(tool.Event{Kind: tool.EventOutput, Stream: "stdout", Text: "one\ntw"})
			l.event(tool.Event{Kind: tool.EventOutput, Stream: "stdout", Text: "o\nevil \x1b]0;title\x07\x1b[2J \u202eend\n"})
			l.event(tool.Event{Kind: tool.EventOutput, Stream: "stderr", Text: "10%\r50%\r100%\r\n"})
			l.event(tool.Event{Kind: tool.EventProgress, Progress: 2, Total: 4, Text: "half"})
			l.event(tool.Event{Kind: tool.EventLog, Level: "warning", Text: "careful"})
			l.event(tool.Event{Kind: tool.EventLog, Level: "debug", Text: "noise"})
			eventually(t, "the progress on the status line", func() bool {
				screen := render(w.String())
				last := screen[len(screen)-1]
				return strings.Contains(last, "tool_x") && strings.Contains(last, "50% half")
			})
			l.event(tool.Event{Kind: tool.EventOutput, Stream: "stdout", Text: "no newline"})
			l.end()
			want := []string{"one", "two", `evil \u001b]0;title\u0007\u001b[2J \u202eend`, "100%", "warning: careful", "no newline"}
			if got := render(w.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("screen:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if strings.Contains(w.String(), "\x1b]") || strings.Contains(w.String(), "\x1b[2J") || strings.Contains(w.String(), "\u202e") {
				t.Errorf("a tool's control characters reached the terminal: %q", w.String())
			}
			if !colour && strings.Contains(strings.ReplaceAll(w.String(), eraseLine, ""), "\x1b[") {
				t.Errorf("colour without colour: %q", w.String())
			}
			// After end, nothing more is drawn.
			n := len(w.String())
			time.Sleep(3 * spinInterval)
			if len(w.String()) != n {
				t.Errorf("drawn after end: %q", w.String()[n:])
			}
		})
	}
}

// TestLivePausesForPrompts: while the terminal front end shows a prompt,
// the status line is gone and nothing is drawn or printed; the lines
// printed meanwhile come after it.
func TestLivePausesForPrompts(t *testing.T) {
	w := &syncBuf{}
	l := terminalLive(w, false)
	l.begin("tool_x")
	eventually(t, "the status line", func() bool { return hasSpinner(w.String()) })
	asked := make(chan struct{})
	answer := make(chan struct{})
	fe := l.frontEnd(hitl.FrontEndFunc(func(ctx context.Context, r *tool.Request) (tool.Response, error) {
		_, _ = w.Write([]byte("\nAuthorize? "))
		close(asked)
		<-answer
		_, _ = w.Write([]byte("y\n"))
		return r.Submitted(tool.Allow), nil
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := fe.Ask(context.Background(), &tool.Request{ID: "1", Kind: tool.KindConfirm}); err != nil {
			t.Error(err)
		}
	}()
	<-asked
	at := len(w.String())
	if screen := render(w.String()); hasSpinner(screen...) {
		t.Errorf("the status line is on the screen with the prompt: %q", screen)
	}
	l.event(tool.Event{Kind: tool.EventOutput, Stream: "stdout", Text: "printed while asking\n"})
	l.event(tool.Event{Kind: tool.EventProgress, Progress: 1, Total: 2})
	time.Sleep(3 * spinInterval)
	if got := w.String()[at:]; got != "" {
		t.Errorf("written over the prompt: %q", got)
	}
	close(answer)
	<-done
	eventually(t, "the status line again", func() bool { return hasSpinner(render(w.String())...) })
	l.end()
	want := []string{"", "Authorize? y", "printed while asking"}
	if got := render(w.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("screen:\n%q\nwant:\n%q", got, want)
	}
}

// TestLiveWithoutTerminal: no status line and no escape sequence; the
// lines only with -v, and progress as occasional lines.
func TestLiveWithoutTerminal(t *testing.T) {
	var quiet bytes.Buffer
	l := newLive(&Env{Stderr: &quiet, Getenv: func(string) string { return "" }}, false)
	l.begin("tool_x")
	l.event(tool.Event{Kind: tool.EventOutput, Stream: "stdout", Text: "hello\n"})
	l.event(tool.Event{Kind: tool.EventProgress, Progress: 1, Total: 2, Text: "half"})
	l.end()
	if quiet.Len() != 0 {
		t.Errorf("without a terminal or -v: %q", quiet.String())
	}

	var verbose bytes.Buffer
	l = newLive(&Env{Stderr: &verbose, Getenv: func(string) string { return "" }}, true)
	now := time.Unix(0, 0)
	l.now = func() time.Time { return now }
	l.begin("tool_x")
	l.event(tool.Event{Kind: tool.EventOutput, Stream: "stdout", Text: "hello \x1b[1mbold\n"})
	l.event(tool.Event{Kind: tool.EventProgress, Progress: 1, Total: 4, Text: "first"})
	l.event(tool.Event{Kind: tool.EventProgress, Progress: 2, Total: 4, Text: "first"}) // same message, too soon
	now = now.Add(2 * time.Second)
	l.event(tool.Event{Kind: tool.EventProgress, Progress: 3, Total: 4, Text: "first"})
	l.event(tool.Event{Kind: tool.EventProgress, Progress: 4, Total: 4, Text: "first"}) // the end is shown
	l.event(tool.Event{Kind: tool.EventLog, Level: "debug", Text: "details"})
	l.event(tool.Event{Kind: tool.EventOutput, Stream: "stderr", Text: "tail", Dropped: 12})
	l.end()
	want := "hello \\u001b[1mbold\n" +
		"progress: [███░░░░░░░░░]  25% first\n" +
		"progress: [█████████░░░]  75% first\n" +
		"progress: [████████████] 100% first\n" +
		"debug: details\n" +
		"(12 characters of output not shown: over the output limit)\n" +
		"tail\n"
	if verbose.String() != want {
		t.Errorf("-v without a terminal:\n%s\nwant:\n%s", verbose.String(), want)
	}
}

// TestCallVerbose: lcp call -v prints what the tool prints on stderr,
// and --json stdout stays one JSON object.
func TestCallVerbose(t *testing.T) {
	needPython(t)
	dir := toolFolder(t, map[string]string{"talk.py": `import sys

def tool_talk():
    """Talks."""
    print("to stdout", flush=True)
    print("to stderr", file=sys.stderr, flush=True)
    return "said"
`})
	stdout, stderr, code := run(t, "", "call", "--tools", dir, "--json", "-v", "tool_talk")
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || res["output"] != "said" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "to stdout\n") || !strings.Contains(stderr, "to stderr\n") {
		t.Errorf("-v stderr %q", stderr)
	}
	_, stderr, _ = run(t, "", "call", "--tools", dir, "tool_talk")
	if strings.Contains(stderr, "to stdout") {
		t.Errorf("without -v or a terminal, stderr %q", stderr)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestBatchVerbose: lcp call --batch -v shows what the tools print on
// stderr; stdout keeps one result line per input line.
func TestBatchVerbose(t *testing.T) {
	needPython(t)
	dir := toolFolder(t, map[string]string{"talk.py": "def tool_talk(n: int = 1):\n    \"\"\"Talks.\"\"\"\n    print('call', n, flush=True)\n    return n\n"})
	batch := `{"tool":"tool_talk","args":{"n":1}}` + "\n" + `{"tool":"tool_talk","args":{"n":2}}` + "\n"
	stdout, stderr, code := run(t, batch, "call", "--tools", dir, "--batch", "-", "-v")
	if code != 0 || strings.Count(stdout, "\n") != 2 || !strings.Contains(stdout, `"output":2`) {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	if stderr != "call 1\ncall 2\n" {
		t.Errorf("stderr %q", stderr)
	}
	_, stderr, _ = run(t, batch, "call", "--tools", dir, "--batch", "-")
	if stderr != "" {
		t.Errorf("without -v, stderr %q", stderr)
	}
}

// TestLiveElapsedLeavesOutPrompts: the elapsed time stops while a prompt
// waits for the person and goes on after; promptWait says how long they
// took (lcp chat leaves it out of a call's time). A fake clock.
func TestLiveElapsedLeavesOutPrompts(t *testing.T) {
	now := time.Unix(1000, 0)
	l := &live{w: io.Discard, width: func() int { return 60 }, now: func() time.Time { return now }}
	l.begin("tool_x")
	now = now.Add(time.Second)
	l.pause()
	now = now.Add(10 * time.Second)
	l.mu.Lock()
	during := l.elapsed()
	l.mu.Unlock()
	l.resume()
	now = now.Add(2 * time.Second)
	l.mu.Lock()
	after := l.elapsed()
	l.mu.Unlock()
	l.end()
	if during != time.Second || after != 3*time.Second || l.promptWait() != 10*time.Second {
		t.Errorf("elapsed %v while asking, %v after; waited %v", during, after, l.promptWait())
	}
	l.begin("tool_y")
	if l.promptWait() != 0 {
		t.Errorf("a new call starts with the wait of the last: %v", l.promptWait())
	}
	l.end()
}
