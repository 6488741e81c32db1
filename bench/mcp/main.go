// Command mcp measures lcp's MCP server against a server built with the
// official TypeScript SDK (bench/mcp/ts_server.mjs) exposing the same
// trivial tool (add two numbers), over streamable HTTP, in one run: the
// same client drives both with -sessions concurrent sessions doing
// tools/call back to back for -duration after a warm-up, and prints calls
// per second, p50 and p99 latency, and the ratio.
//
// The client is a lean one written for this bench on net/http (initialize,
// then JSON-RPC POSTs in the session, reading the JSON or SSE answer),
// so that on a small machine it takes as little CPU as possible from the
// servers it measures; both servers are driven with protocol 2025-11-25.
//
// Both servers run as separate processes on loopback. The TypeScript SDK
// comes from mcp/testdata/node (npm ci there first).
//
//	go run ./bench/mcp
//	go run ./bench/mcp -sessions 8 -duration 10s
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lcptools/lcp/internal/cli"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/sandbox"
	_ "github.com/lcptools/lcp/sandbox/boot" // the sandbox's init, entered before the heavy packages initialize
	"github.com/lcptools/lcp/tool"
)

func main() {
	sandbox.Main() // first: this binary is also the sandbox's init (sandbox/boot enters it sooner)
	serve := flag.String("serve", "", "internal: serve lcp's side at this address")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of lcp's server to this `file`")
	sessions := flag.Int("sessions", 8, "concurrent client sessions")
	duration := flag.Duration("duration", 3*time.Second, "measured time per server and round")
	rounds := flag.Int("rounds", 3, "measured rounds per server, alternating between the servers")
	warmup := flag.Duration("warmup", time.Second, "warm-up time per server")
	nodeModules := flag.String("node-modules", "", "node_modules with @modelcontextprotocol/sdk (default: mcp/testdata/node/node_modules)")
	flag.Parse()
	// The server's garbage is mostly the SDK's per-message JSON decoder
	// buffers (32 KiB each): like `lcp mcp`, both the server and this
	// client collect less often than Go's default.
	cli.TuneGC(context.Background(), os.Getenv)
	if *serve != "" {
		if *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			if err == nil {
				_ = pprof.StartCPUProfile(f)
				defer pprof.StopCPUProfile()
			}
		}
		if err := serveLCP(*serve); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	*profile = *cpuprofile
	if err := run(*sessions, *rounds, *duration, *warmup, *nodeModules); err != nil {
		fmt.Fprintln(os.Stderr, "mcp bench:", err)
		os.Exit(1)
	}
}

// serveLCP is lcp's side: a native tool served by mcp.Server.
func serveLCP(addr string) error {
	add, err := native.Func(tool.Info{
		Name:        "add",
		Description: "Adds two numbers.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
	}, func(ctx context.Context, args map[string]any) (any, error) {
		a, _ := args["a"].(json.Number).Float64()
		b, _ := args["b"].(json.Number).Float64()
		return a + b, nil
	})
	if err != nil {
		return err
	}
	ts, err := native.New(nil, add)
	if err != nil {
		return err
	}
	srv := mcp.NewServer(ts, nil)
	defer srv.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := mcp.Listen(addr, nil)
	if err != nil {
		return err
	}
	fmt.Println("listening")
	return srv.Serve(ctx, ln, nil)
}

type result struct {
	name      string // the server
	calls     int
	elapsed   time.Duration
	latencies []time.Duration
	cpu       time.Duration // the server's CPU time during the phase
}

// cpuPerCall is the server's CPU time per call.
func (r result) cpuPerCall() time.Duration {
	if r.calls == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.calls)
}

// cpuTime reads the user and system CPU time of a process (Linux).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	const ticks = 100 // USER_HZ
	return time.Duration(utime+stime) * time.Second / ticks
}

func (r result) rps() float64 { return float64(r.calls) / r.elapsed.Seconds() }

func (r result) pct(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(float64(len(r.latencies)-1) * p)
	return r.latencies[i]
}

var profile = new(string)

