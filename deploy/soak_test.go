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
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/internal/servetest"
)

var soakFor = flag.Duration("soak", 30*time.Second, "how long the soak test runs its load (10m for the long mode)")

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
	srv, err := servetest.Start(bin, []string{"mcp", "--http", "127.0.0.1:0", "--tools", tools, "--token", token,
		"--timeout", "10s", "--max-calls", "128", "--log-format", "json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Kill)
	metricsURL := strings.TrimSuffix(srv.URL, "/mcp") + "/metrics"

	const sessions = 100
	connect := func() (*sdk.ClientSession, error) {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		return sdk.NewClient(&sdk.Implementation{Name: "soak", Version: "1"}, nil).
			Connect(cctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{}}}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	}
	// Warm up: every library's worker started, then all sessions closed.
	warm, err := connect()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tool_echo", "tool_flood"} {
		if _, err := warm.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{"nonce": "warm", "lines": 1}}); err != nil {
			t.Fatal(err)
		}
	}
	warm.Close()
	before := settle(t, srv, metricsURL)

	out := &soakOutcome{byKind: map[string]int{}}
	var calls atomic.Int64
	stop := time.Now().Add(*soakFor)
	var wg sync.WaitGroup
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
				soakCall(ctx, cs, kind, nonce, out)
			}
		}()
	}
	wg.Wait()
	after := settle(t, srv, metricsURL)

	out.mu.Lock()
	defer out.mu.Unlock()
	t.Logf("soak %s, %d sessions: %d calls %v, %d refused busy (429) and retried", *soakFor, sessions, calls.Load(), out.byKind, out.busy)
	t.Logf("server before: RSS %s, %d goroutines, %d open files, %d threads", servetest.MB(before.RSS), before.goroutines, before.FDs, before.Threads)
	t.Logf("server after:  RSS %s, %d goroutines, %d open files, %d threads; peak RSS %s",
		servetest.MB(after.RSS), after.goroutines, after.FDs, after.Threads, servetest.MB(after.PeakRSS))
	if len(out.problems) > 0 {
		t.Errorf("lost, misrouted or wrong answers:\n%s", strings.Join(out.problems, "\n"))
	}
	if out.byKind["echo"] == 0 || out.byKind["crash"] == 0 || out.byKind["hang"] == 0 {
		t.Errorf("the mix did not happen: %v", out.byKind)
	}
	// Flat: a tolerance for what the runtime keeps (heap below the soft
	// memory limit, 200 MiB) and for the workers of the fault libraries
	// started meanwhile (each holds a few pipes; one killed for a hang may
	// still be closing beside its replacement). A leak per call would be
	// thousands of either.
	if after.goroutines > before.goroutines+10 {
		t.Errorf("goroutines: %d before, %d after", before.goroutines, after.goroutines)
	}
	if after.FDs > before.FDs+24 {
		t.Errorf("open files: %d before, %d after", before.FDs, after.FDs)
	}
	if after.RSS > before.RSS+128<<20 {
		t.Errorf("RSS: %s before, %s after", servetest.MB(before.RSS), servetest.MB(after.RSS))
	}
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
	case n < 97:
		return "flood"
	default:
		return "huge"
	}
}

// soakCall makes one call of kind and checks its answer.
func soakCall(ctx context.Context, cs *sdk.ClientSession, kind, nonce string, out *soakOutcome) {
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
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "tool_" + kind, Arguments: args})
		cancel()
		if err != nil && strings.Contains(err.Error(), "Too Many Requests") && attempt < 50 {
			out.mu.Lock()
			out.busy++
			out.mu.Unlock()
			time.Sleep(time.Duration(20+attempt*10) * time.Millisecond)
			continue
		}
		if err != nil {
			out.problem("%s %s: %v", kind, nonce, err)
			return
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
		}
		if m := nonceRe.FindStringSubmatch(text); m != nil && m[1] != nonce {
			out.problem("MISROUTED: %s %s got the answer of %s", kind, nonce, m[1])
			return
		}
		if !ok && kind != "echo" && res.IsError && timedOut(text) {
			// Under load a misbehaving tool may reach the time limit (or
			// share a worker killed for another call's): an answer too.
			out.add(kind + " (time limit)")
			return
		}
		if !ok {
			{
				out.problem("%s %s: unexpected answer (error %v) %.200q", kind, nonce, res.IsError, text)
			}
			return
		}
		out.add(kind)
		return
	}
}

// timedOut reports whether an error result is the time limit's, or the
// death of a worker killed for a call that reached it.
func timedOut(text string) bool {
	return strings.Contains(text, "timed out")
}

var nonceRe = regexp.MustCompile(`(?:echo|flood|huge):(s\d+-\d+)`)

type serverStats struct {
	servetest.Stats
	goroutines int
}

// settle lets the server let go of what the load made it hold (sessions
// close, idle memory goes back to the system within seconds), then
// measures it.
func settle(t *testing.T, srv *servetest.Proc, metricsURL string) serverStats {
	t.Helper()
	time.Sleep(12 * time.Second)
	st, err := servetest.Measure(srv.PID())
	if err != nil {
		t.Fatal(err)
	}
	g, err := goroutines(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	return serverStats{Stats: st, goroutines: g}
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
