//go:build linux

package deploy_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/internal/fulltest"
	"github.com/lcptools/lcp/internal/servetest"
)

var (
	soakFor      = flag.Duration("soak", 30*time.Second, "how long the soak test runs its load (30m for the long mode)")
	soakSessions = flag.Int("soak-sessions", 200, "how many sessions the soak test opens")
)

// soakOutcome counts what the soak test's calls got.
type soakOutcome struct {
	mu       sync.Mutex
	byKind   map[string]int
	busy     int // 429s, retried
	problems []string
}

func (o *soakOutcome) add(kind string) {
	o.mu.Lock()
	o.byKind[kind]++
	o.mu.Unlock()
}

func (o *soakOutcome) problem(format string, a ...any) {
	o.mu.Lock()
	if len(o.problems) < 20 {
		o.problems = append(o.problems, fmt.Sprintf(format, a...))
	} else {
		o.problems[19] = "(more)"
	}
	o.mu.Unlock()
}

// TestSoak drives one `lcp mcp --http` with 100 concurrent sessions of
// mixed calls and random worker faults (crashes, hangs past the time
// limit, floods of output, huge results) for -soak (30 s by default;
// 10m for the long mode): every call gets its own answer, none is lost
// or misrouted, and once the load is gone the server's memory,
// goroutines and open files are back where they were.
func TestSoak(t *testing.T) {
	fulltest.Only(t, "the -soak load, 30 s by default, then the settling")
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("skipping the soak test: python3 is not installed")
	}
	dir := t.TempDir()
	ctx := context.Background()
	bin, err := servetest.Build(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := servetest.WriteFaultyTools(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A library rewritten now and then (hot reload) beside the faulty ones.
	countFile := filepath.Join(tools, "count.py")
	writeCount := func(v int) error {
		return os.WriteFile(countFile, fmt.Appendf(nil, "def tool_count(nonce: str):\n    \"\"\"Counts, version %d.\"\"\"\n    return \"count:\" + nonce\n", v), 0o644)
	}
	if err := writeCount(0); err != nil {
		t.Fatal(err)
	}
	srv, err := servetest.Start(bin, []string{"mcp", "--http", "127.0.0.1:0", "--tools", tools, "--token", token, "--watch",
		"--timeout", "10s", "--max-calls", "128", "--drain-timeout", "5s", "--log-format", "json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Kill)
	metricsURL := strings.TrimSuffix(srv.URL, "/mcp") + "/metrics"

	sessions := *soakSessions
	connect := func() (*sdk.ClientSession, error) {
		// A hang detector: 200 sessions opening at once on a busy
		// machine (and under -race) take more than 20 s to be served.
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		return sdk.NewClient(&sdk.Implementation{Name: "soak", Version: "1"}, nil).
			Connect(cctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{}}}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	}
	// Warm up: every library's worker started, then all sessions closed.
	warm, err := connect()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tool_echo", "tool_flood", "tool_count", "tool_hang", "tool_huge"} {
		if _, err := warm.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{"nonce": "warm", "lines": 1, "seconds": 0, "mb": 0}}); err != nil {
			t.Fatal(err)
		}
	}
	warm.Close()
	before := settle(t, srv, metricsURL, nil)

	out := &soakOutcome{byKind: map[string]int{}}
	var calls atomic.Int64
	stop := time.Now().Add(*soakFor)
	var wg sync.WaitGroup
	var reloads atomic.Int64
	wg.Go(func() {
		for v := 1; time.Now().Before(stop); v++ {
			time.Sleep(2 * time.Second) // the pace of the rewrites, not a synchronisation
			if err := writeCount(v); err != nil {
				out.problem("rewriting count.py: %v", err)
				return
			}
			reloads.Add(1)
		}
	})
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := connect()
			if err != nil {
				out.problem("session %d: connect: %v", s, err)
				return
			}
			defer cs.Close()
			rng := rand.New(rand.NewPCG(uint64(s), 16))
			for i := 0; time.Now().Before(stop); i++ {
				nonce := fmt.Sprintf("s%d-%d", s, i)
				kind := pick(rng)
				calls.Add(1)
				if !soakCall(ctx, cs, kind, nonce, out) {
					return // the session is gone: its loss is counted once
				}
			}
		}()
	}
	wg.Wait()
	after := settle(t, srv, metricsURL, &before)

	out.mu.Lock()
	defer out.mu.Unlock()
	t.Logf("soak %s, %d sessions, %d reloads: %d calls %v, %d refused busy (429) and retried", *soakFor, sessions, reloads.Load(), calls.Load(), out.byKind, out.busy)
	t.Logf("server before: RSS %s, %d goroutines, %d open files, %d threads", servetest.MB(before.RSS), before.goroutines, before.FDs, before.Threads)
	t.Logf("server after:  RSS %s, %d goroutines, %d open files, %d threads; peak RSS %s",
		servetest.MB(after.RSS), after.goroutines, after.FDs, after.Threads, servetest.MB(after.PeakRSS))
	if len(out.problems) > 0 {
		t.Errorf("lost, misrouted or wrong answers:\n%s\nserver log, panics and errors:\n%s", strings.Join(out.problems, "\n"), logProblems(srv.Stderr(), 20))
	}
	if out.byKind["echo"] == 0 || out.byKind["crash"] == 0 || out.byKind["hang"] == 0 {
		t.Errorf("the mix did not happen: %v", out.byKind)
	}
	// Flat: see flatSince.
	if !after.flatSince(before) {
		t.Errorf("not flat after the load: goroutines %d → %d, open files %d → %d, RSS %s → %s",
			before.goroutines, after.goroutines, before.FDs, after.FDs, servetest.MB(before.RSS), servetest.MB(after.RSS))
		t.Logf("the server's goroutines, by where they wait:\n%s", goroutineDump(t, srv))
		return // the server is gone: no drain
	}
	soakDrain(t, srv, connect, metricsURL)
}

