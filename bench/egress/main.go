// Command egress measures what boxing costs, against references measured
// in the same run:
//
//	(a) one plain HTTP request to a loopback server through lcp's egress
//	    proxy, against the same request sent directly (a new connection
//	    each time, both ways; the runs alternate);
//	(b) a stdio MCP server's start (spawn, MCP initialize, tools/list) in
//	    its box, against the same server with "sandbox": false.
//
// It prints the load average first: on a busy machine both sides slow
// down, the ratios less so.
//
//	go run ./bench/egress [-n 2000] [-starts 30]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lcptools/lcp/egress"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/sandbox"
	_ "github.com/lcptools/lcp/sandbox/boot" // the sandbox's init, entered before the heavy packages initialize
	"github.com/lcptools/lcp/tool"
)

const serveArg = "lcp-bench-egress-server"

func main() {
	sandbox.Main() // first: this binary is also the sandbox's init (sandbox/boot enters it sooner)
	if len(os.Args) > 1 && os.Args[1] == serveArg {
		serve()
		return
	}
	n := flag.Int("n", 2000, "requests per way")
	starts := flag.Int("starts", 30, "server starts per way")
	flag.Parse()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average: %s\n", strings.TrimSpace(string(load)))
	proxyCost(*n)
	if st := sandbox.Probe(); !st.Available {
		fmt.Printf("server start: skipped, no sandbox here (%s)\n", st.Reason)
		return
	}
	serverStart(*starts)
}

func proxyCost(n int) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	rules, _ := egress.ParseRules([]string{l.Addr().String()})
	p := egress.New(&egress.Options{Allow: rules})
	defer p.Close()
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go p.Serve(pl)
	pu, _ := url.Parse("http://" + pl.Addr().String())
	direct := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	proxied := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: http.ProxyURL(pu)}}
	target := "http://" + l.Addr().String() + "/"
	get := func(c *http.Client) time.Duration {
		start := time.Now()
		resp, err := c.Get(target)
		if err != nil {
			log.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			log.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	var d, pr []time.Duration
	for i := 0; i < n+50; i++ {
		a, b := get(direct), get(proxied)
		if i >= 50 {
			d, pr = append(d, a), append(pr, b)
		}
	}
	fmt.Printf("plain HTTP request, loopback (%d each): direct p50 %s p90 %s; through the proxy p50 %s p90 %s; ratio p50 %.2fx, cost %s per request\n",
		n, pct(d, 50), pct(d, 90), pct(pr, 50), pct(pr, 90), float64(pct(pr, 50))/float64(pct(d, 50)), pct(pr, 50)-pct(d, 50))
}

func serverStart(n int) {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	state, err := os.MkdirTemp("", "bench-egress-state-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(state)
	start := func(boxed bool) time.Duration {
		sc := mcp.ServerConfig{Alias: "bench", Type: mcp.TypeStdio, Command: exe, Args: []string{serveArg}}
		if !boxed {
			sc.Sandbox = &mcp.SandboxConfig{Off: true}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		t0 := time.Now()
		c, err := mcp.NewClientToolset(ctx, []mcp.ServerConfig{sc}, &mcp.ClientOptions{StateDir: state})
		if err != nil {
			log.Fatal(err)
		}
		infos, err := c.Tools(ctx)
		d := time.Since(t0)
		if err != nil || len(infos) != 1 {
			log.Fatalf("the server did not start (boxed %v): %v %v", boxed, err, c.Diagnostics())
		}
		c.Close()
		return d
	}
	var out, in []time.Duration
	for i := 0; i < n+3; i++ {
		a, b := start(false), start(true)
		if i >= 3 {
			out, in = append(out, a), append(in, b)
		}
	}
	fmt.Printf("stdio MCP server start to tools/list (%d each): outside a box p50 %s p90 %s; in its box p50 %s p90 %s; ratio p50 %.2fx, cost %s per start\n",
		n, pct(out, 50), pct(out, 90), pct(in, 50), pct(in, 90), float64(pct(in, 50))/float64(pct(out, 50)), pct(in, 50)-pct(out, 50))
}

// serve is the measured server: one tool, over stdio.
func serve() {
	t, err := native.Func(tool.Info{Name: "ping", Description: "Answers pong.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, map[string]any) (any, error) { return "pong", nil })
	if err != nil {
		log.Fatal(err)
	}
	ts, err := native.New(nil, t)
	if err != nil {
		log.Fatal(err)
	}
	srv := mcp.NewServer(ts, nil)
	defer srv.Close()
	_ = srv.ServeStdio(context.Background())
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[(len(s)-1)*p/100].Round(time.Microsecond)
}