func run(sessions, rounds int, duration, warmup time.Duration, nodeModules string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if nodeModules == "" {
		nodeModules = filepath.Join(root, "mcp", "testdata", "node", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(nodeModules, "@modelcontextprotocol", "sdk")); err != nil {
		return fmt.Errorf("the TypeScript SDK is not installed in %s: run npm ci in mcp/testdata/node", nodeModules)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}

	sides := []*side{
		{name: "lcp (Go SDK)", cmd: func(port int) *exec.Cmd {
			args := []string{"-serve", fmt.Sprintf("127.0.0.1:%d", port)}
			if *profile != "" {
				args = append(args, "-cpuprofile", *profile)
			}
			return exec.Command(exe, args...)
		}},
		{name: "TypeScript SDK", cmd: func(port int) *exec.Cmd {
			cmd := exec.Command("node", filepath.Join(root, "bench", "mcp", "ts_server.mjs"))
			cmd.Env = append(os.Environ(), "LCP_NODE_MODULES="+nodeModules, fmt.Sprintf("PORT=%d", port))
			return cmd
		}},
	}
	for _, sd := range sides {
		stop, err := sd.start(sessions)
		if err != nil {
			return fmt.Errorf("%s: %w", sd.name, err)
		}
		defer stop()
	}
	fmt.Printf("tools/call of a trivial tool over streamable HTTP: %d sessions, %d rounds of %s per server, alternating (%d CPUs)\n\n", sessions, rounds, duration, runtime.NumCPU())
	for _, sd := range sides {
		if _, err := sd.phase(warmup, false); err != nil {
			return fmt.Errorf("%s: %w", sd.name, err)
		}
	}
	for r := 1; r <= rounds; r++ {
		for _, sd := range sides {
			res, err := sd.phase(duration, true)
			if err != nil {
				return fmt.Errorf("%s: %w", sd.name, err)
			}
			fmt.Printf("round %d  %-16s %8.0f calls/s  %6.0f µs CPU/call\n", r, sd.name, res.rps(), float64(res.cpuPerCall().Nanoseconds())/1e3)
			sd.rounds = append(sd.rounds, res)
		}
	}
	fmt.Printf("\n%-16s %12s %10s %10s %8s %14s\n", "server", "best calls/s", "p50", "p99", "calls", "CPU/call (min)")
	for _, sd := range sides {
		var all result
		for _, r := range sd.rounds {
			all.calls += r.calls
			all.latencies = append(all.latencies, r.latencies...)
		}
		slices.Sort(all.latencies)
		fmt.Printf("%-16s %12.0f %10s %10s %8d %12.0fµs\n", sd.name, sd.best(), all.pct(0.50).Round(time.Microsecond), all.pct(0.99).Round(time.Microsecond), all.calls, float64(sd.minCPU().Nanoseconds())/1e3)
	}
	fmt.Printf("\nlcp / TypeScript throughput: %.2fx (goal: 3x)\n", sides[0].best()/sides[1].best())
	if c := sides[0].minCPU(); c > 0 {
		fmt.Printf("TypeScript / lcp server CPU per call: %.2fx\n", float64(sides[1].minCPU())/float64(c))
	}
	return nil
}

// side is one server under test and the client's sessions with it.
type side struct {
	name    string
	cmd     func(port int) *exec.Cmd
	pid     int
	clients []*session
	rounds  []result
}

func (sd *side) best() float64 {
	b := 0.0
	for _, r := range sd.rounds {
		b = max(b, r.rps())
	}
	return b
}

func (sd *side) minCPU() time.Duration {
	var m time.Duration
	for _, r := range sd.rounds {
		if c := r.cpuPerCall(); c > 0 && (m == 0 || c < m) {
			m = c
		}
	}
	return m
}

// start runs the server and opens the sessions; stop ends the server.
func (sd *side) start(sessions int) (stop func(), err error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := sd.cmd(port)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sd.pid = cmd.Process.Pid
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening") {
				ready <- nil
				_, _ = io.Copy(io.Discard, out)
				return
			}
		}
		ready <- errors.New("the server exited before listening")
	}()
	select {
	case err = <-ready:
	case <-time.After(30 * time.Second):
		err = errors.New("the server did not start")
	}
	if err != nil {
		stop()
		return nil, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: sessions, MaxConnsPerHost: sessions * 2}}
	for range sessions {
		cs, err := connect(hc, url)
		if err != nil {
			stop()
			return nil, err
		}
		sd.clients = append(sd.clients, cs)
	}
	return stop, nil
}

// phase runs every session's calls back to back for d.
func (sd *side) phase(d time.Duration, record bool) (r result, err error) {
	r = result{name: sd.name}
	cpu0 := cpuTime(sd.pid)
	defer func() { r.cpu = cpuTime(sd.pid) - cpu0 }()
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i, cs := range sd.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			for n := 0; time.Now().Before(deadline); n++ {
				t0 := time.Now()
				if err := cs.add(i, n); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				if record {
					lat = append(lat, time.Since(t0))
				}
			}
			mu.Lock()
			r.latencies = append(r.latencies, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	r.calls = len(r.latencies)
	slices.Sort(r.latencies)
	return r, firstErr
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// moduleRoot finds the repository's root (the directory of go.mod) from
// the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the lcp repository")
		}
		dir = parent
	}
}

// session is one MCP session of the bench client.
type session struct {
	hc   *http.Client
	url  string
	id   string
	next int
}

const protocolVersion = "2025-11-25"

func connect(hc *http.Client, url string) (*session, error) {
	s := &session{hc: hc, url: url}
	body, hdr, err := s.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(body, `"result"`) {
		return nil, fmt.Errorf("initialize: %s", body)
	}
	s.id = hdr.Get("Mcp-Session-Id")
	if _, _, err := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *session) add(a, b int) error {
	s.next++
	body, _, err := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":%d}}}`, s.next, a, b))
	if err != nil {
		return err
	}
	if !strings.Contains(body, fmt.Sprintf(`"text":"%d"`, a+b)) || strings.Contains(body, `"isError":true`) {
		return fmt.Errorf("unexpected answer %s", body)
	}
	return nil
}

func (s *session) post(msg string) (string, http.Header, error) {
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(msg))
	if err != nil {
		return "", nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", nil, err
	}
	if resp.StatusCode/100 != 2 {
		return "", nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	return string(b), resp.Header, nil
}