// goroutineDump stops the server with SIGQUIT and returns its goroutines
// as the runtime printed them, counted by their first frame in lcp or the
// SDK.
func goroutineDump(t *testing.T, srv *servetest.Proc) string {
	t.Helper()
	if err := srv.Signal(syscall.SIGQUIT); err != nil {
		return err.Error()
	}
	_ = srv.Wait(2 * time.Minute)
	count := map[string]int{}
	for _, g := range strings.Split(srv.Stderr(), "\n\n") {
		if !strings.HasPrefix(g, "goroutine ") {
			continue
		}
		where := "?"
		for _, l := range strings.Split(g, "\n")[1:] {
			if strings.Contains(l, "lcptools/lcp") || strings.Contains(l, "go-sdk") || strings.Contains(l, "net/http.") {
				where = argsRe.ReplaceAllString(strings.TrimSpace(l), "(…)")
				break
			}
		}
		count[where]++
	}
	var lines []string
	for where, n := range count {
		lines = append(lines, fmt.Sprintf("%5d %s", n, where))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(lines)))
	return strings.Join(lines, "\n")
}

// soakDrain ends the soak with one drain: calls in flight in a score of
// sessions when SIGTERM comes each get their answer (they take 3 s, the
// drain timeout is 5 s), and the process exits within the drain timeout
// and its grace.
func soakDrain(t *testing.T, srv *servetest.Proc, connect func() (*sdk.ClientSession, error), metricsURL string) {
	const n = 20
	ctx := context.Background()
	// The hang library's worker may have been killed by the soak's last
	// hangs: started again first, so that the 3 s are the calls' own.
	if cs, err := connect(); err == nil {
		_, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "tool_hang", Arguments: map[string]any{"nonce": "dwarm", "seconds": 0}})
		cs.Close()
	}
	errs := make(chan error, n)
	var cancelled atomic.Int64
	for i := range n {
		cs, err := connect()
		if err != nil {
			t.Errorf("drain: connect: %v", err)
			return
		}
		defer cs.Close()
		go func() {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tool_hang", Arguments: map[string]any{"nonce": fmt.Sprint("d", i), "seconds": 3}})
			switch {
			case err != nil:
			case res.IsError && strings.Contains(contentText(res), "ran past its drain timeout"):
				// An answer that says why: on a machine this busy the
				// call (3 s) can take longer than the drain timeout (5 s).
				cancelled.Add(1)
			case res.IsError || len(res.Content) == 0:
				err = fmt.Errorf("error result %q", contentText(res))
			case res.Content[0].(*sdk.TextContent).Text != "woke up":
				err = fmt.Errorf("result %q", res.Content[0].(*sdk.TextContent).Text)
			}
			errs <- err
		}()
	}
	// Every call in flight before the signal.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if v, err := gauge(metricsURL, "lcp_mcp_calls_in_flight"); err == nil && v >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Error("drain: the calls did not start")
			return
		}
	}
	start := time.Now()
	if err := srv.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("drain: a call in flight got %v", err)
		}
	}
	if err := srv.Wait(2 * time.Minute); err != nil {
		t.Errorf("drain: %v", err)
	}
	t.Logf("drain with %d calls in flight (%d cancelled past the drain timeout, with that answer): the process exited %s after SIGTERM", n, cancelled.Load(), time.Since(start).Round(time.Millisecond))
}

