//go:build linux

package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lcptools/lcp/internal/fulltest"
	"github.com/lcptools/lcp/internal/servetest"
)

var (
	accountFor   = flag.Duration("load", 8*time.Second, "how long TestLoadAccounting runs its load")
	loadSessions = flag.Int("load-sessions", 200, "how many sessions TestLoadAccounting opens")
)

// outcome is what one call got, as the load test counts it.
type outcome string

const (
	gotResult    outcome = "result"     // a JSON-RPC result
	gotToolError outcome = "tool error" // a result with isError, and a reason
	gotRPCError  outcome = "rpc error"  // a JSON-RPC error with a message
	got429       outcome = "429"        // refused, too many calls
	got503       outcome = "503"        // refused, unavailable (draining, sessions)
)

// tally counts outcomes, and keeps a few examples of each unaccounted one.
type tally struct {
	mu       sync.Mutex
	counts   map[outcome]int
	examples map[outcome][]string
}

func newTally() *tally {
	return &tally{counts: map[outcome]int{}, examples: map[outcome][]string{}}
}

func (t *tally) add(o outcome, example string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[o]++
	if example != "" && len(t.examples[o]) < 5 {
		t.examples[o] = append(t.examples[o], example)
	}
}

// accounted reports whether o is one of the answers a call may get.
func accounted(o outcome) bool {
	switch o {
	case gotResult, gotToolError, gotRPCError, got429, got503, "given up (client)":
		return true
	}
	return false
}

// unaccounted returns the count of calls without a proper answer, and a
// description of them.
func (t *tally) unaccounted() (int, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	var b strings.Builder
	keys := make([]string, 0, len(t.counts))
	for o := range t.counts {
		keys = append(keys, string(o))
	}
	sort.Strings(keys)
	for _, k := range keys {
		o := outcome(k)
		if accounted(o) {
			continue
		}
		n += t.counts[o]
		fmt.Fprintf(&b, "%s: %d, e.g. %q\n", o, t.counts[o], t.examples[o])
	}
	return n, b.String()
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.counts))
	for o := range t.counts {
		keys = append(keys, string(o))
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, t.counts[outcome(k)]))
	}
	return strings.Join(parts, " ")
}

// rawSession is an MCP session over plain HTTP, so that the test sees
// exactly what the server sent: status, headers and each event.
type rawSession struct {
	url, id string
	client  *http.Client
	next    atomic.Int64
}

func (s *rawSession) post(ctx context.Context, msg any) (*http.Response, error) {
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	return s.client.Do(req)
}

// openRaw opens a session: initialize, then notifications/initialized.
func openRaw(ctx context.Context, url string, client *http.Client) (*rawSession, error) {
	s := &rawSession{url: url, client: client}
	resp, err := s.post(ctx, map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "load", "version": "1"}}})
	if err != nil {
		return nil, err
	}
	o, detail := readAnswer(resp, json.RawMessage("0"))
	if o != gotResult {
		return nil, fmt.Errorf("initialize: %s: %s", o, detail)
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	if s.id == "" {
		return nil, errors.New("initialize: no Mcp-Session-Id")
	}
	resp, err = s.post(ctx, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return nil, fmt.Errorf("notifications/initialized: HTTP %d", resp.StatusCode)
	}
	return s, nil
}

// rpcReply is a JSON-RPC response as the test reads it.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// readAnswer reads the answer to the request id from resp (an event
// stream or a JSON body) and classifies it; detail is the result's text
// or what went wrong.
func readAnswer(resp *http.Response, id json.RawMessage) (outcome, string) {
	defer resp.Body.Close()
	body := func() string {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return strings.TrimSpace(string(b))
	}
	reply := func(data []byte) (outcome, string, bool) {
		var r rpcReply
		if err := json.Unmarshal(data, &r); err != nil {
			return "undecodable", fmt.Sprintf("%v: %.200s", err, data), true
		}
		if r.Method != "" || !bytes.Equal(bytes.TrimSpace(r.ID), id) {
			return "", "", false // a notification, or another request's
		}
		if r.Error != nil {
			if r.Error.Message == "" {
				return "rpc error without a reason", string(data), true
			}
			return gotRPCError, r.Error.Message, true
		}
		if len(r.Result) == 0 {
			return "response without a result", string(data), true
		}
		return gotResult, string(r.Result), true
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		b := body()
		o, detail, ok := reply([]byte(b))
		if !ok || o != gotRPCError {
			return outcome(fmt.Sprintf("HTTP %d without a JSON-RPC error", resp.StatusCode)), b
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			return got429, detail
		}
		return got503, detail
	default:
		return outcome(fmt.Sprintf("HTTP %d", resp.StatusCode)), body()
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		o, detail, ok := reply([]byte(body()))
		if !ok {
			return "JSON body without the response", detail
		}
		return o, detail
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var data []byte
	events := 0
	for {
		line, err := br.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 && err == nil {
			if len(data) > 0 {
				events++
				if o, detail, ok := reply(data); ok {
					return o, detail
				}
			}
			data = data[:0]
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return "HTTP 200, stream ended without the response", fmt.Sprintf("after %d events", events)
			}
			return "HTTP 200, stream broke", fmt.Sprintf("after %d events: %v", events, err)
		}
	}
}

