//go:build unix

package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/lcptools/lcp/llm/llmtest"
)

// workPy prints (an escape sequence among its lines), works long enough
// for the status line to show, asks for approval, prints again.
const workPy = `import sys, time

_CONFIRM_HANDLER = None


def set_confirm_handler(handler):
    global _CONFIRM_HANDLER
    _CONFIRM_HANDLER = handler


def tool_work():
    """Works, asks, works."""
    print("before approval", flush=True)
    print("evil \x1b[2J\x1b]0;owned\x07 end", flush=True)
    time.sleep(0.8)
    decision, reason = _CONFIRM_HANDLER("rm -rf build", "clean build")
    print("after approval", file=sys.stderr, flush=True)
    time.sleep(0.5)
    print("no newline", end="", flush=True)
    return "finished " + decision
`

// onPty runs lcp on a pseudo-terminal of 120 columns with the given
// environment, as onTerminal does.
func onPty(t *testing.T, args []string, vars map[string]string, play func(scr *screen, key func(string))) (int, string, *screen) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	scr := &screen{}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(scr, ptmx); close(copied) }()
	var stdout bytes.Buffer
	env := &Env{Stdin: tty, Stdout: &stdout, Stderr: tty, TTY: tty, Getenv: func(k string) string { return vars[k] }, Args: args}
	done := make(chan int, 1)
	go func() { done <- Main(env) }()
	key := func(s string) {
		// A prompt drops keys typed before it switched the terminal to
		// raw mode.
		waitRaw(t, ptmx)
		if _, err := ptmx.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	play(scr, key)
	select {
	case code := <-done:
		// The copy has all lcp wrote once it reads the end of the
		// terminal, which comes when its last descriptor closes.
		tty.Close()
		select {
		case <-copied:
		case <-time.After(screenHang):
			t.Fatal("the screen did not get the end of the terminal")
		}
		return code, stdout.String(), scr
	case <-time.After(screenHang):
		t.Fatal("lcp did not end")
	}
	return 0, "", nil
}

// TestCallLiveOnTerminal: lcp call on a terminal shows a status line with
// the elapsed time while the tool works, and the tool's lines as they come
// (escaped); the status line is gone before the approval prompt and not
// drawn while it waits; at the end the screen holds the tool's lines, the
// prompt and nothing of the spinner.
func TestCallLiveOnTerminal(t *testing.T) {
	needPython(t)
	dir := toolFolder(t, map[string]string{"work.py": workPy})
	for _, tt := range []struct {
		name   string
		vars   map[string]string
		status string // what the status line shows of itself (a regexp)
	}{
		{"colour", nil, regexp.QuoteMeta("tool_work\x1b[0m \x1b[2m")},
		// The elapsed time, whatever it is on this machine.
		{"NO_COLOR", map[string]string{"NO_COLOR": "1"}, `tool_work \d+\.\d`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var atPrompt []string
			var quiet string
			code, stdout, scr := onPty(t, []string{"call", "--tools", dir, "tool_work"}, tt.vars, func(scr *screen, key func(string)) {
				scr.expect(t, "before approval")
				scr.expectMatch(t, regexp.MustCompile(tt.status))
				scr.expect(t, "[a]lways: ")
				atPrompt = render(scr.shown())
				mark := len(scr.shown())
				time.Sleep(4 * spinInterval)
				quiet = scr.shown()[mark:]
				key("y\r")
				scr.expect(t, "after approval")
			})
			if code != 0 || stdout != "finished allow\n" {
				t.Fatalf("exit %d, stdout %q\n%s", code, stdout, scr.shown())
			}
			if hasSpinner(atPrompt...) {
				t.Errorf("the status line is on the screen with the prompt:\n%s", strings.Join(atPrompt, "\n"))
			}
			if quiet != "" {
				t.Errorf("written while the prompt waited: %q", quiet)
			}
			final := render(scr.shown())
			if hasSpinner(final...) {
				t.Errorf("the spinner is left on the screen:\n%s", strings.Join(final, "\n"))
			}
			text := strings.Join(final, "\n")
			for _, want := range []string{"before approval\n" + `evil \u001b[2J\u001b]0;owned\u0007 end` + "\n",
				"APPROVAL REQUIRED: clean build", "Authorize action? [y]es / [n]o / [a]lways: y\nafter approval\nno newline"} {
				if !strings.Contains(text, want) {
					t.Errorf("the screen lacks %q:\n%s", want, text)
				}
			}
			if raw := scr.shown(); strings.Contains(raw, "\x1b[2J") || strings.Contains(raw, "\x1b]0;") {
				t.Errorf("the tool's escape sequences reached the terminal")
			}
			if tt.vars["NO_COLOR"] != "" && strings.Contains(strings.ReplaceAll(scr.shown(), eraseLine, ""), "\x1b[3") {
				t.Errorf("colour with NO_COLOR")
			}
		})
	}
}