// contentText returns the text of a result's first content, or "".
func contentText(res *sdk.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); ok {
		return tc.Text
	}
	return fmt.Sprintf("%T", res.Content[0])
}

// gauge reads one value from the server's /metrics.
func gauge(url, name string) (float64, error) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("no %s in /metrics", name)
}

// logProblems returns up to n lines of a server's log that tell of a
// panic or an error.
func logProblems(log string, n int) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if len(out) < n && (strings.Contains(l, "panic") || strings.Contains(l, `"level":"ERROR"`) || strings.Contains(l, "http: ")) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// pick chooses a call: mostly good ones, and each fault now and then.
func pick(rng *rand.Rand) string {
	switch n := rng.IntN(100); {
	case n < 80:
		return "echo"
	case n < 85:
		return "crash"
	case n < 89:
		return "hang"
	case n < 92:
		return "flood"
	case n < 97:
		return "count"
	default:
		return "huge"
	}
}

// soakCall makes one call of kind and checks its answer; it reports
// whether the session can go on.
func soakCall(ctx context.Context, cs *sdk.ClientSession, kind, nonce string, out *soakOutcome) bool {
	args := map[string]any{"nonce": nonce}
	switch kind {
	case "echo":
		args["ms"] = 20
	case "flood":
		args["lines"] = 1000
	case "huge":
		args["mb"] = 2
	}
	for attempt := 0; ; attempt++ {
		// A hang detector: the server's --timeout is 10 s.
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "tool_" + kind, Arguments: args})
		cancel()
		// 429, or the same refusal on the call's stream (a race for the
		// last place under --max-calls).
		if err != nil && (strings.Contains(err.Error(), "Too Many Requests") || strings.Contains(err.Error(), "its limit: try again shortly")) {
			if attempt == 50 {
				// Answered, 50 times over: the server said why each
				// time, and this client gives up as a real one would.
				// An accounted outcome (a 429), not a lost call.
				out.add(kind + " (429, gave up after 50 tries)")
				return true
			}
			out.mu.Lock()
			out.busy++
			out.mu.Unlock()
			time.Sleep(time.Duration(20+attempt*10) * time.Millisecond)
			continue
		}
		if err != nil {
			out.problem("%s %s: %v", kind, nonce, err)
			return !strings.Contains(err.Error(), "client is closing") && !strings.Contains(err.Error(), "session not found")
		}
		text := ""
		if len(res.Content) > 0 {
			text, _ = res.Content[0].(*sdk.TextContent).Text, true
		}
		ok := false
		switch kind {
		case "echo":
			ok = !res.IsError && text == "echo:"+nonce
		case "crash":
			ok = res.IsError && strings.Contains(text, "worker")
		case "hang":
			// Its own time limit, or another hang's: the worker killed
			// for it takes its other calls with it.
			ok = res.IsError && (strings.Contains(text, "time limit") || strings.Contains(text, "timed out") || strings.Contains(text, "worker died"))
		case "flood":
			ok = !res.IsError && text == "flood:"+nonce
		case "huge":
			ok = !res.IsError && strings.HasPrefix(text, "huge:"+nonce+":yyy") && strings.Contains(text, "more bytes not shown")
		case "count":
			// The old version or the new, or an error saying the library
			// is being reloaded.
			ok = !res.IsError && text == "count:"+nonce || res.IsError && strings.Contains(text, "reloaded")
		}
		if m := nonceRe.FindStringSubmatch(text); m != nil && m[1] != nonce {
			out.problem("MISROUTED: %s %s got the answer of %s", kind, nonce, m[1])
			return true
		}
		if !ok && kind != "echo" && res.IsError && timedOut(text) {
			// Under load a misbehaving tool may reach the time limit (or
			// share a worker killed for another call's): an answer too.
			out.add(kind + " (time limit)")
			return true
		}
		if !ok && res.IsError && strings.Contains(text, "did not start within") {
			// A worker (re)started for the call, on a machine so busy
			// that it missed its start-up limit (30 s): an answer that
			// says so, not a lost call. The libraries beside the
			// rewritten one restart with it (they share its folder).
			out.add(kind + " (start limit)")
			return true
		}
		if !ok {
			out.problem("%s %s: unexpected answer (error %v) %.200q", kind, nonce, res.IsError, text)
			return true
		}
		out.add(kind)
		return true
	}
}

