package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lcptools/lcp/web"
)

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestServeRefusesRemoteAddress(t *testing.T) {
	_, stderr, code := run(t, "", "serve", "--addr", "0.0.0.0:0")
	if code != ExitUsage || !strings.Contains(stderr, "not a loopback address") || !strings.Contains(stderr, "--allow-remote") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run(t, "", "serve", "--addr", "nonsense")
	if code != ExitUsage || !strings.Contains(stderr, "listen address") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run(t, "", "serve", "--addr", "0.0.0.0:0", "--allow-remote", "--token", "short")
	if code != ExitUsage || !strings.Contains(stderr, "at least 16") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestServe runs lcp serve on a Python tool folder: the page is served,
// a call asks a question that the API answers, the tool's print reaches
// the event stream, and stopping the command stops the Python worker.
func TestServe(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	src := `import os


def tool_hello(name: str, user_interaction_handler=None):
    """Says hello after asking for a greeting."""
    print("worker pid", os.getpid(), flush=True)
    g = user_interaction_handler({"type": "text", "title": "Greeting", "prompt": "Which word?", "default": "Hello"})
    return {"output": "%s, %s!" % (g, name)}
`
	if err := os.WriteFile(filepath.Join(dir, "greet.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr lockedBuffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	ready := make(chan string, 1)
	o := &ServeOptions{env: env, addr: "127.0.0.1:0", approval: approvalFlags{approve: "ask"}, ready: func(u string) { ready <- u }}
	o.inv.tools = []string{dir}
	o.inv.workspace = dir
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	o.ctx = ctx
	go func() { done <- runServe(o) }()
	var signInURL string
	select {
	case signInURL = <-ready:
	case err := <-done:
		t.Fatalf("serve ended: %v; stderr %s", err, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	if !strings.Contains(stdout.String(), "lcp serve: "+signInURL) || !regexp.MustCompile(`/\?token=[0-9a-f]{32}$`).MatchString(signInURL) {
		t.Errorf("stdout %q does not give the sign-in address %s", stdout.String(), signInURL)
	}
	base, _, _ := strings.Cut(signInURL, "?")

	// Without signing in: a hint, no token.
	resp0, err := http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	hint, _ := io.ReadAll(resp0.Body)
	resp0.Body.Close()
	if resp0.StatusCode != http.StatusUnauthorized || !strings.Contains(string(hint), "Sign in") || strings.Contains(string(hint), "token=") {
		t.Errorf("page without sign-in: %d %s", resp0.StatusCode, hint)
	}
	// The printed address signs a browser in (a cookie) and the next one
	// is printed.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp1, err := browser.Get(signInURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp1.Body)
	resp1.Body.Close()
	if resp1.StatusCode != http.StatusOK || !strings.Contains(string(page), "static/app.js") {
		t.Fatalf("signed-in page: %d %s", resp1.StatusCode, page)
	}
	var token string
	for _, c := range jar.Cookies(resp1.Request.URL) {
		if c.Name == web.CookieName {
			token = c.Name + "=" + c.Value
		}
	}
	if token == "" {
		t.Fatal("no session cookie")
	}
	if !strings.Contains(stdout.String(), "the next sign-in address: "+base+"?token=") {
		t.Errorf("no next sign-in address on stdout: %q", stdout.String())
	}
	if tools := get(t, base+"api/tools", token); !strings.Contains(tools, `"tool_hello"`) || !strings.Contains(tools, `"greet"`) {
		t.Errorf("tools: %s", tools)
	}

	// Follow the events, start a call, answer its question.
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"api/events", nil)
	setAuth(req, token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan web.Event, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev web.Event
				if json.Unmarshal([]byte(data), &ev) == nil {
					events <- ev
				}
			}
		}
		close(events)
	}()
	post(t, base+"api/calls", token, `{"tool":"tool_hello","args":{"name":"Ada"}}`, http.StatusAccepted)
	var pid int
	var result string
	timeout := time.After(30 * time.Second)
	for result == "" {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the event stream ended")
			}
			switch {
			case ev.Type == web.EventOutput && strings.HasPrefix(ev.Output.Text, "worker pid "):
				pid, _ = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(ev.Output.Text, "worker pid ")))
			case ev.Type == web.EventRequest && ev.Request.Type == "opened":
				if d := ev.Request.Request.Default; d == nil || *d != "Hello" {
					t.Errorf("request: %+v", ev.Request.Request)
				}
				post(t, base+"api/requests/"+ev.Request.Request.ID+"/answer", token, `{"action":"submit","value":"Bonjour"}`, http.StatusOK)
			case ev.Type == web.EventCall && ev.Call.State == "done":
				result = string(ev.Call.Result)
			}
		case <-timeout:
			t.Fatal("the call did not finish")
		}
	}
	if !strings.Contains(result, `"output":"Bonjour, Ada!"`) {
		t.Errorf("result: %s", result)
	}
	if pid == 0 {
		t.Fatal("the tool's output did not reach the event stream")
	}

	// Ctrl-C: the command returns and the worker is gone.
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the Python worker %d outlived lcp serve", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "lcp serve: stopped") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func get(t *testing.T, url, token string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	setAuth(req, token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

func post(t *testing.T, url, token, body string, want int) string {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	setAuth(req, token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("POST %s: %d, want %d: %s", url, resp.StatusCode, want, b)
	}
	return string(b)
}

// setAuth signs a request in: a cookie ("name=value") or the server's
// token.
func setAuth(req *http.Request, auth string) {
	switch {
	case auth == "":
	case strings.Contains(auth, "="):
		req.Header.Set("Cookie", auth)
	default:
		req.Header.Set(web.TokenHeader, auth)
	}
}

// processGone reports whether no process pid exists any more.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	defer p.Release()
	err = p.Signal(syscall.Signal(0))
	return errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH)
}
