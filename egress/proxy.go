package egress

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Proxy. The zero value refuses everything.
type Options struct {
	// Allow are the rules of the allow-list.
	Allow List
	// Ask decides a connection no rule allows: true lets it through. It
	// is called from the goroutine of that connection, which waits; nil
	// refuses such connections at once.
	Ask func(ctx context.Context, host string, port int) bool
	// OnDeny is told of every refusal, from the goroutine of the
	// connection.
	OnDeny func(Denial)
	// Logger receives a warning for every refusal; nil discards them.
	Logger *slog.Logger
	// Dial connects to an address the proxy resolved; nil means a
	// net.Dialer with a 30 s time limit.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Resolve looks up a name; nil means net.DefaultResolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Denial is one connection the proxy refused.
type Denial struct {
	Host string
	Port int
	// Rule says what decided: "no rule of the allow-list matches", "the
	// operator refused it", or the rule and why it did not apply.
	Rule string
}

func (d Denial) String() string {
	return fmt.Sprintf("network access to %s refused: %s", net.JoinHostPort(d.Host, strconv.Itoa(d.Port)), d.Rule)
}

// Proxy is an HTTP proxy that enforces an allow-list. It is safe for
// concurrent use.
type Proxy struct {
	opts Options
	srv  *http.Server
	ln   *connListener

	mu      sync.Mutex
	closed  bool
	tunnels map[net.Conn]struct{}
	serving sync.Once
}

// New returns a proxy with the options o (nil refuses everything).
func New(o *Options) *Proxy {
	p := &Proxy{tunnels: map[net.Conn]struct{}{}}
	if o != nil {
		p.opts = *o
	}
	if p.opts.Logger == nil {
		p.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if p.opts.Dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second}
		p.opts.Dial = d.DialContext
	}
	if p.opts.Resolve == nil {
		p.opts.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	p.ln = newConnListener()
	p.srv = &http.Server{
		Handler:           http.HandlerFunc(p.handle),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(p.opts.Logger.Handler(), slog.LevelDebug),
	}
	return p
}

// ServeConn serves the proxy requests of one client connection (one a
// box's init handed over), in the background; the proxy closes it.
func (p *Proxy) ServeConn(c net.Conn) {
	p.serving.Do(func() { go func() { _ = p.srv.Serve(p.ln) }() })
	if !p.ln.push(c) {
		c.Close()
	}
}

// Serve serves the connections of l until the proxy is closed.
func (p *Proxy) Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return nil
			}
			return err
		}
		p.ServeConn(c)
	}
}

// Close ends every connection and tunnel of the proxy.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	tunnels := p.tunnels
	p.tunnels = nil
	p.mu.Unlock()
	p.ln.Close()
	err := p.srv.Close()
	for c := range tunnels {
		c.Close()
	}
	return err
}

// decide says whether host:port may be reached: a rule, else the asker.
func (p *Proxy) decide(ctx context.Context, host string, port int) (Rule, *Denial) {
	if r, ok := p.opts.Allow.Allows(host, port); ok {
		return r, nil
	}
	deny := &Denial{Host: host, Port: port, Rule: "no rule of the allow-list matches"}
	if len(p.opts.Allow) == 0 {
		deny.Rule = "the allow-list is empty"
	}
	if p.opts.Ask == nil {
		return Rule{}, deny
	}
	if p.opts.Ask(ctx, host, port) {
		// What the operator allowed is reached as an exact rule would be.
		return Rule{Host: normalHost(host), IP: isIP(host), Port: port}, nil
	}
	deny.Rule += "; the operator did not allow it"
	return Rule{}, deny
}

func (p *Proxy) refuse(w http.ResponseWriter, d *Denial) {
	p.opts.Logger.Warn("egress denied", "host", d.Host, "port", d.Port, "rule", d.Rule)
	if p.opts.OnDeny != nil {
		p.opts.OnDeny(*d)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "lcp sandbox: %s\n", d)
}

func (p *Proxy) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "lcp sandbox: this is the sandbox's egress proxy; send proxy requests (an absolute URL, or CONNECT)", http.StatusBadRequest)
		return
	}
	if r.URL.Scheme != "http" {
		http.Error(w, fmt.Sprintf("lcp sandbox: the proxy forwards http:// requests; use CONNECT for %s", r.URL.Scheme), http.StatusBadRequest)
		return
	}
	host, port, err := splitTarget(r.URL.Host, 80)
	if err != nil {
		http.Error(w, "lcp sandbox: "+err.Error(), http.StatusBadRequest)
		return
	}
	rule, deny := p.decide(r.Context(), host, port)
	if deny != nil {
		p.refuse(w, deny)
		return
	}
	p.forward(w, r, host, port, rule)
}