// timedOut reports whether an error result is the time limit's, or the
// death of a worker killed for a call that reached it.
func timedOut(text string) bool {
	return strings.Contains(text, "timed out")
}

// argsRe matches the arguments of a frame in a goroutine dump.
var argsRe = regexp.MustCompile(`\(0x[^)]*\)$|\(\{[^)]*\)$`)

var nonceRe = regexp.MustCompile(`(?:echo|flood|huge|count):(s\d+-\d+)`)

type serverStats struct {
	servetest.Stats
	goroutines int
	sessions   int // open, by lcp_mcp_sessions
}

// settle lets the server let go of what the load made it hold (sessions
// close, idle memory goes back to the system within seconds), then
// measures it. After the load (base not nil) it also waits, up to a
// 2-minute hang detector, for the goroutines and open files to come back
// within the soak's tolerance of base: on a busy machine sessions and
// connections close late, which is not a leak; a leak stays above.
func settle(t *testing.T, srv *servetest.Proc, metricsURL string, base *serverStats) serverStats {
	t.Helper()
	time.Sleep(12 * time.Second) // the rest, not a synchronisation
	rested := time.Now()
	for {
		st, err := servetest.Measure(srv.PID())
		if err != nil {
			t.Fatal(err)
		}
		g, err := goroutines(metricsURL)
		if err != nil {
			t.Fatal(err)
		}
		open, err := gauge(metricsURL, "lcp_mcp_sessions")
		if err != nil {
			t.Fatal(err)
		}
		now := serverStats{Stats: st, goroutines: g, sessions: int(open)}
		if base == nil || now.flatSince(*base) || time.Since(rested) > 2*time.Minute {
			if base != nil {
				t.Logf("settled %s after the 12 s rest; %d sessions open", time.Since(rested).Round(time.Second), now.sessions)
			}
			return now
		}
		time.Sleep(time.Second) // the pace of the polls
	}
}

// flatSince reports whether the goroutines, open files and RSS are
// within the soak's tolerance of before's: room for the workers of the
// fault libraries started meanwhile (each holds a few pipes and
// goroutines; one killed for a hang may still be closing beside its
// replacement), and for what the runtime keeps of the heap (below the
// soft memory limit, 200 MiB; it returns freed pages to the system over
// seconds). A leak per call would be thousands of goroutines or files,
// and an RSS that does not come down.
func (s serverStats) flatSince(before serverStats) bool {
	// A session whose client gave up on closing it (the SDK's DELETE has
	// 5 s, too short on a busy machine) is kept until --session-idle
	// (10 min): a few goroutines each, by design.
	return s.goroutines <= before.goroutines+10+4*s.sessions && s.FDs <= before.FDs+24 && s.RSS <= before.RSS+128<<20
}

// goroutines reads go_goroutines from the server's /metrics.
func goroutines(url string) (int, error) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("no go_goroutines in /metrics")
}
