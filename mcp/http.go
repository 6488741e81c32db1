package mcp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/internal/firstbyte"
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
	// SessionTimeout closes sessions idle for this long;
	// DefaultSessionTimeout when zero, negative for never.
	SessionTimeout time.Duration
	// MaxSessions caps the sessions the server keeps: when it is full, a
	// client opening a session takes the place of the session idle the
	// longest, however briefly idle, so that no client can lock others
	// out; only when every session is serving a request does it get 503
	// with a JSON-RPC error saying why. DefaultMaxSessions when zero,
	// negative for no limit.
	MaxSessions int
	// MaxBatch and MaxBatchBytes cap a JSON-RPC batch (count of messages,
	// size), which only clients of revisions before 2025-06-18 may send;
	// DefaultMaxBatch and DefaultMaxBatchBytes when zero.
	MaxBatch      int
	MaxBatchBytes int64
	// Stateless serves every request on its own, without server-side
	// sessions, so that any replica behind a load balancer serves any
	// request: questions of a call travel as input requests of its result
	// with clients of the 2026-07-28 revision (the call is run again with
	// the answers it got, on whichever replica the answer reaches; or,
	// with ServerOptions.Replicas, kept live on its replica, which the
	// others forward the answer to), and
	// clients of older revisions, which cannot be asked, get the
	// Unattended policy's answers.
	Stateless bool
	// DrainTimeout is how long Serve lets calls in flight finish once its
	// context is done, before it cancels them; DefaultDrainTimeout when
	// zero, negative for no wait.
	DrainTimeout time.Duration
	// Abort, when closed, ends a drain at once (a second signal).
	Abort <-chan struct{}
	// BodyTimeout bounds the time a client takes to send a request's
	// body, from the end of its headers: a client that trickles its body
	// is cut off (408) rather than holding a connection and its memory.
	// DefaultBodyTimeout when zero, negative for no bound.
	BodyTimeout time.Duration
	// MaxInflightBytes caps the size of the request bodies being served
	// at once (a large request is decoded several times over on its way
	// to a tool): over it, a request gets 429. DefaultMaxInflightBytes
	// when zero, negative for no limit.
	MaxInflightBytes int64
	// Metrics, when set, is served at /metrics behind the bearer token.
	Metrics http.Handler
	// Wrap, when set, wraps the MCP endpoint's handler in Serve (at "/mcp"
	// and "/"), e.g. with TasksHandler; the health and metrics endpoints
	// are not wrapped.
	Wrap func(http.Handler) http.Handler
	// PollAfter, when positive, closes the event stream of a call still
	// running after this long, asking its client to reconnect (SSE
	// polling, SEP-1699; clients of revision 2025-11-25 and later): the
	// client gets what it missed from the server's event store, replayed
	// after its Last-Event-ID. For proxies and load balancers that cut
	// long requests. Zero: streams stay open until the call ends.
	PollAfter time.Duration
	// JSONResponse answers a POST of one request with a single
	// application/json body instead of an event stream, which costs the
	// server about a tenth less CPU per call (docs/benchmarks.md). What a
	// call sends meanwhile — progress and log notifications, questions to
	// the user (elicitation), sampling requests — then travels on the
	// session's GET stream: only clients that keep that stream open get
	// it (a question nobody receives is declined, nothing is approved).
	// Off by default; stateless requests are always answered as events.
	JSONResponse bool
}

// DefaultMaxBodyBytes is the default cap on the size of a request body.
const DefaultMaxBodyBytes = 4 << 20

// DefaultBodyTimeout is the default bound on the time a client takes to
// send a request's body: a body of DefaultMaxBodyBytes at about 140 KB/s.
const DefaultBodyTimeout = 30 * time.Second

// Timeouts of the connections of Serve: the headers of a request must
// arrive within ReadHeaderTimeout of its first byte, and a connection idle
// before its first request or between requests is closed after
// IdleTimeout.
const (
	ReadHeaderTimeout = 10 * time.Second
	IdleTimeout       = 2 * time.Minute
)

// requestHeader carries, from the guard to the call handler, the token
// under which the guard keeps the HTTP request's context (Server.posts).
// A client's own value is removed.
const requestHeader = "X-Lcp-Internal-Request"

