//go:build unix

package cli

import (
	"bytes"
	"io"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/lcptools/lcp/llm/llmtest"
)

// screen collects what the program writes on a pseudo-terminal.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen int
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// expect waits until text appears after what earlier calls matched.
func (s *screen) expect(t *testing.T, text string) {
	t.Helper()
	s.expectMatch(t, regexp.MustCompile(regexp.QuoteMeta(text)))
}

// screenHang is how long expect waits for a text before it calls the
// program hung: far above any real wait (a Python worker's cold start on
// a busy machine takes seconds), so that it never decides an outcome.
const screenHang = 2 * time.Minute

// expectMatch waits until the screen shows a match of re after what
// earlier expectations consumed, and consumes it.
func (s *screen) expectMatch(t *testing.T, re *regexp.Regexp) {
	t.Helper()
	text := re.String()
	deadline := time.Now().Add(screenHang)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		rest := s.buf.String()[s.seen:]
		if loc := re.FindStringIndex(rest); loc != nil {
			s.seen += loc[1]
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Fatalf("%q did not appear; the screen shows:\n%s", text, s.buf.String()[s.seen:])
}

// TestChatTerminal plays a person at a real terminal: a line typed at the
// prompt starts a turn, the tool's confirmation is asked on the terminal
// and approved with a key, and /exit ends the session.
func TestChatTerminal(t *testing.T) {
	chatNeedPython(t)
	dir := toolFolder(t, map[string]string{"cleaner.py": approvalPy})
	srv := llmtest.New(t, llmtest.Calls(llmtest.Call("c", "tool_clean", `{"folder":"dist"}`)), llmtest.Text("All clean."))
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	scr := &screen{}
	go func() { _, _ = io.Copy(scr, ptmx) }()

	var stdout bytes.Buffer
	env := &Env{Stdin: tty, Stdout: &stdout, Stderr: tty, TTY: tty, Getenv: func(string) string { return "" },
		Args: []string{"chat", "--tools", dir, "--model", srv.BaseURL()}}
	done := make(chan int, 1)
	go func() { done <- Main(env) }()

	scr.expect(t, "lcp chat: test-model at "+srv.BaseURL()+", 1 tools.")
	scr.expect(t, "> ")
	if _, err := ptmx.Write([]byte("clean up\r")); err != nil {
		t.Fatal(err)
	}
	scr.expect(t, "-> tool_clean")
	scr.expect(t, "rm -rf dist")
	scr.expect(t, "[a]lways: ")
	if _, err := ptmx.Write([]byte("y\r")); err != nil {
		t.Fatal(err)
	}
	// The elapsed time " (1.3s)" may stand between the name and the text:
	// the call waited for the answer typed above.
	scr.expect(t, "<- tool_clean")
	scr.expect(t, "cleaned dist")
	scr.expect(t, "> ")
	if _, err := ptmx.Write([]byte("/exit\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d", code)
		}
	case <-time.After(screenHang):
		t.Fatal("lcp chat did not end after /exit")
	}
	if stdout.String() != "All clean.\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	if m, _ := srv.Requests()[1].ToolMessage("c"); m.Content != "cleaned dist" {
		t.Errorf("tool message %q", m.Content)
	}
}