// call makes one tools/call and classifies its answer.
func (s *rawSession) call(ctx context.Context, name string, args map[string]any) (outcome, string) {
	n := s.next.Add(1)
	id := json.RawMessage(fmt.Sprint(n))
	resp, err := s.post(ctx, map[string]any{"jsonrpc": "2.0", "id": n, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		return "transport error", err.Error()
	}
	return readAnswer(resp, id)
}

// TestLoadAccounting drives one `lcp mcp --http` with -load-sessions
// sessions (200) of Python calls for -load (8 s; longer runs with the
// flag) and counts what each call got: a result, 429 or 503 with a
// JSON-RPC error, or a JSON-RPC error with a reason. Every call must be
// one of those: none may end with a stream that ends without its answer.
// --max-calls is set low so that refusals happen too.
func TestLoadAccounting(t *testing.T) {
	fulltest.Only(t, "load accounting at 200 sessions")
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("skipping the load test: python3 is not installed")
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
		"--timeout", "20s", "--max-calls", "48", "--log-format", "json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Kill)
	client := newLoadClient(4 * *loadSessions)

	warm, err := openRaw(ctx, srv.URL, client)
	if err != nil {
		t.Fatal(err)
	}
	if o, detail := warm.call(ctx, "tool_echo", map[string]any{"nonce": "warm"}); o != gotResult {
		t.Fatalf("warm-up call: %s: %s", o, detail)
	}

	out := newTally()
	stop := time.Now().Add(*accountFor)
	var wg sync.WaitGroup
	var opened atomic.Int64
	for i := range *loadSessions {
		wg.Go(func() {
			began := time.Now()
			s, err := openRaw(ctx, srv.URL, client)
			if err != nil {
				out.add("session not opened", openFailure(err, time.Since(began)))
				return
			}
			opened.Add(1)
			// Two calls at a time in each session, of a mix: mostly
			// good ones, a crash of the worker now and then, slow
			// ones, floods of output, and clients that give up.
			var lanes sync.WaitGroup
			for lane := range 2 {
				lanes.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(i), uint64(lane)))
					for j := 0; time.Now().Before(stop); j++ {
						loadCall(ctx, s, rng, fmt.Sprintf("s%d-%d-%d", i, lane, j), out)
					}
				})
			}
			lanes.Wait()
		})
	}
	wg.Wait()
	t.Logf("load %s, %d sessions: %s", *accountFor, opened.Load(), out)
	for _, o := range []outcome{gotToolError, gotRPCError, got429, got503} {
		if ex := out.examples[o]; len(ex) > 0 {
			t.Logf("%s, e.g. %.300q", o, ex[0])
		}
	}
	if n, desc := out.unaccounted(); n > 0 {
		t.Errorf("%d calls without a proper answer:\n%s\nserver log tail:\n%s", n, desc, tail(srv.Stderr(), 30))
	}
	if out.counts[gotResult] == 0 {
		t.Errorf("no call got a result: %s", out)
	}
}

// loadCall makes one call of a kind picked by rng and counts its outcome.
func loadCall(ctx context.Context, s *rawSession, rng *rand.Rand, nonce string, out *tally) {
	name, args := "tool_echo", map[string]any{"nonce": nonce, "ms": 10}
	want := "echo:" + nonce
	switch n := rng.IntN(100); {
	case n < 3:
		name, args, want = "tool_crash", map[string]any{"nonce": nonce}, ""
	case n < 8:
		name, args, want = "tool_hang", map[string]any{"nonce": nonce, "seconds": 1}, "woke up"
	case n < 12:
		name, args, want = "tool_flood", map[string]any{"nonce": nonce, "lines": 200}, "flood:"+nonce
	case n < 16:
		// A client that gives up: it closes the connection mid-call.
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, _ = s.call(cctx, "tool_hang", map[string]any{"nonce": nonce, "seconds": 2})
		out.add("given up (client)", "")
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	o, detail := s.call(cctx, name, args)
	failed := strings.Contains(detail, `"isError":true`)
	switch {
	case o != gotResult:
	case want == "" && !failed:
		o = "a crash without an error"
	case failed && want != "":
		// A tool error is an answer with a reason: a worker killed for
		// another call (a crash, a call stopped because its client left)
		// takes the calls beside it.
		o = gotToolError
	case want != "" && !strings.Contains(detail, want):
		o = "wrong result"
	}
	out.add(o, detail)
}

// openFailure describes a session that did not open for the test's
// report: the error, how long the attempt took, and what the error wraps,
// so that a failure seen once under load says where it came from (a
// transport-level timeout, a context, the server's answer).
func openFailure(err error, took time.Duration) string {
	var ne net.Error
	timeout := errors.As(err, &ne) && ne.Timeout()
	return fmt.Sprintf("%v (after %s; context deadline: %t, timeout: %t, error chain: %s)",
		err, took.Round(time.Millisecond), errors.Is(err, context.DeadlineExceeded), timeout, errorChain(err))
}

// errorChain lists the types of err and of the errors it wraps.
func errorChain(err error) string {
	var types []string
	for e := err; e != nil && len(types) < 8; e = errors.Unwrap(e) {
		types = append(types, fmt.Sprintf("%T", e))
	}
	return strings.Join(types, " > ")
}

// newLoadClient returns an HTTP client that keeps up to idle connections.
func newLoadClient(idle int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: idle}}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
