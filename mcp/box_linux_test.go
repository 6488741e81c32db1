package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcptools/lcp/egress"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

func requireSandbox(t *testing.T) {
	t.Helper()
	if st := sandbox.Probe(); !st.Available {
		t.Skipf("the kernel sandbox is unavailable here: %s", st.Reason)
	}
}

// attackScene is what the attack of issue 23 aims at: a private key in
// the home folder, a secret in lcp's environment, a file in another
// folder, and two listeners on the host's loopback.
type attackScene struct {
	key, other, outside string
	allowed, second     string
	marker              string
}

func newAttackScene(t *testing.T) *attackScene {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := &attackScene{key: filepath.Join(home, ".ssh", "id_rsa")}
	if err := os.WriteFile(s.key, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("LCP_TEST_API_TOKEN", "s3cret")
	other := t.TempDir()
	s.other = filepath.Join(other, "notes.txt")
	if err := os.WriteFile(s.other, []byte("other folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A folder outside /tmp too (the box's /tmp is private anyway).
	wd, _ := os.Getwd()
	s.outside = filepath.Join(wd, "box.go")
	serve := func(body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	s.allowed, s.second = serve("reached"), serve("second")
	s.marker = strconv.Itoa(40000 + os.Getpid()%9000)
	return s
}

func (s *attackScene) args(writeDir string) json.RawMessage {
	raw, _ := json.Marshal(map[string]any{
		"read":    []string{s.key, s.other, s.outside},
		"write":   []string{filepath.Join(filepath.Dir(s.other), "pwned"), filepath.Join(writeDir, "pwned")},
		"env":     []string{"LCP_TEST_API_TOKEN", "LCP_MCP_TEST_SERVER"},
		"dial":    []string{s.allowed, s.second},
		"proxy":   []string{s.allowed, s.second},
		"linger":  s.marker,
		"resolve": "example.org",
	})
	return raw
}

// lingering returns the pids of processes whose command line ends with
// the marker.
func lingering(marker string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.HasSuffix(strings.TrimRight(string(b), "\x00"), "sleep\x00"+marker) {
			out = append(out, pid)
		}
	}
	return out
}

func attack(t *testing.T, sc ServerConfig, s *attackScene, opts *ClientOptions) (map[string]string, []tool.Event) {
	t.Helper()
	var mu sync.Mutex
	var events []tool.Event
	if opts == nil {
		opts = &ClientOptions{}
	}
	opts.OnEvent = func(e tool.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	c := newClient(t, []ServerConfig{sc}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wd, _ := os.Getwd()
	res, err := tool.Call(ctx, c, sc.Alias+"::attack", s.args(wd), nil)
	if err != nil {
		t.Fatalf("attack: %v (%v)", err, c.Diagnostics())
	}
	got := outcome(t, res)
	c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for len(lingering(s.marker)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if pids := lingering(s.marker); len(pids) > 0 {
		t.Errorf("processes the server left are still running after it was closed: %v", pids)
	}
	mu.Lock()
	defer mu.Unlock()
	return got, append([]tool.Event(nil), events...)
}

func expect(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// TestBoxedServerAttack is the attack of issue 23 with real processes: a
// stdio server (the test binary) tries to read a private key, a secret of
// lcp's environment and files of other folders, to write outside, to
// connect to listeners on the host's loopback, and to leave a setsid
// process behind. By default nothing is reached; with "network":
// ["127.0.0.1:PORT"] exactly that listener is, and no other.
func TestBoxedServerAttack(t *testing.T) {
	requireSandbox(t)
	s := newAttackScene(t)
	wd, _ := os.Getwd()
	denied := func(events []tool.Event) []string {
		var out []string
		for _, e := range events {
			if strings.Contains(string(e.Data), egress.DenialKey) {
				out = append(out, e.Text)
			}
		}
		return out
	}

	t.Run("default", func(t *testing.T) {
		got, events := attack(t, selfServer(t, "evil"), s, nil)
		expect(t, got, map[string]string{
			"read " + s.key:     "error",
			"read " + s.other:   "error",
			"read " + s.outside: "error",
			"write " + filepath.Join(filepath.Dir(s.other), "pwned"): "error",
			"write " + filepath.Join(wd, "pwned"):                    "error",
			"env LCP_TEST_API_TOKEN":                                 "",
			"env LCP_MCP_TEST_SERVER":                                "1", // the entry's own env
			"dial " + s.allowed:                                      "error",
			"dial " + s.second:                                       "error",
			"proxy " + s.allowed:                                     "refused 403",
			"proxy " + s.second:                                      "refused 403",
			"resolve":                                                "error",
			"linger":                                                 "ok",
		})
		if d := denied(events); len(d) != 2 {
			t.Errorf("denial events %q, want 2", d)
		}
		if _, err := os.Stat(filepath.Join(wd, "pwned")); err == nil {
			os.Remove(filepath.Join(wd, "pwned"))
			t.Error("the server wrote into the package folder")
		}
	})

	t.Run("one listener allowed", func(t *testing.T) {
		sc := selfServer(t, "evil")
		sc.Sandbox = &SandboxConfig{Network: []string{s.allowed}}
		got, events := attack(t, sc, s, nil)
		expect(t, got, map[string]string{
			"read " + s.key:      "error",
			"dial " + s.allowed:  "error", // only through the proxy
			"proxy " + s.allowed: "ok:reached",
			"proxy " + s.second:  "refused 403",
		})
		if d := denied(events); len(d) != 1 || !strings.Contains(d[0], s.second) {
			t.Errorf("denial events %q, want one for %s", d, s.second)
		}
	})

	t.Run("asked at run time", func(t *testing.T) {
		// Safe mode: the listener not on the list is put to the caller of
		// the call in flight, who allows it once.
		sc := selfServer(t, "evil")
		var asked []string
		c := newClient(t, []ServerConfig{sc}, nil)
		opts := &tool.CallOptions{Confirm: func(_ context.Context, r *tool.Request) (tool.Decision, string) {
			asked = append(asked, r.Label)
			if strings.Contains(r.Label, s.allowed) {
				return tool.Allow, ""
			}
			return tool.Reject, "no"
		}}
		raw, _ := json.Marshal(map[string]any{"proxy": []string{s.allowed, s.second}})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := tool.Call(ctx, c, "evil::attack", raw, opts)
		if err != nil {
			t.Fatal(err)
		}
		got := outcome(t, res)
		expect(t, got, map[string]string{"proxy " + s.allowed: "ok:reached", "proxy " + s.second: "refused 403"})
		want := []string{"Network access to " + s.allowed, "Network access to " + s.second}
		if strings.Join(asked, "|") != strings.Join(want, "|") {
			t.Errorf("asked %q, want %q", asked, want)
		}
	})

	t.Run("sandbox false", func(t *testing.T) {
		sc := selfServer(t, "evil")
		sc.Sandbox = &SandboxConfig{Off: true}
		raw, _ := json.Marshal(map[string]any{"read": []string{s.key}, "env": []string{"LCP_TEST_API_TOKEN"}, "dial": []string{s.allowed}})
		c := newClient(t, []ServerConfig{sc}, nil)
		res, err := tool.Call(context.Background(), c, "evil::attack", raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := outcome(t, res)
		expect(t, got, map[string]string{"read " + s.key: "ok:PRIVATE KEY", "env LCP_TEST_API_TOKEN": "s3cret", "dial " + s.allowed: "ok"})
	})
}

func TestBoxedServerCommandNotFound(t *testing.T) {
	requireSandbox(t)
	sc := ServerConfig{Alias: "ghost", Type: TypeStdio, Command: "lcp-no-such-server"}
	c := newClient(t, []ServerConfig{sc}, nil)
	var be *BoxError
	if err := c.Err("ghost"); !errors.As(err, &be) || !strings.Contains(err.Error(), `"lcp-no-such-server" was not found`) || !strings.Contains(err.Error(), `"sandbox": false`) {
		t.Fatalf("err %v", err)
	}
	// A command the host has but the box does not show fails in the box.
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec cat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sc = ServerConfig{Alias: "hidden", Type: TypeStdio, Command: "/bin/sh", Args: []string{script}}
	c = newClient(t, []ServerConfig{sc}, &ClientOptions{ConnectTimeout: 20 * time.Second})
	if err := c.Err("hidden"); err == nil || !strings.Contains(err.Error(), `"hidden"`) || !strings.Contains(err.Error(), "lcp's sandbox") {
		t.Fatalf("err %v", err)
	}
}

func TestBoxedServerStatePersists(t *testing.T) {
	requireSandbox(t)
	state := t.TempDir()
	sc := selfServer(t, "keeper")
	for i, want := range []string{"error", "ok:pwned"} {
		c := newClient(t, []ServerConfig{sc}, &ClientOptions{StateDir: state})
		home := filepath.Join(state, "keeper")
		raw, _ := json.Marshal(map[string]any{"read": []string{filepath.Join(home, "pwned")}, "write": []string{filepath.Join(home, "pwned")}})
		res, err := tool.Call(context.Background(), c, "keeper::attack", raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := outcome(t, res)
		expect(t, got, map[string]string{"read " + filepath.Join(home, "pwned"): want, "write " + filepath.Join(home, "pwned"): "ok", "home": home})
		c.Close()
		if i == 0 {
			if _, err := os.Stat(filepath.Join(home, "pwned")); err != nil {
				t.Fatalf("the state folder did not keep the server's file: %v", err)
			}
		}
	}
}

// outcome is the attack tool's report, from its result.
func outcome(t *testing.T, res *tool.Result) map[string]string {
	t.Helper()
	var got map[string]string
	if json.Unmarshal(res.Structured, &got) == nil && got != nil {
		return got
	}
	var text string
	if err := json.Unmarshal(res.Output, &text); err != nil {
		text = string(res.Output)
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("attack result %s: %v", res.Output, err)
	}
	return got
}
