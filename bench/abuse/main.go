//go:build linux

// Command abuse reproduces the abuse of issue 16 against `lcp mcp --http`
// and measures the server from /proc while a well-behaved client keeps
// calling a tool: eight 3.9 MB JSON-RPC batches at once (several rounds),
// eight 3.9 MB single calls at once, then 12,200 sessions opened as fast
// as the machine allows. It prints the server's peak resident memory
// (VmHWM), how each attack was answered, and how many of the good
// client's calls were answered correctly.
//
//	go run ./bench/abuse
//	go run ./bench/abuse -sessions 12200 -rounds 5
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/internal/servetest"
)

const token = "abuse-bench-token-0123456789"

func main() {
	sessions := flag.Int("sessions", 12200, "sessions the attacker opens")
	rounds := flag.Int("rounds", 5, "rounds of eight concurrent 3.9 MB batches")
	batchMB := flag.Float64("batch-mb", 3.9, "size of each batch")
	bin := flag.String("bin", "", "an lcp binary to attack instead of this tree's (e.g. an earlier version, for a reference)")
	flag.Parse()
	if err := run(*sessions, *rounds, *batchMB, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "abuse:", err)
		os.Exit(1)
	}
}

func run(sessions, rounds int, batchMB float64, bin string) error {
	reference := bin
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "lcp-abuse-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		if bin, err = servetest.Build(ctx, dir); err != nil {
			return err
		}
	}
	tools, err := servetest.WriteFaultyTools(dir)
	if err != nil {
		return err
	}
	args := []string{"mcp", "--http", "127.0.0.1:0", "--tools", tools, "--token", token}
	if reference == "" {
		args = append(args, "--log-format", "json")
	}
	srv, err := servetest.Start(bin, args, strings.Fields(os.Getenv("ABUSE_ENV")))
	if err != nil {
		return err
	}
	defer srv.Kill()
	start, _ := servetest.Measure(srv.PID())
	fmt.Printf("server pid %d at %s; RSS at start %s\n", srv.PID(), srv.URL, servetest.MB(start.RSS))

	// Sample the server's memory all along.
	var peak atomic.Int64
	stopSampling := make(chan struct{})
	go func() {
		for {
			if st, err := servetest.Measure(srv.PID()); err == nil && st.RSS > peak.Load() {
				peak.Store(st.RSS)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()

	// The good client: one session, one call after the other.
	good := newGoodClient(ctx, srv.URL)
	if good.err != nil {
		return fmt.Errorf("the good client cannot connect: %w", good.err)
	}
	stopGood := make(chan struct{})
	goodDone := make(chan struct{})
	go func() { good.loop(stopGood); close(goodDone) }()

	hc := &http.Client{Timeout: 2 * time.Minute}
	// Phase 1: batches, in a 2025-03-26 session (the last revision that
	// has them) and without a session.
	sid, err := openSession(hc, srv.URL, "2025-03-26")
	if err != nil {
		return err
	}
	batch := makeBatch(int(batchMB * (1 << 20)))
	for _, target := range []struct{ name, sid string }{{"in a 2025-03-26 session", sid}, {"without a session", ""}} {
		statuses := map[int]int{}
		var mu sync.Mutex
		t0 := time.Now()
		for range rounds {
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					code := postRaw(hc, srv.URL, batch, target.sid)
					mu.Lock()
					statuses[code]++
					mu.Unlock()
				}()
			}
			wg.Wait()
		}
		st, _ := servetest.Measure(srv.PID())
		fmt.Printf("8 x %.1f MB batches x %d rounds %s: answers %v in %s; RSS after %s, peak %s\n", batchMB, rounds, target.name, statuses,
			time.Since(t0).Round(time.Millisecond), servetest.MB(st.RSS), servetest.MB(st.PeakRSS))
	}

	// Phase 2: eight 3.9 MB single calls at once (allowed: within the
	// 4 MiB body limit), the result cut to the result limit.
	{
		big := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tool_echo","arguments":{"nonce":"%s"}}}`, strings.Repeat("z", int(batchMB*(1<<20))-200))
		statuses := map[int]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		t0 := time.Now()
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := openSession(hc, srv.URL, "2025-06-18")
				code := 0
				if err == nil {
					code = postRaw(hc, srv.URL, []byte(big), s)
				}
				mu.Lock()
				statuses[code]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		st, _ := servetest.Measure(srv.PID())
		fmt.Printf("8 x %.1f MB tools/call at once: answers %v in %s; RSS after %s, peak %s\n", batchMB, statuses,
			time.Since(t0).Round(time.Millisecond), servetest.MB(st.RSS), servetest.MB(st.PeakRSS))
	}

	// Phase 3: sessions, 64 at a time.
	{
		statuses := map[int]int{}
		var mu sync.Mutex
		next := make(chan struct{})
		var wg sync.WaitGroup
		t0 := time.Now()
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := &http.Client{Timeout: 30 * time.Second}
				for range next {
					code := initialize(c, srv.URL)
					mu.Lock()
					statuses[code]++
					mu.Unlock()
				}
			}()
		}
		for range sessions {
			next <- struct{}{}
		}
		close(next)
		wg.Wait()
		after, _ := servetest.Measure(srv.PID())
		fmt.Printf("%d sessions opened: answers %v in %s; RSS after %s\n", sessions, statuses, time.Since(t0).Round(time.Millisecond), servetest.MB(after.RSS))
	}

	close(stopGood)
	<-goodDone
	close(stopSampling)
	end, _ := servetest.Measure(srv.PID())
	if end.PeakRSS > peak.Load() {
		peak.Store(end.PeakRSS)
	}
	fmt.Printf("good client: %d calls answered correctly, %d failed (%s)\n", good.ok.Load(), good.failed.Load(), good.lastErr())
	fmt.Printf("server peak RSS (VmHWM): %s (limit asked: 300 MiB); RSS at the end %s, %d open files\n",
		servetest.MB(peak.Load()), servetest.MB(end.RSS), end.FDs)
	if peak.Load() > 300<<20 || good.failed.Load() > 0 || good.ok.Load() == 0 {
		return fmt.Errorf("FAILED: peak RSS %s, good calls %d ok / %d failed", servetest.MB(peak.Load()), good.ok.Load(), good.failed.Load())
	}
	fmt.Println("PASS")
	return nil
}

