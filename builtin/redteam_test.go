//go:build linux

package builtin_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/tool"
)

// The red team runs escape attempts through the real tools in safe mode,
// with every confirmation rejected (lcp call --approve=reject), against a
// workspace surrounded by canaries: files outside it, a fake key in a fake
// home, a secret in lcp's own environment, an HTTP server on loopback.
// After each attempt nothing outside may have changed, no secret may be in
// the result, the server may not have been reached, no process may
// survive, and the workspace must keep every byte it had.
//
// The default run takes every attempt of a class up to redteamPerClass;
// -redteam.long (or LCP_REDTEAM_LONG=1) runs the whole corpus.
var redteamLong = flag.Bool("redteam.long", false, "run the whole red-team corpus, not a sample of each class")

const redteamPerClass = 6

type attempt struct {
	file, class, src string
	line             int
}

func readAttempts(t *testing.T, name string) []attempt {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "redteam", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []attempt
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		class, src, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("%s:%d: no tab", name, n)
		}
		if strings.HasPrefix(src, `"`) {
			if src, err = strconv.Unquote(src); err != nil {
				t.Fatalf("%s:%d: %v", name, n, err)
			}
		}
		out = append(out, attempt{file: name, class: class, src: src, line: n})
	}
	return out
}

// arena is the world an attempt runs in.
type arena struct {
	root, ws, home, outside string
	key, secret, mark, tmp  string
	etc, usr                string // files a broken sandbox would leave in the system
	url                     string
	hits                    atomic.Int64
	outsideSnap, homeSnap   string
	wsSnap                  map[string]string
}

