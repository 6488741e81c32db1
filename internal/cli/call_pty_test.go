//go:build unix

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// onTerminal runs lcp with a real pseudo-terminal as its TTY (prompts on
// it, answers typed into it by play) and returns the exit code, stdout and
// the terminal's screen (which may still be catching up with the last
// writes: use expect, or shown after it).
func onTerminal(t *testing.T, args []string, play func(scr *screen, key func(string))) (int, string, *screen) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	scr := &screen{}
	go func() { _, _ = io.Copy(scr, ptmx) }()
	var stdout bytes.Buffer
	env := &Env{Stdin: tty, Stdout: &stdout, Stderr: tty, TTY: tty, Getenv: func(string) string { return "" }, Args: args}
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
		return code, stdout.String(), scr
	case <-time.After(screenHang):
		t.Fatal("lcp call did not end")
	}
	return 0, "", nil
}

// shown returns everything the screen received so far.
func (s *screen) shown() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

const ctrlC = "\x03"

// TestSeedDeploymentOnTerminal runs the seed's tool_prepare_deployment
// (the built-in user_interaction_demo) from lcp call on a terminal,
// through every branch.
func TestSeedDeploymentOnTerminal(t *testing.T) {
	needPython(t)
	const secret = "sk-live-0123456789"
	confirm := func(scr *screen) { scr.expect(t, "deploy:production"); scr.expect(t, "[a]lways: ") }
	strategy := func(scr *screen) { scr.expect(t, "How should 'deploy' roll out to production?") }
	apiKey := func(scr *screen) { scr.expect(t, "API key of the production container registry:") }
	tag := func(scr *screen) { scr.expect(t, "Image tag to deploy:") }
	tests := []struct {
		name string
		play func(scr *screen, key func(string))
		code int
		want string // in the result (stdout when it succeeds, the terminal otherwise)
	}{
		{"allowed", func(scr *screen, key func(string)) {
			confirm(scr)
			key("y\r")
			strategy(scr)
			key("2\r")
			apiKey(scr)
			key(secret + "\r")
			tag(scr)
			key("v1.2\r")
		}, 0, "rolling rollout of tag 'v1.2' (registry key ***6789)"},
		{"refused with feedback", func(scr *screen, key func(string)) {
			confirm(scr)
			key("n\r")
			scr.expect(t, "feedback")
			key("wait for the freeze to end\r")
		}, ExitFailure, "Rejected by the operator: wait for the freeze to end"},
		{"cancelled at the approval", func(scr *screen, key func(string)) {
			confirm(scr)
			key(ctrlC)
		}, ExitFailure, "Rejected by the operator: Operation cancelled by user."},
		{"cancelled at the strategy", func(scr *screen, key func(string)) {
			confirm(scr)
			key("a\r")
			strategy(scr)
			key(ctrlC)
		}, ExitFailure, "Cancelled by user (strategy selection)."},
		{"cancelled at the key", func(scr *screen, key func(string)) {
			confirm(scr)
			key("y\r")
			strategy(scr)
			key("\r")
			apiKey(scr)
			key(ctrlC)
		}, ExitFailure, "Cancelled by user (the registry API key is required)."},
		{"cancelled at the tag", func(scr *screen, key func(string)) {
			confirm(scr)
			key("y\r")
			strategy(scr)
			key("\r")
			apiKey(scr)
			key(secret + "\r")
			tag(scr)
			key(ctrlC)
		}, ExitFailure, "Cancelled by user (image tag)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, scr := onTerminal(t, []string{"call", "--workspace", t.TempDir(), "tool_prepare_deployment"}, tt.play)
			if tt.code == 0 {
				if !strings.Contains(stdout, tt.want) {
					t.Errorf("%q not in the result\nstdout: %s\nterminal:\n%s", tt.want, stdout, scr.shown())
				}
			} else {
				scr.expect(t, tt.want)
			}
			if code != tt.code {
				t.Errorf("exit %d, want %d\nterminal:\n%s", code, tt.code, scr.shown())
			}
			if strings.Contains(stdout+scr.shown(), secret) {
				t.Errorf("the secret was shown or printed")
			}
		})
	}
}