func (o *HTTPOptions) withDefaults() HTTPOptions {
	var c HTTPOptions
	if o != nil {
		c = *o
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.SessionTimeout < 0 {
		c.SessionTimeout = 0
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxBatchBytes <= 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.BodyTimeout == 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
	if c.MaxInflightBytes == 0 {
		c.MaxInflightBytes = DefaultMaxInflightBytes
	}
	return c
}

// Handler returns the streamable HTTP endpoint of the server, guarded as
// HTTPOptions says. Requests of the 2026-07-28 revision are served
// statelessly (each request on its own, questions through input-required
// results); older ones in sessions, unless HTTPOptions.Stateless.
func (s *Server) Handler(opts *HTTPOptions) http.Handler {
	o := opts.withDefaults()
	s.presync(context.Background())
	get := func(*http.Request) *sdk.Server { return s.sdk }
	sopts := &sdk.StreamableHTTPOptions{
		Logger:              s.opts.Logger,
		MaxRequestBodyBytes: o.MaxBodyBytes,
		SessionTimeout:      o.SessionTimeout,
		JSONResponse:        o.JSONResponse,
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
	if o.Stateless {
		s.stateless.Store(true)
	}
	s.bodies.setLimit(o.MaxInflightBytes)
	return &guard{s: s, opts: o, stateful: stateful, stateless: stateless}
}

// guard applies the HTTP safety rules and the limits before the MCP
// handler sees a request: Host (DNS rebinding), Origin, bearer token,
// body size, batches, sessions, calls in flight, drain.
type guard struct {
	s         *Server
	opts      HTTPOptions
	stateful  http.Handler
	stateless http.Handler
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(requestHeader)
	if !g.allowed(w, r) {
		return
	}
	if r.ContentLength > g.opts.MaxBodyBytes {
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes", g.opts.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, g.opts.MaxBodyBytes)
	}
	if r.Method == http.MethodPost {
		g.servePOST(w, r)
		return
	}
	if g.opts.Stateless || newProtocolHeader(r) {
		g.stateless.ServeHTTP(w, r)
		return
	}
	g.stateful.ServeHTTP(w, r)
}

// allowed checks Host, Origin and the token; it answers preflight
// requests and refusals itself and reports whether the request goes on.
func (g *guard) allowed(w http.ResponseWriter, r *http.Request) bool {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil && isLoopbackAddr(local.String()) {
		if !isLoopbackHost(r.Host) && !g.allowedHost(r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: Host %q is not allowed", r.Host), http.StatusForbidden)
			return false
		}
	} else if len(g.opts.AllowedHosts) > 0 && !g.allowedHost(r.Host) && !isLoopbackHost(r.Host) {
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not allowed", r.Host), http.StatusForbidden)
		return false
	}
	origin := r.Header.Get("Origin")
	if origin != "" {
		if !isLoopbackOrigin(origin) && !slices.Contains(g.opts.AllowedOrigins, origin) {
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed", origin), http.StatusForbidden)
			return false
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
			return false
		}
	}
	if g.opts.Token != "" {
		auth := r.Header.Get("Authorization")
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(g.opts.Token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="lcp"`)
			http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
			return false
		}
	}
	return true
}

// isBatch reports whether a body (or its start) is a JSON array.
func isBatch(body []byte) bool {
	t := bytes.TrimLeft(body, " \t\r\n")
	return len(t) > 0 && t[0] == '['
}

func newProtocolHeader(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28"
}

// peekMessage is what the guard reads of a JSON-RPC message.
type peekMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	} `json:"params"`
}

// servePOST reads the body (bounded), applies the limits that the SDK
// has no option for, and hands the request on.
func (g *guard) servePOST(w http.ResponseWriter, r *http.Request) {
	s := g.s
	// Bodies in memory are bounded all together, since each is decoded
	// several times over on its way to a tool.
	size := r.ContentLength
	if size < 0 {
		size = g.opts.MaxBodyBytes
	}
	if !s.bodies.acquire(size) {
		s.refused("bytes")
		writeRPCError(w, http.StatusTooManyRequests, nil, &jsonrpc.Error{Code: CodeServerBusy,
			Message: fmt.Sprintf("the server holds %d bytes of requests, its limit: try again shortly", s.bodies.limit)})
		return
	}
	defer s.bodies.release(size)
	// The body must arrive within BodyTimeout; the deadline is lifted
	// once it has (an event stream's answer may take long to come).
	rc := http.NewResponseController(w)
	timed := g.opts.BodyTimeout > 0 && rc.SetReadDeadline(time.Now().Add(g.opts.BodyTimeout)) == nil
	// A batch too large is refused before it is read.
	br := bufio.NewReaderSize(r.Body, 512)
	if first, _ := br.Peek(512); isBatch(first) && r.ContentLength > g.opts.MaxBatchBytes {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("a JSON-RPC batch may have at most %d bytes", g.opts.MaxBatchBytes)})
		return
	}
	buf := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+1))
	_, err := buf.ReadFrom(br)
	body := buf.Bytes()
	if timed {
		_ = rc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			w.Header().Set("Connection", "close")
			http.Error(w, fmt.Sprintf("the request body did not arrive within %s", g.opts.BodyTimeout), http.StatusRequestTimeout)
			return
		}
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	batch := isBatch(body)
	var single peekMessage
	decoded := !batch && json.Unmarshal(body, &single) == nil
	if rerr := versionHeaderMismatch(r.Header.Get("Mcp-Protocol-Version"), single.Params.Meta.ProtocolVersion); decoded && rerr != nil {
		// Checked before the wire is chosen by the header: a 2026-07-28
		// request with a header of the older wire is a mismatch, not a
		// request for a revision the server does not serve.
		writeRPCError(w, http.StatusBadRequest, single.ID, rerr)
		return
	}
	if target := s.forwardTarget(r, body); target != nil {
		s.forward(w, r, target)
		return
	}

	sid := r.Header.Get("Mcp-Session-Id")
	version := r.Header.Get("Mcp-Protocol-Version")
	stateless := g.opts.Stateless || version >= "2026-07-28"
	var sess *sessionEntry
	if sid != "" && !stateless {
		// Marked active at once, under the table's lock, so that a
		// session opened meanwhile cannot evict it between the look-up
		// and the call (its stream would end without the answer).
		sess = s.sessions.enter(sid)
		if sess != nil {
			defer func() {
				sess.lastSeen.Store(time.Now().UnixNano())
				sess.active.Add(-1)
			}()
		}
		if sess != nil && version == "" {
			version = sess.version
		}
	}

	var msgs []peekMessage
	if batch {
		// A batch is refused before it is decoded: its messages would each
		// be served at once, in a stream of their own.
		switch {
		case int64(len(body)) > g.opts.MaxBatchBytes:
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("a JSON-RPC batch may have at most %d bytes", g.opts.MaxBatchBytes)})
			return
		case version >= "2025-06-18":
			writeRPCError(w, http.StatusBadRequest, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("JSON-RPC batches are not part of MCP %s (they were dropped in 2025-06-18): send one message per request", version)})
			return
		case !stateless && sid == "":
			writeRPCError(w, http.StatusBadRequest, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: "a JSON-RPC batch cannot open a session: send initialize on its own"})
			return
		}
		if json.Unmarshal(body, &msgs) == nil && len(msgs) > g.opts.MaxBatch {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("a JSON-RPC batch may have at most %d messages, not %d", g.opts.MaxBatch, len(msgs))})
			return
		}
	} else if decoded {
		msgs = []peekMessage{single}
	}
	var callID json.RawMessage
	calls := 0
	for _, m := range msgs {
		if m.Method == "tools/call" && len(m.ID) > 0 {
			calls++
			callID = m.ID
		}
	}
	opens := !stateless && sid == ""
	if s.draining.Load() && (opens || calls > 0) {
		id := callID
		if opens && len(msgs) == 1 {
			id = msgs[0].ID
		}
		writeRPCError(w, http.StatusServiceUnavailable, id, rpcError(ErrDraining))
		return
	}
	if calls > 0 {
		var ss *sdk.ServerSession
		if sess != nil {
			ss = sess.ss
		}
		if err := s.limiter.check(ss); err != nil {
			status := http.StatusTooManyRequests
			if errors.Is(err, ErrDraining) {
				status = http.StatusServiceUnavailable
			}
			s.refused(refusalOf(err))
			writeRPCError(w, status, callID, rpcError(err))
			return
		}
	}
	if opens {
		if !s.sessions.reserve(g.opts.MaxSessions) {
			var id json.RawMessage
			if len(msgs) == 1 {
				id = msgs[0].ID
			}
			s.refused("sessions")
			writeRPCError(w, http.StatusServiceUnavailable, id, &jsonrpc.Error{Code: CodeUnavailable,
				Message: fmt.Sprintf("the server holds %d sessions, its limit, each serving a request: try again when one has finished", g.opts.MaxSessions)})
			return
		}
		defer s.sessions.unreserve()
	}
	if calls > 0 {
		// Counted until the answer is written, so that a drain does not
		// end the session before its client has the result.
		s.posting.Add(1)
		defer s.posting.Add(-1)
	}
	if stateless {
		g.stateless.ServeHTTP(w, r)
		return
	}
	if calls > 0 && g.opts.PollAfter <= 0 {
		// Without an event store a client that disconnects cannot get
		// its answer: its calls are cancelled (Server.cancelWhenClientGone).
		tok := rand.Text()
		r.Header.Set(requestHeader, tok)
		s.posts.Store(tok, r.Context())
		defer s.posts.Delete(tok)
	}
	g.stateful.ServeHTTP(w, r)
}

// cancelWhenClientGone arranges for cancel to be called when the HTTP
// request that carried req ends before stop is called: its client has
// disconnected, and without an event store nothing can deliver the
// answer later. For requests of sessions over HTTP only.
func (s *Server) cancelWhenClientGone(req *sdk.CallToolRequest, cancel func()) (stop func()) {
	if req.Extra == nil || req.Extra.Header == nil {
		return func() {}
	}
	tok := req.Extra.Header.Get(requestHeader)
	if tok == "" {
		return func() {}
	}
	v, ok := s.posts.Load(tok)
	if !ok {
		return func() {}
	}
	after := context.AfterFunc(v.(context.Context), cancel)
	return func() { after() }
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

// DefaultAddr is the address of an HTTP server that names none: loopback,
// port 8765.
const DefaultAddr = "127.0.0.1:8765"

// Listen opens the listener of an HTTP server at addr (DefaultAddr when
// empty), refusing an address that is not loopback without a token.
func Listen(addr string, opts *HTTPOptions) (net.Listener, error) {
	if addr == "" {
		addr = DefaultAddr
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

// Serve serves the streamable HTTP endpoint at "/mcp" (and "/") on ln,
// with "/healthz" (the process is alive) and "/readyz" (it accepts new
// sessions and calls; 503 while draining), which need no token and say
// nothing else, and "/metrics" when HTTPOptions.Metrics is set. When ctx
// ends it drains (Drain) for at most HTTPOptions.DrainTimeout, then
// closes the sessions and stops.
func (s *Server) Serve(ctx context.Context, ln net.Listener, opts *HTTPOptions) error {
	o := opts.withDefaults()
	h := s.Handler(&o)
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { healthAnswer(w, true, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		healthAnswer(w, !s.draining.Load(), map[bool]string{true: "ready", false: "draining"}[!s.draining.Load()])
	})
	if o.Metrics != nil {
		g := h.(*guard)
		mux.Handle("/metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if g.allowed(w, r) {
				o.Metrics.ServeHTTP(w, r)
			}
		}))
	}
	if o.Wrap != nil {
		h = o.Wrap(h)
	}
	mux.Handle("/mcp", h)
	mux.Handle("/", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: ReadHeaderTimeout, MaxHeaderBytes: 64 << 10, IdleTimeout: IdleTimeout}
	errc := make(chan error, 1)
	// A fresh connection waits for its first request as long as an idle
	// one does (clients pool connections they dialled ahead).
	go func() { errc <- srv.Serve(firstbyte.Listen(ln, IdleTimeout)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// dctx bounds the calls' run (DrainTimeout); wctx, DrainGrace later,
	// the writing of their answers. Abort ends both.
	dctx, wctx := context.Background(), context.Background()
	var cancelD, cancelW context.CancelFunc
	if o.DrainTimeout > 0 {
		dctx, cancelD = context.WithTimeout(dctx, o.DrainTimeout)
		wctx, cancelW = context.WithTimeout(wctx, o.DrainTimeout+DrainGrace)
	} else {
		dctx, cancelD = context.WithCancel(dctx)
		cancelD()
		wctx, cancelW = context.WithTimeout(wctx, DrainGrace)
	}
	defer cancelD()
	defer cancelW()
	if o.Abort != nil {
		go func() {
			select {
			case <-o.Abort:
				cancelD()
				cancelW()
			case <-wctx.Done():
			}
		}()
	}
	_ = s.Drain(dctx)
	// A call leaves the limiter when its handler returns, before the SDK
	// has written its answer to the request's stream: wait for the
	// requests with calls to end, even past DrainTimeout (a cancelled
	// call's answer is written after it), or the sessions would close
	// under answers not yet sent and their streams end empty.
	for s.posting.Load() > 0 && wctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	// Let clients read the last answers before their sessions' event
	// streams end: a client that sees its session end first may fail the
	// call whose answer it has not read yet.
	select {
	case <-time.After(500 * time.Millisecond):
	case <-dctx.Done():
	}
	// The calls are done (or out of time): end the sessions, whose event
	// streams would keep the HTTP server from stopping.
	s.closeSessions()
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-errc
	return nil
}

// healthAnswer writes the body of a health endpoint: a word, nothing
// about the server.
func healthAnswer(w http.ResponseWriter, ok bool, word string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = io.WriteString(w, word+"\n")
}

// Drain stops the server from taking new sessions and calls (they get 503
// and a JSON-RPC error, so that a load balancer retries elsewhere; /readyz
// says 503), declines the confirmations and questions waiting for a
// person with a message that says why, and waits until the calls in
// flight have finished or ctx ends, whichever comes first. When ctx ends
// first, it cancels the calls still running, each with an error that says
// the server is shutting down, and waits up to DrainGrace for them to
// answer; it then returns ctx's error. Sessions stay open: Close,
// or Serve, ends them.
func (s *Server) Drain(ctx context.Context) error {
	first := s.draining.CompareAndSwap(false, true)
	idle := s.limiter.drain()
	if first {
		const reason = "The server is shutting down: this request was cancelled. Call the tool again (another server may serve it)."
		n := 0
		if s.opts.Broker != nil {
			n += s.opts.Broker.Drain(reason)
		}
		s.mu.Lock()
		brokers := make([]*hitl.Broker, 0, len(s.brokers))
		for _, b := range s.brokers {
			brokers = append(brokers, b)
		}
		s.mu.Unlock()
		for _, b := range brokers {
			n += b.Drain(reason)
		}
		s.opts.Logger.Info("draining", "calls_in_flight", s.limiter.inFlight(), "requests_declined", n)
	}
	start := time.Now()
	select {
	case <-idle:
		s.opts.Logger.Info("drained", "duration", time.Since(start).Round(time.Millisecond))
		return nil
	case <-ctx.Done():
		n := s.cancelCalls("the server is shutting down and the call ran past its drain timeout; call the tool again (another server may serve it)")
		s.opts.Logger.Warn("drain ended with calls in flight: cancelled them", "calls_cancelled", n)
		// The cancelled calls answer their clients (a cancelled worker
		// is stopped in the background); give them DrainGrace to do so
		// before the sessions close.
		select {
		case <-idle:
		case <-time.After(DrainGrace):
			s.opts.Logger.Warn("calls still unanswered after the drain's grace", "calls_in_flight", s.limiter.inFlight())
		}
		return ctx.Err()
	}
}

// DrainGrace is how long Drain waits, once its timeout has passed and it
// has cancelled the calls still in flight, for those calls to send their
// error to their clients before it returns.
const DrainGrace = 2 * time.Second

// cancelCalls cancels every call being served with reason and returns how
// many there were.
func (s *Server) cancelCalls(reason string) int {
	n := 0
	s.inflight.Range(func(_, v any) bool {
		v.(func(string))(reason)
		n++
		return true
	})
	return n
}

// Draining reports whether the server has begun to drain.
func (s *Server) Draining() bool { return s.draining.Load() }

// Sessions returns how many HTTP sessions the server holds.
func (s *Server) Sessions() int { return s.sessions.count() }

// CallsInFlight returns how many tools/call requests are being served.
func (s *Server) CallsInFlight() int { return s.limiter.inFlight() }

// closeSessions ends every session of the server.
func (s *Server) closeSessions() {
	for ss := range s.sdk.Sessions() {
		_ = ss.Close()
	}
}

// ListenAndServe listens at addr (see Listen) and serves (see Serve).
func (s *Server) ListenAndServe(ctx context.Context, addr string, opts *HTTPOptions) error {
	ln, err := Listen(addr, opts)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln, opts)
}
