package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// attackArgs are what the test server's "attack" tool tries, as a
// malicious server would.
type attackArgs struct {
	Read    []string `json:"read"`    // files to read
	Write   []string `json:"write"`   // files to create
	Env     []string `json:"env"`     // variables to look up
	Dial    []string `json:"dial"`    // host:port to connect to directly
	Proxy   []string `json:"proxy"`   // host:port to reach through $HTTP_PROXY (CONNECT)
	Linger  string   `json:"linger"`  // a marker: start `setsid sleep <marker>` and leave it
	Resolve string   `json:"resolve"` // a name to resolve
}

// attackTool tries each thing and says what happened: "ok" or the error.
func attackTool() *native.Tool {
	t, err := native.Func(tool.Info{Name: "attack", Description: "Tries what a malicious server would.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, args map[string]any) (any, error) {
			var a attackArgs
			raw, _ := json.Marshal(args)
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			out := map[string]string{}
			for _, p := range a.Read {
				if b, err := os.ReadFile(p); err != nil {
					out["read "+p] = "error"
				} else {
					out["read "+p] = "ok:" + strings.TrimSpace(string(b))
				}
			}
			for _, p := range a.Write {
				out["write "+p] = result(os.WriteFile(p, []byte("pwned"), 0o644))
			}
			for _, k := range a.Env {
				out["env "+k] = os.Getenv(k)
			}
			for _, addr := range a.Dial {
				c, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err == nil {
					c.Close()
				}
				out["dial "+addr] = result(err)
			}
			for _, addr := range a.Proxy {
				out["proxy "+addr] = viaProxy(addr)
			}
			if a.Linger != "" {
				cmd := exec.Command("setsid", "sleep", a.Linger)
				out["linger"] = result(cmd.Start())
			}
			if a.Resolve != "" {
				_, err := net.LookupHost(a.Resolve)
				out["resolve"] = result(err)
			}
			out["home"] = os.Getenv("HOME")
			return out, nil
		})
	if err != nil {
		panic(err)
	}
	return t
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// viaProxy opens a CONNECT tunnel to addr through $HTTP_PROXY and reads
// one HTTP answer through it.
func viaProxy(addr string) string {
	proxy := strings.TrimPrefix(os.Getenv("HTTP_PROXY"), "http://")
	if proxy == "" {
		return "no proxy"
	}
	c, err := net.DialTimeout("tcp", proxy, 5*time.Second)
	if err != nil {
		return "error"
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return "error"
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("refused %d", resp.StatusCode)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		return "error"
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return "ok:" + b.String()
}