// TestSeedServiceConnectionOnTerminal configures a service connection
// (secret, select, text) and tests it (a confirmation before the network
// request), from lcp call on a terminal.
func TestSeedServiceConnectionOnTerminal(t *testing.T) {
	needPython(t)
	const secret = "wx-9f8e7d6c5b4a3210"
	var gotAuth string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		fmt.Fprint(w, "ok")
	}))
	defer api.Close()
	ws := t.TempDir()
	hc := filepath.Join(t.TempDir(), "hc.json")
	cfg := fmt.Sprintf(`{"user_interactive_tools": {"test_urls": {"weather_api": %q}}}`, api.URL+"/ping")
	if err := os.WriteFile(hc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"call", "--workspace", ws, "--host-config", hc}

	// Cancelled at each question: nothing is saved.
	for _, c := range []struct {
		name string
		play func(scr *screen, key func(string))
		want string
	}{
		{"key", func(scr *screen, key func(string)) { scr.expect(t, "Enter the API key of 'weather_api'"); key(ctrlC) }, "Cancelled by user (an API key is required)."},
		{"region", func(scr *screen, key func(string)) {
			scr.expect(t, "Enter the API key of 'weather_api'")
			key(secret + "\r")
			scr.expect(t, "Choose the region to connect to:")
			key(ctrlC)
		}, "Cancelled by user (region)."},
		{"description", func(scr *screen, key func(string)) {
			scr.expect(t, "Enter the API key of 'weather_api'")
			key(secret + "\r")
			scr.expect(t, "Choose the region to connect to:")
			key("\r")
			scr.expect(t, "Optionally describe")
			key(ctrlC)
		}, "Cancelled by user (description)."},
	} {
		code, stdout, scr := onTerminal(t, append(base, "tool_configure_service_connection", "service_name=weather_api"), c.play)
		scr.expect(t, c.want)
		if code != ExitFailure {
			t.Errorf("cancel at %s: exit %d\nstdout %s\nterminal:\n%s", c.name, code, stdout, scr.shown())
		}
		if _, err := os.Stat(filepath.Join(ws, "service_connections.json")); err == nil {
			t.Fatalf("cancel at %s saved a connection", c.name)
		}
	}

	// Configured: region by arrow key (eu-west is preselected; down once).
	code, stdout, scr := onTerminal(t, append(base, "--json", "tool_configure_service_connection", "service_name=weather_api"), func(scr *screen, key func(string)) {
		scr.expect(t, "Enter the API key of 'weather_api'")
		key(secret + "\r")
		scr.expect(t, "Choose the region to connect to:")
		key("\x1b[B\r")
		scr.expect(t, "Optionally describe")
		key("forecasts for the app\r")
	})
	if code != 0 || !strings.Contains(stdout, "us-east") {
		t.Fatalf("configure: exit %d\nstdout %s\nterminal:\n%s", code, stdout, scr.shown())
	}
	if strings.Contains(stdout+scr.shown(), secret) {
		t.Fatal("the secret was shown or printed")
	}
	saved, err := os.ReadFile(filepath.Join(ws, "service_connections.json"))
	if err != nil || !strings.Contains(string(saved), secret) {
		t.Fatalf("the key was not stored in the workspace: %v %s", err, saved)
	}

	// The network test asks first: refused, then allowed.
	code, _, scr = onTerminal(t, append(base, "tool_test_service_connection", "service_name=weather_api"), func(scr *screen, key func(string)) {
		scr.expect(t, "[a]lways: ")
		key("n\r")
		scr.expect(t, "feedback")
		key("\r")
	})
	scr.expect(t, "Rejected by the operator: User declined authorization.")
	if code != ExitFailure || gotAuth != "" {
		t.Fatalf("refused test: exit %d, request auth %q\n%s", code, gotAuth, scr.shown())
	}
	code, stdout, scr = onTerminal(t, append(base, "--json", "tool_test_service_connection", "service_name=weather_api"), func(scr *screen, key func(string)) {
		scr.expect(t, "[a]lways: ")
		key("y\r")
	})
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || res["http_status"] != float64(200) {
		t.Fatalf("allowed test: exit %d\nstdout %s\nterminal:\n%s", code, stdout, scr.shown())
	}
	if gotAuth != "Bearer "+secret {
		t.Fatalf("the service got authorization %q", gotAuth)
	}
	if strings.Contains(stdout, secret) {
		t.Fatal("the secret is in the result")
	}
}
