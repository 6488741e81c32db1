package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// proxyFor serves a proxy with opts on a loopback listener and returns an
// HTTP client that goes through it, and the denials it saw.
func proxyFor(t *testing.T, opts *Options) (*http.Client, string, func() []Denial) {
	t.Helper()
	var mu sync.Mutex
	var denials []Denial
	o := *opts
	o.OnDeny = func(d Denial) {
		mu.Lock()
		denials = append(denials, d)
		mu.Unlock()
	}
	p := New(&o)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.Serve(l) }()
	t.Cleanup(func() { l.Close(); p.Close() })
	u, _ := url.Parse("http://" + l.Addr().String())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
	t.Cleanup(c.CloseIdleConnections)
	return c, l.Addr().String(), func() []Denial {
		mu.Lock()
		defer mu.Unlock()
		return append([]Denial(nil), denials...)
	}
}

func origin(t *testing.T) (*httptest.Server, string, int) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	return srv, ap.Addr().String(), int(ap.Port())
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestPlainHTTPByRule(t *testing.T) {
	_, host, port := origin(t)
	rules, _ := ParseRules([]string{fmt.Sprintf("%s:%d", host, port)})
	c, _, denials := proxyFor(t, &Options{Allow: rules})
	if code, body := get(t, c, fmt.Sprintf("http://%s:%d/x", host, port)); code != 200 || body != "hello /x" {
		t.Fatalf("allowed request: %d %q", code, body)
	}
	// Another port of the same host is not on the list.
	code, body := get(t, c, fmt.Sprintf("http://%s:%d/x", host, port+1))
	if code != http.StatusForbidden || !strings.Contains(body, "no rule of the allow-list matches") {
		t.Fatalf("refused request: %d %q", code, body)
	}
	if d := denials(); len(d) != 1 || d[0].Port != port+1 {
		t.Fatalf("denials %+v", d)
	}
}

func TestConnectTunnel(t *testing.T) {
	// A TLS server reached through CONNECT, as HTTPS clients do.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secure") }))
	t.Cleanup(srv.Close)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	rules, _ := ParseRules([]string{"127.0.0.1"})
	c, _, _ := proxyFor(t, &Options{Allow: rules})
	tr := c.Transport.(*http.Transport)
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	if code, body := get(t, c, "https://"+ap.String()+"/"); code != 200 || body != "secure" {
		t.Fatalf("tunnel: %d %q", code, body)
	}
}

func TestConnectRefused(t *testing.T) {
	_, addr, denials := proxyFor(t, &Options{})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT api.example.org:443 HTTP/1.1\r\nHost: api.example.org:443\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d", resp.StatusCode)
	}
	d := denials()
	if len(d) != 1 || d[0].Host != "api.example.org" || d[0].Port != 443 || d[0].Rule != "the allow-list is empty" {
		t.Fatalf("denials %+v", d)
	}
}

func TestAsk(t *testing.T) {
	_, host, port := origin(t)
	var asked []string
	var mu sync.Mutex
	allow := false
	c, _, denials := proxyFor(t, &Options{Ask: func(_ context.Context, h string, p int) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, fmt.Sprintf("%s:%d", h, p))
		return allow
	}})
	u := fmt.Sprintf("http://%s:%d/a", host, port)
	if code, _ := get(t, c, u); code != http.StatusForbidden {
		t.Fatalf("refused by the operator: status %d", code)
	}
	if d := denials(); len(d) != 1 || !strings.Contains(d[0].Rule, "the operator did not allow it") {
		t.Fatalf("denials %+v", d)
	}
	mu.Lock()
	allow = true
	mu.Unlock()
	if code, body := get(t, c, u); code != 200 || body != "hello /a" {
		t.Fatalf("allowed by the operator: %d %q", code, body)
	}
	want := fmt.Sprintf("%s:%d", host, port)
	if len(asked) != 2 || asked[0] != want || asked[1] != want {
		t.Fatalf("asked %v", asked)
	}
}

func TestNameToLoopbackRefused(t *testing.T) {
	_, _, port := origin(t)
	rules, _ := ParseRules([]string{"*.example.org", "localhost"})
	resolve := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	c, _, denials := proxyFor(t, &Options{Allow: rules, Resolve: resolve})
	code, body := get(t, c, fmt.Sprintf("http://rebind.example.org:%d/", port))
	if code != http.StatusForbidden || !strings.Contains(body, "loopback") {
		t.Fatalf("a name resolving to loopback: %d %q", code, body)
	}
	if len(denials()) != 1 {
		t.Fatalf("denials %+v", denials())
	}
	// localhost, named in a rule, reaches the loopback.
	if code, body := get(t, c, fmt.Sprintf("http://localhost:%d/l", port)); code != 200 || body != "hello /l" {
		t.Fatalf("localhost: %d %q", code, body)
	}
}

func TestNotAProxyRequest(t *testing.T) {
	_, addr, _ := proxyFor(t, &Options{})
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestCloseEndsTunnels(t *testing.T) {
	// An echo server held open through a tunnel.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	rules, _ := ParseRules([]string{l.Addr().String()})
	p := New(&Options{Allow: rules})
	a, b := net.Pipe()
	p.ServeConn(b)
	fmt.Fprintf(a, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", l.Addr(), l.Addr())
	br := bufio.NewReader(a)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	go fmt.Fprint(a, "ping")
	buf := make([]byte, 4)
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo %q %v", buf, err)
	}
	p.Close()
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the tunnel is still open after Close")
	}
}

func BenchmarkProxyRequest(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	rules, _ := ParseRules([]string{"127.0.0.1"})
	p := New(&Options{Allow: rules})
	defer p.Close()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go func() { _ = p.Serve(l) }()
	defer l.Close()
	pu, _ := url.Parse("http://" + l.Addr().String())
	for _, bc := range []struct {
		name string
		c    *http.Client
	}{
		{"direct", &http.Client{Transport: &http.Transport{}}},
		{"proxy", &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				resp, err := bc.c.Get(srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
