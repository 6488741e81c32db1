package mcp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configures the streamable HTTP endpoint of a Server.
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry
	// ("Authorization: Bearer <token>"); requests without it get 401.
	// ListenAndServe requires one on any address that is not loopback.
	Token string
	// AllowedOrigins lists the origins (scheme://host[:port]) whose pages
	// may call the endpoint, besides pages served from loopback. A request
	// with any other Origin gets 403.
	AllowedOrigins []string
	// AllowedHosts lists Host header values accepted besides loopback
	// names, for a server reached through a name (a reverse proxy, a
	// container). On a loopback listener any other Host gets 403, which
	// stops DNS-rebinding attacks.
	AllowedHosts []string
	// MaxBodyBytes caps the size of a request body (413 above it);
	// 4 MiB by default.
	MaxBodyBytes int64
	// SessionTimeout closes sessions idle for this long; 30 minutes by
	// default, negative for never.
	SessionTimeout time.Duration
	// PollAfter, when positive, closes the event stream of a call still
	// running after this long, asking its client to reconnect (SSE
	// polling, SEP-1699; clients of revision 2025-11-25 and later): the
	// client gets what it missed from the server's event store, replayed
	// after its Last-Event-ID. For proxies and load balancers that cut
	// long requests. Zero: streams stay open until the call ends.
	PollAfter time.Duration
}

// DefaultMaxBodyBytes is the default cap on the size of a request body.
const DefaultMaxBodyBytes = 4 << 20

// Handler returns the streamable HTTP endpoint of the server, guarded as
// HTTPOptions says. Requests of the 2026-07-28 revision are served
// statelessly (each request on its own, questions through input-required
// results); older ones in sessions.
func (s *Server) Handler(opts *HTTPOptions) http.Handler {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = 30 * time.Minute
	}
	if o.SessionTimeout < 0 {
		o.SessionTimeout = 0
	}
	s.presync(context.Background())
	get := func(*http.Request) *sdk.Server { return s.sdk }
	sopts := &sdk.StreamableHTTPOptions{
		Logger:              s.opts.Logger,
		MaxRequestBodyBytes: o.MaxBodyBytes,
		SessionTimeout:      o.SessionTimeout,
	}
	var stateful http.Handler
	if o.PollAfter > 0 {
		s.pollAfter.Store(int64(o.PollAfter))
		sopts.EventStore = eventStore()
		stateful = s.negotiatedRevision(sdk.NewStreamableHTTPHandler(get, sopts))
	} else {
		stateful = sdk.NewStreamableHTTPHandler(get, sopts)
	}
	stateless := sdk.NewStreamableHTTPHandler(get, &sdk.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       s.opts.Logger,
		MaxRequestBodyBytes:          o.MaxBodyBytes,
		PropagateRequestCancellation: true,
	})
	return &guard{opts: o, next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})}
}

// guard applies the HTTP safety rules before the MCP handler sees a
// request: Host (DNS rebinding), Origin, bearer token, body size.
type guard struct {
	opts HTTPOptions
	next http.Handler
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil && isLoopbackAddr(local.String()) {
		if !isLoopbackHost(r.Host) && !g.allowedHost(r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: Host %q is not allowed", r.Host), http.StatusForbidden)
			return
		}
	} else if len(g.opts.AllowedHosts) > 0 && !g.allowedHost(r.Host) && !isLoopbackHost(r.Host) {
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not allowed", r.Host), http.StatusForbidden)
		return
	}
	origin := r.Header.Get("Origin")
	if origin != "" {
		if !isLoopbackOrigin(origin) && !slices.Contains(g.opts.AllowedOrigins, origin) {
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed", origin), http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			h.Set("Access-Control-Allow-Headers", "Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if g.opts.Token != "" {
		auth := r.Header.Get("Authorization")
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(g.opts.Token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="lcp"`)
			http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
			return
		}
	}
	if r.ContentLength > g.opts.MaxBodyBytes {
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes", g.opts.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, g.opts.MaxBodyBytes)
	}
	g.next.ServeHTTP(w, r)
}

func (g *guard) allowedHost(host string) bool {
	for _, h := range g.opts.AllowedHosts {
		if strings.EqualFold(h, host) {
			return true
		}
		if hh, _, err := net.SplitHostPort(host); err == nil && strings.EqualFold(h, hh) {
			return true
		}
	}
	return false
}

// ErrTokenRequired is returned by ListenAndServe for an address that is not
// loopback when no bearer token is set.
var ErrTokenRequired = errors.New("an MCP HTTP server on an address that is not loopback needs a bearer token (--token or LCP_MCP_TOKEN)")

// Listen opens the listener of an HTTP server at addr ("127.0.0.1:8765" by
// default), refusing an address that is not loopback without a token.
func Listen(addr string, opts *HTTPOptions) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:8765"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("mcp: address %q: %w", addr, err)
	}
	if (host == "" || !isLoopbackHost(host)) && (opts == nil || opts.Token == "") {
		return nil, ErrTokenRequired
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	return ln, nil
}

// Serve serves the streamable HTTP endpoint at "/mcp" (and "/") on ln until
// ctx ends, then shuts down within a few seconds.
func (s *Server) Serve(ctx context.Context, ln net.Listener, opts *HTTPOptions) error {
	h := s.Handler(opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-errc
	return nil
}

// ListenAndServe listens at addr (see Listen) and serves (see Serve).
func (s *Server) ListenAndServe(ctx context.Context, addr string, opts *HTTPOptions) error {
	ln, err := Listen(addr, opts)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln, opts)
}

// TuneGC sets the garbage collector of a process that serves MCP over HTTP
// to collect less often (GOGC=400) unless the GOGC environment variable
// says otherwise. Most of such a server's garbage is the SDK's JSON decoder
// buffers (32 KiB per message), short-lived and many: at Go's default the
// collector costs more CPU than the calls themselves. The price is a few
// megabytes of heap. A library does not change this by itself; commands
// call it (lcp mcp does).
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
