//go:build linux

// Command replicas measures the throughput of `lcp mcp --http` replicas
// behind nginx (deploy/nginx.conf): three replicas against one, the same
// load in the same run, rounds alternating between the two set-ups. The
// load is -sessions MCP sessions (the official Go SDK client) calling a
// Python tool back to back. It prints calls per second of each and the
// ratio. On a machine with few cores expect no gain: the replicas share
// them.
//
//	go run ./bench/replicas
//	go run ./bench/replicas -sessions 32 -duration 10s -rounds 3
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/internal/servetest"
)

const token = "replicas-bench-token-0123456789"

type bearer struct{}

func (bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return http.DefaultTransport.RoundTrip(r)
}

func main() {
	sessions := flag.Int("sessions", 24, "concurrent MCP sessions")
	duration := flag.Duration("duration", 5*time.Second, "measured time per set-up and round")
	rounds := flag.Int("rounds", 3, "rounds, alternating between the set-ups")
	flag.Parse()
	if err := run(*sessions, *duration, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "replicas:", err)
		os.Exit(1)
	}
}

type setup struct {
	name  string
	url   string
	calls int64
	time  time.Duration
}

func run(sessions int, duration time.Duration, rounds int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "lcp-replicas-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := servetest.Build(ctx, dir)
	if err != nil {
		return err
	}
	tools, err := servetest.WriteFaultyTools(dir)
	if err != nil {
		return err
	}
	recipe, err := os.ReadFile(filepath.Join(moduleDir(), "deploy", "nginx.conf"))
	if err != nil {
		return err
	}
	start := func(n int) (string, func(), error) {
		var procs []*servetest.Proc
		var addrs []string
		stop := func() {
			for _, p := range procs {
				p.Kill()
			}
		}
		for i := 1; i <= n; i++ {
			port, _ := servetest.FreePort()
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			p, err := servetest.Start(bin, []string{"mcp", "--http", addr, "--tools", tools, "--token", token,
				"--replica-id", fmt.Sprintf("r%d", i), "--log-format", "json", "--max-calls", "256", "--max-calls-per-session", "4"}, nil)
			if err != nil {
				stop()
				return "", nil, err
			}
			procs = append(procs, p)
			addrs = append(addrs, addr)
		}
		port, _ := servetest.FreePort()
		listen := fmt.Sprintf("127.0.0.1:%d", port)
		conf, err := servetest.RenderConfig(string(recipe), listen, addrs)
		if err != nil {
			stop()
			return "", nil, err
		}
		ndir, _ := os.MkdirTemp(dir, "nginx-")
		ngx, err := servetest.StartNginx(ndir, conf, listen)
		if err != nil {
			stop()
			return "", nil, err
		}
		return "http://" + listen + "/mcp", func() { ngx.Stop(); stop() }, nil
	}
	one, stopOne, err := start(1)
	if err != nil {
		return err
	}
	defer stopOne()
	three, stopThree, err := start(3)
	if err != nil {
		return err
	}
	defer stopThree()
	setups := []*setup{{name: "1 replica behind nginx", url: one}, {name: "3 replicas behind nginx", url: three}}
	for _, s := range setups {
		if _, err := load(ctx, s.url, sessions, time.Second); err != nil { // warm-up: workers started
			return err
		}
	}
	for r := range rounds {
		for _, s := range setups {
			n, err := load(ctx, s.url, sessions, duration)
			if err != nil {
				return err
			}
			s.calls += n
			s.time += duration
			fmt.Printf("round %d, %s: %.0f calls/s\n", r+1, s.name, float64(n)/duration.Seconds())
		}
	}
	a, b := setups[0], setups[1]
	ra, rb := float64(a.calls)/a.time.Seconds(), float64(b.calls)/b.time.Seconds()
	fmt.Printf("\n%s: %.0f calls/s\n%s: %.0f calls/s\nratio (3 replicas / 1): %.2f\n", a.name, ra, b.name, rb, rb/ra)
	return nil
}

// load runs sessions clients calling tool_echo back to back for d and
// returns the calls answered correctly.
func load(ctx context.Context, url string, sessions int, d time.Duration) (int64, error) {
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	var first error
	var mu sync.Mutex
	deadline := time.Now().Add(d)
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
				Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{}}}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				mu.Lock()
				first = err
				mu.Unlock()
				return
			}
			defer cs.Close()
			for i := 0; time.Now().Before(deadline); i++ {
				nonce := fmt.Sprintf("%d-%d", s, i)
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tool_echo", Arguments: map[string]any{"nonce": nonce}})
				if err == nil && !res.IsError && res.Content[0].(*sdk.TextContent).Text == "echo:"+nonce {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	if failed.Load() > 0 {
		return 0, fmt.Errorf("%d calls failed", failed.Load())
	}
	return ok.Load(), nil
}

func moduleDir() string {
	wd, _ := os.Getwd()
	for d := wd; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return wd
}