func makeBatch(size int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; b.Len() < size-100; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func header(req *http.Request, sid, version string) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
}

func postRaw(hc *http.Client, url string, body []byte, sid string) int {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	header(req, sid, "")
	resp, err := hc.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func initialize(hc *http.Client, url string) int {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	header(req, "", "")
	resp, err := hc.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func openSession(hc *http.Client, url, version string) (string, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`, version)
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	header(req, "", "")
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		return "", fmt.Errorf("initialize: status %d, no session", resp.StatusCode)
	}
	req, _ = http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	header(req, sid, version)
	if resp, err := hc.Do(req); err == nil {
		resp.Body.Close()
	}
	return sid, nil
}

// goodClient is a well-behaved MCP client (the official Go SDK's).
type goodClient struct {
	cs     *sdk.ClientSession
	err    error
	ok     atomic.Int64
	failed atomic.Int64
	mu     sync.Mutex
	last   error
}

type bearer struct{}

func (bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return http.DefaultTransport.RoundTrip(r)
}

func newGoodClient(ctx context.Context, url string) *goodClient {
	g := &goodClient{}
	c := sdk.NewClient(&sdk.Implementation{Name: "good", Version: "1"}, nil)
	g.cs, g.err = c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{}}}, nil)
	return g
}

func (g *goodClient) loop(stop chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		nonce := fmt.Sprintf("good-%d", i)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := g.cs.CallTool(ctx, &sdk.CallToolParams{Name: "tool_echo", Arguments: map[string]any{"nonce": nonce}})
		cancel()
		if err == nil && !res.IsError && len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*sdk.TextContent); ok && tc.Text == "echo:"+nonce {
				g.ok.Add(1)
				time.Sleep(50 * time.Millisecond)
				continue
			}
		}
		g.failed.Add(1)
		g.mu.Lock()
		g.last = fmt.Errorf("call %s: %v %+v", nonce, err, res)
		g.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
}

func (g *goodClient) lastErr() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil {
		return "no error"
	}
	return g.last.Error()
}