// TestChatLiveOnTerminal: lcp chat shows a status line while the model
// answers and while a tool runs, in colour, and leaves none behind.
func TestChatLiveOnTerminal(t *testing.T) {
	chatNeedPython(t)
	dir := toolFolder(t, map[string]string{"work.py": workPy})
	srv := llmtest.New(t, llmtest.Calls(llmtest.Call("c", "tool_work", `{}`)), llmtest.Text("All done."))
	var atPrompt []string
	code, stdout, scr := onPty(t, []string{"chat", "--tools", dir, "--model", srv.BaseURL(), "--prompt", "work please"}, nil, func(scr *screen, key func(string)) {
		scr.expect(t, "-> tool_work")
		scr.expect(t, "before approval")
		scr.expect(t, "tool_work\x1b[0m \x1b[2m")
		scr.expect(t, "[a]lways: ")
		atPrompt = render(scr.shown())
		key("y\r")
		scr.expect(t, "<- tool_work")
	})
	if code != 0 || stdout != "All done.\n" {
		t.Fatalf("exit %d, stdout %q\n%s", code, stdout, scr.shown())
	}
	if hasSpinner(atPrompt...) {
		t.Errorf("the status line is on the screen with the prompt:\n%s", strings.Join(atPrompt, "\n"))
	}
	final := render(scr.shown())
	if hasSpinner(final...) {
		t.Errorf("the spinner is left on the screen:\n%s", strings.Join(final, "\n"))
	}
	raw := scr.shown()
	if !strings.Contains(raw, sgrCyan+"-> tool_work") || !strings.Contains(raw, sgrGreen+"<- tool_work") {
		t.Errorf("the tool lines are not coloured: %q", raw)
	}
	if !strings.Contains(strings.Join(final, "\n"), "   before approval") {
		t.Errorf("the tool's lines are not shown under its call:\n%s", strings.Join(final, "\n"))
	}
}

// TestCallUpstreamProgressOnTerminal: the progress an upstream MCP server
// reports (the reference server's long-running operation) is a bar on the
// status line of lcp call, gone when the result is printed.
func TestCallUpstreamProgressOnTerminal(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	script, err := filepath.Abs("../../mcp/testdata/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skip("the npm peers are not installed: run `npm ci` in mcp/testdata/node")
	}
	conf := filepath.Join(t.TempDir(), "mcp.json")
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{"command": "node", "args": []string{script, "stdio"},
		"sandbox": map[string]any{"read": []string{strings.SplitAfter(script, "node_modules")[0]}}}}})
	if err := os.WriteFile(conf, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, scr := onPty(t, []string{"call", "--mcp-config", conf, "everything::trigger-long-running-operation", "duration=2", "steps=4"},
		map[string]string{"NO_COLOR": "1"}, func(scr *screen, key func(string)) {
			scr.expect(t, "everything::trigger-long-running-operation")
			scr.expect(t, "[███░░░░░░░░░]  25%")
			scr.expect(t, "[██████░░░░░░]  50%")
		})
	if code != 0 || !strings.Contains(stdout, "Long running operation completed") {
		t.Fatalf("exit %d, stdout %q\n%s", code, stdout, scr.shown())
	}
	if final := render(scr.shown()); hasSpinner(final...) {
		t.Errorf("the spinner is left on the screen:\n%s", strings.Join(final, "\n"))
	}
}

// convertPy reports progress and a log record through the handlers the
// worker injects.
const convertPy = `import time


def tool_convert(pages: int = 4, progress_handler=None, log_handler=None):
    """Converts pages, reporting progress."""
    for i in range(1, pages + 1):
        time.sleep(0.3)
        progress_handler(i, pages, f"page {i}")
    log_handler("almost done", level="warning")
    time.sleep(0.3)
    return "converted"
`

// TestCallPythonProgressOnTerminal: a Python tool's progress_handler is a
// bar on the status line, its log_handler a line.
func TestCallPythonProgressOnTerminal(t *testing.T) {
	needPython(t)
	dir := toolFolder(t, map[string]string{"convert.py": convertPy})
	code, stdout, scr := onPty(t, []string{"call", "--tools", dir, "tool_convert"}, map[string]string{"NO_COLOR": "1"}, func(scr *screen, key func(string)) {
		scr.expect(t, "[██████░░░░░░]  50% page 2")
		scr.expect(t, "warning: almost done")
	})
	if code != 0 || stdout != "converted\n" {
		t.Fatalf("exit %d, stdout %q\n%s", code, stdout, scr.shown())
	}
	if final := render(scr.shown()); hasSpinner(final...) || strings.Join(final, "\n") != "warning: almost done" {
		t.Errorf("the screen at the end:\n%s", strings.Join(final, "\n"))
	}
}

// TestLiveOnDumbTerminal: TERM=dumb gets the tool's lines, without a
// status line or colour; NO_COLOR a status line without colour.
func TestLiveOnDumbTerminal(t *testing.T) {
	_, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer tty.Close()
	for _, tt := range []struct {
		vars                map[string]string
		spin, lines, colour bool
	}{
		{map[string]string{"TERM": "dumb"}, false, true, false},
		{map[string]string{"NO_COLOR": "1"}, true, true, false},
		{nil, true, true, true},
	} {
		l := newLive(&Env{Stderr: tty, Getenv: func(k string) string { return tt.vars[k] }}, false)
		if l.spin != tt.spin || l.lines != tt.lines || l.colour != tt.colour {
			t.Errorf("%v: spin %v lines %v colour %v", tt.vars, l.spin, l.lines, l.colour)
		}
	}
}

// TestCallTypeaheadNotEchoed: keys typed while a call runs are not echoed
// into the status line, and answer nothing: the approval then takes one
// key, without Enter.
func TestCallTypeaheadNotEchoed(t *testing.T) {
	needPython(t)
	dir := toolFolder(t, map[string]string{"work.py": workPy})
	code, stdout, scr := onPty(t, []string{"call", "--tools", dir, "tool_work"}, map[string]string{"NO_COLOR": "1"}, func(scr *screen, key func(string)) {
		scr.expect(t, "before approval")
		key("qq")
		scr.expect(t, "[a]lways: ")
		key("y")
		scr.expect(t, "after approval")
	})
	if code != 0 || stdout != "finished allow\n" {
		t.Fatalf("exit %d, stdout %q\n%s", code, stdout, scr.shown())
	}
	if raw := scr.shown(); strings.Contains(raw, "qq") {
		t.Errorf("the keys typed while the call ran were echoed:\n%q", raw)
	}
}