// forward sends a plain HTTP request on and streams the answer back.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, host string, port int, rule Rule) {
	tr := &http.Transport{
		Proxy:                 nil,
		DisableKeepAlives:     true,
		ResponseHeaderTimeout: 2 * time.Minute,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return p.dial(ctx, host, port, rule)
		},
	}
	defer tr.CloseIdleConnections()
	out := r.Clone(r.Context())
	out.RequestURI = ""
	removeHopHeaders(out.Header)
	resp, err := tr.RoundTrip(out)
	if err != nil {
		var d *Denial
		if errors.As(err, &d) {
			p.refuse(w, d)
			return
		}
		http.Error(w, "lcp sandbox: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	removeHopHeaders(resp.Header)
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	buf := make([]byte, 32<<10)
	flusher, _ := w.(http.Flusher)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// connect opens a tunnel.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := splitTarget(r.Host, 0)
	if err == nil && port == 0 {
		err = errors.New("CONNECT needs host:port")
	}
	if err != nil {
		http.Error(w, "lcp sandbox: "+err.Error(), http.StatusBadRequest)
		return
	}
	rule, deny := p.decide(r.Context(), host, port)
	if deny != nil {
		p.refuse(w, deny)
		return
	}
	up, err := p.dial(r.Context(), host, port, rule)
	if err != nil {
		var d *Denial
		if errors.As(err, &d) {
			p.refuse(w, d)
			return
		}
		http.Error(w, "lcp sandbox: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "lcp sandbox: cannot tunnel on this connection", http.StatusInternalServerError)
		return
	}
	down, rw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(down, up) {
		down.Close()
		up.Close()
		return
	}
	defer p.untrack(down, up)
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	splice(down, up, rw.Reader)
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range cs {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.tunnels, c)
	}
}

// splice copies both ways until both sides are done; buffered is what
// the client sent after its CONNECT.
func splice(down, up net.Conn, buffered *bufio.Reader) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var src io.Reader = down
		if buffered != nil && buffered.Buffered() > 0 {
			src = io.MultiReader(io.LimitReader(buffered, int64(buffered.Buffered())), down)
		}
		_, _ = io.Copy(up, src)
		closeWrite(up)
	}()
	_, _ = io.Copy(down, up)
	closeWrite(down)
	wg.Wait()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// dial resolves host itself (the box has no DNS) and connects. A name
// that resolves to a loopback or unspecified address is refused unless
// the rule that allowed it names an address or localhost: a public name
// must not lead into the host's own services.
func (p *Proxy) dial(ctx context.Context, host string, port int, rule Rule) (net.Conn, error) {
	h := normalHost(host)
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(h); err == nil {
		addrs = []netip.Addr{a}
	} else {
		found, err := p.opts.Resolve(ctx, h)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", h, err)
		}
		internalOK := rule.Host == "localhost" && !rule.Wildcard
		for _, a := range found {
			a = a.Unmap()
			if !internalOK && (a.IsLoopback() || a.IsUnspecified()) {
				continue
			}
			addrs = append(addrs, a)
		}
		if len(addrs) == 0 {
			return nil, &Denial{Host: host, Port: port, Rule: fmt.Sprintf("%s resolves only to loopback addresses, which a name rule does not reach (name the address, or localhost, in a rule)", h)}
		}
	}
	var firstErr error
	for _, a := range addrs {
		c, err := p.opts.Dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

func (d *Denial) Error() string { return d.String() }

// splitTarget splits host[:port] of a request; def is the port when none
// is given.
func splitTarget(hostport string, def int) (string, int, error) {
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), def, nil
		}
		return "", 0, fmt.Errorf("bad target %q: %w", hostport, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", hostport)
	}
	if host == "" {
		return "", 0, fmt.Errorf("no host in %q", hostport)
	}
	return host, port, nil
}

func isIP(host string) bool {
	_, err := netip.ParseAddr(normalHost(host))
	return err == nil
}

// hopHeaders are the headers of one connection, never forwarded.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHopHeaders(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, name := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(name))
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// connListener is a net.Listener fed with connections by ServeConn.
type connListener struct {
	ch     chan net.Conn
	mu     sync.Mutex
	closed bool
	done   chan struct{}
}

func newConnListener() *connListener {
	return &connListener{ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
	return nil
}

func (l *connListener) Addr() net.Addr { return &net.UnixAddr{Name: "lcp-egress", Net: "unix"} }

// DenialKey marks a call's log event as a sandbox denial: its data is a
// JSON object with this key set to what was denied ("network" here), as
// the built-in tools report the filesystem denials they see. Metrics
// count them.
const DenialKey = "lcp_sandbox_denial"

// EventData is the data of the log event that shows the denial in a
// call's events: {"lcp_sandbox_denial": "network", "host", "port", "rule"}.
func (d Denial) EventData() []byte {
	raw, _ := json.Marshal(map[string]any{DenialKey: "network", "host": d.Host, "port": d.Port, "rule": d.Rule})
	return raw
}