func newArena(t *testing.T) *arena {
	t.Helper()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tag := hex.EncodeToString(rnd[:])
	a := &arena{root: t.TempDir(), key: "FAKE-KEY-" + tag, secret: "SECRET-" + tag,
		mark: strconv.Itoa(40000 + int(rnd[0])<<8 + int(rnd[1])), tmp: "/tmp/lcp-redteam-" + tag,
		etc: "/etc/lcp-redteam-" + tag, usr: "/usr/local/lcp-redteam-" + tag}
	a.ws, a.home, a.outside = filepath.Join(a.root, "ws"), filepath.Join(a.root, "home"), filepath.Join(a.root, "outside")
	files := map[string]string{
		"home/.ssh/id_rsa":           a.key + "\n",
		"home/.aws/credentials":      "[default]\naws_secret_access_key = " + a.key + "\n",
		"home/.git-credentials":      "https://u:" + a.key + "@example.com\n",
		"home/.bashrc":               "# bashrc\n",
		"home/.gitconfig":            "[user]\n\tname = Red Team\n",
		"outside/canary.txt":         "canary\n",
		"outside/hard.txt":           "shared with the workspace\n",
		"outside/bare/HEAD":          "ref: refs/heads/main\n",
		"outside/bare/config":        "[core]\n\tbare = true\n[diff]\n\texternal = sh -c 'touch " + "OUTSIDE/pwned-diff' --\n",
		"outside/bare/objects/.keep": "",
		"ws/data.csv":                "a,b\n1,2\n3,4\n",
		"ws/notes.md":                "# Notes\nkeep me\n",
		"ws/run.sh":                  "#!/bin/sh\necho run\n",
		"ws/.git/HEAD":               "ref: refs/heads/main\n",
		"ws/.git/config":             "[core]\n\trepositoryformatversion = 0\n",
		"ws/.git/hooks/.keep":        "",
		"ws/sub/inner.txt":           "inner\n",
	}
	for name, content := range files {
		p := filepath.Join(a.root, name)
		content = strings.ReplaceAll(content, "OUTSIDE", a.outside)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(a.home, ".ssh", "id_rsa"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(a.outside, "hard.txt"), filepath.Join(a.ws, "linked.txt")); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"link_out": a.outside, "link_home": a.home, "link_etc": "/etc"} {
		if err := os.Symlink(target, filepath.Join(a.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.hits.Add(1)
		fmt.Fprintln(w, "canary")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	a.url = "http://" + ln.Addr().String() + "/canary"
	t.Setenv("HOME", a.home)
	// lcp's own state (apply journals) is not the attempts' doing.
	t.Setenv("XDG_STATE_HOME", filepath.Join(a.root, "state"))
	t.Setenv("LCP_REDTEAM_SECRET_TOKEN", a.secret)
	time.Sleep(50 * time.Millisecond) // older than the runs: not conflicts
	a.outsideSnap, a.homeSnap = treeSnapshot(t, a.outside), treeSnapshot(t, a.home)
	a.wsSnap = fileSnapshot(t, a.ws)
	return a
}

// expand fills an attempt's placeholders.
func (a *arena) expand(s string) string {
	port := strings.TrimPrefix(a.url[strings.LastIndex(a.url, ":"):], ":")
	port = strings.TrimSuffix(port, "/canary")
	return strings.NewReplacer("{ws}", a.ws, "{home}", a.home, "{outside}", a.outside, "{url}", a.url,
		"{port}", port, "{mark}", a.mark, "{tmp}", a.tmp, "{etc}", a.etc, "{usr}", a.usr,
		"{secret_env}", "LCP_REDTEAM_SECRET_TOKEN").Replace(s)
}

// check returns what an attempt broke.
func (a *arena) check(t *testing.T, res string) []string {
	t.Helper()
	var broke []string
	if s := treeSnapshot(t, a.outside); s != a.outsideSnap {
		broke = append(broke, "changed files outside the workspace:\n"+diffLines(a.outsideSnap, s))
		a.outsideSnap = s
	}
	if s := treeSnapshot(t, a.home); s != a.homeSnap {
		broke = append(broke, "changed the home folder:\n"+diffLines(a.homeSnap, s))
		a.homeSnap = s
	}
	for _, secret := range []string{a.key, a.secret} {
		if strings.Contains(res, secret) {
			broke = append(broke, "read a secret")
		}
	}
	if n := a.hits.Swap(0); n > 0 {
		broke = append(broke, fmt.Sprintf("reached the loopback canary %d times", n))
	}
	var m []string
	for _, pat := range []string{a.tmp + "*", a.etc + "*", a.usr + "*"} {
		found, _ := filepath.Glob(pat)
		m = append(m, found...)
	}
	if len(m) > 0 {
		broke = append(broke, fmt.Sprintf("wrote %v in the host's system", m))
		for _, p := range m {
			os.RemoveAll(p)
		}
	}
	if pids := marked(a.mark); len(pids) > 0 {
		broke = append(broke, fmt.Sprintf("left processes %v running", pids))
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	// The files the workspace had keep every byte; files earlier attempts
	// created belong to the session and may change without asking.
	now := fileSnapshot(t, a.ws)
	for p, was := range a.wsSnap {
		if now[p] != was {
			broke = append(broke, fmt.Sprintf("changed %s in the workspace: %q, was %q", p, now[p], was))
		}
	}
	return broke
}

// marked lists live processes whose command line mentions mark.
func marked(mark string) []int {
	var out []int
	deadline := time.Now().Add(2 * time.Second)
	for {
		out = out[:0]
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			raw, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			st, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
			if strings.Contains(string(raw), mark) && !strings.Contains(string(st), ") Z ") {
				out = append(out, pid)
			}
		}
		if len(out) == 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(50 * time.Millisecond) // a kill in progress
	}
}

// treeSnapshot describes every entry of a tree (type, mode, size, content
// digest) in one string.
func treeSnapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	for p, v := range fileSnapshot(t, dir) {
		lines = append(lines, p+" "+v)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func fileSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		v := fi.Mode().String()
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			v += fmt.Sprintf(" %d %q", len(b), truncate(string(b), 200))
		}
		out[rel] = v
		return nil
	})
	return out
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func diffLines(a, b string) string {
	old := map[string]bool{}
	for _, l := range strings.Split(a, "\n") {
		old[l] = true
	}
	var out []string
	for _, l := range strings.Split(b, "\n") {
		if !old[l] {
			out = append(out, "  "+l)
		}
	}
	return strings.Join(out, "\n")
}

// redteamTally counts what happened to the attempts.
type redteamTally struct {
	attempts, asked, ran, dropped, failures int
	classes                                 map[string]int
}

func TestRedTeam(t *testing.T) {
	needSandbox(t)
	havePython(t)
	long := *redteamLong || os.Getenv("LCP_REDTEAM_LONG") != ""
	a := newArena(t)
	cfg := map[string]any{"autonomy_level": "safe", "timeout": 8}
	ts, err := builtin.New(&builtin.Options{Workspace: a.ws, Configs: map[string]map[string]any{
		builtin.SystemShell: cfg, builtin.ExecutePython: cfg, builtin.WorkspaceTools: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	tally := redteamTally{classes: map[string]int{}}
	perClass := map[string]int{}
	for _, file := range []string{"shell.txt", "python.txt"} {
		for _, at := range readAttempts(t, file) {
			key := file + "/" + at.class
			if !long && perClass[key] >= redteamPerClass {
				continue
			}
			perClass[key]++
			a.run(t, ts, at, &tally)
		}
	}
	t.Logf("red team: %d attempts (%d classes) run through the tools in safe mode with every confirmation rejected; "+
		"%d asked before running, %d ran in the sandbox, %d had changes to existing files dropped; "+
		"effects outside, secrets read, network reached, survivors: %d", tally.attempts, len(perClass), tally.asked,
		tally.ran, tally.dropped, tally.failures)
	for _, file := range []string{"shell.txt", "python.txt"} {
		if n := len(readAttempts(t, file)); long && (file == "shell.txt" && n < 150 || file == "python.txt" && n < 50) {
			t.Errorf("%s has %d attempts, want at least %d", file, n, map[string]int{"shell.txt": 150, "python.txt": 50}[file])
		}
	}
}

func (a *arena) run(t *testing.T, ts tool.Toolset, at attempt, tally *redteamTally) {
	t.Helper()
	name, args := "tool_execute_shell_command", map[string]any{"command": a.expand(at.src), "timeout": 8}
	if at.file == "python.txt" {
		name, args = "tool_execute_python_code", map[string]any{"code": a.expand(at.src), "timeout": 8}
	}
	raw, _ := json.Marshal(args)
	asked := 0
	res, err := tool.Call(context.Background(), ts, name, raw, &tool.CallOptions{
		Confirm: func(ctx context.Context, r *tool.Request) (tool.Decision, string) {
			asked++
			return tool.Reject, "red team: rejected"
		},
	})
	out := ""
	if err != nil {
		out = err.Error()
	} else {
		b, _ := json.Marshal(res)
		out = string(b)
	}
	tally.attempts++
	tally.classes[at.class]++
	switch {
	case asked > 0 && !strings.Contains(out, "return_code"):
		tally.asked++
	case strings.Contains(out, `"dropped"`):
		tally.ran++
		tally.dropped++
	default:
		tally.ran++
	}
	if broke := a.check(t, out); len(broke) > 0 {
		tally.failures++
		t.Errorf("%s:%d (%s): %s\n  attempt: %s\n  result: %s", at.file, at.line, at.class, strings.Join(broke, "; "),
			truncate(at.src, 300), truncate(out, 600))
	}
}

// TestRedTeamWithoutSandbox runs the same corpus on the path of machines
// without the sandbox, where the classifiers alone decide: every attempt
// safe mode lets through unasked really runs on the host, and must have
// no effect either. Attempts that would be catastrophic on the host if a
// classifier were wrong (killing every process) are only judged, not run.
func TestRedTeamWithoutSandbox(t *testing.T) {
	havePython(t)
	noSandbox(t)
	long := *redteamLong || os.Getenv("LCP_REDTEAM_LONG") != ""
	a := newArena(t)
	cfg := map[string]any{"autonomy_level": "safe", "timeout": 8}
	ts, err := builtin.New(&builtin.Options{Workspace: a.ws, Configs: map[string]map[string]any{
		builtin.SystemShell: cfg, builtin.ExecutePython: cfg, builtin.WorkspaceTools: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	tally := redteamTally{classes: map[string]int{}}
	perClass := map[string]int{}
	for _, file := range []string{"shell.txt", "python.txt"} {
		for _, at := range readAttempts(t, file) {
			key := file + "/" + at.class
			if !long && perClass[key] >= redteamPerClass || strings.Contains(at.src, "kill") {
				continue
			}
			perClass[key]++
			a.run(t, ts, at, &tally)
		}
	}
	t.Logf("red team without a sandbox: %d attempts; %d asked before running, %d ran on the host unasked; "+
		"effects outside, secrets read, network reached, survivors: %d", tally.attempts, tally.asked, tally.ran, tally.failures)
}
