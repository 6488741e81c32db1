package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

// TokenHeader is the request header in which a program (not a browser,
// which signs in with a cookie) shows the server's token on /api/
// requests.
const TokenHeader = "X-LCP-Token"

// Defaults of Options.
const (
	// DefaultMaxBodyBytes caps the body of a request to the API.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxCalls caps the calls in flight at once.
	DefaultMaxCalls = 32
	// DefaultMaxStreams caps the event streams followed at once.
	DefaultMaxStreams = 32
	// DefaultMaxResultBytes caps the size of a result as the page shows it;
	// a longer output is cut and says how much is missing.
	DefaultMaxResultBytes = 1 << 20
)

// Options configures a Server. A nil *Options means the defaults.
type Options struct {
	// Token is the server's secret: programs show it in the X-LCP-Token
	// header of /api/ requests, and /?token=<Token> signs a browser in
	// (as the one-time tokens of SignInURL do). A random one, known to
	// nobody, is made when empty.
	Token string
	// OnSignIn is called each time a browser signs in (lcp serve then
	// prints the next one-time address).
	OnSignIn func()
	// Remote serves a page reached from other machines: the Host header
	// is checked only against Hosts (a loopback server accepts loopback
	// names only, against DNS rebinding).
	Remote bool
	// Hosts are extra host names (without port) accepted in the Host
	// header, e.g. the machine's name.
	Hosts []string
	// MaxBodyBytes caps request bodies; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxCalls caps the calls running at once; zero means DefaultMaxCalls.
	MaxCalls int
	// MaxStreams caps the event streams (pages following the server) at
	// once; over it, GET /api/events gets 429. Zero means
	// DefaultMaxStreams.
	MaxStreams int
	// MaxResultBytes caps the output of a result as shown; zero means
	// DefaultMaxResultBytes.
	MaxResultBytes int
	// Title is the page's title; "lcp" when empty.
	Title string
	// Workspace and Context go into every call the page makes (the
	// call's working directory and LCP tool_context); empty means the
	// toolset's defaults.
	Workspace string
	Context   map[string]any
	// Logger gets one record per API request (method, path, status) and
	// the server's own troubles; never a request body. Nil discards.
	Logger *slog.Logger
}

// Server is the web page of an inventory: an http.Handler serving the page,
// its assets and the JSON API the page uses. It is safe for concurrent
// use. Close it to cancel the calls in flight and end the event streams.
type Server struct {
	ts      tool.Toolset
	broker  *hitl.Broker
	opts    Options
	token   string
	log     *slog.Logger
	mux     *http.ServeMux
	page    *template.Template
	baseCtx context.Context
	stop    context.CancelFunc
	sub     *hitl.Subscription
	pumped  chan struct{}
	slots   chan struct{}

	auth     auth
	draining atomic.Bool
	running  sync.WaitGroup // calls in flight, for Drain

	mu       sync.Mutex
	closed   bool
	tick     chan struct{} // closed and replaced each time pump logs an event
	hub      hub
	calls    map[string]*call
	order    []string // call ids, oldest first, for pruning
	resolved resolvedSet
}

// NewServer returns the web page of ts. Its confirmations and questions
// are the broker's: ts's calls must reach broker.Respond (the server's own
// calls do; pass the broker's Respond as lcp.Config.Respond for calls made
// elsewhere). The broker, which must not be nil, is typically made with a
// nil front end, so that requests wait for the page; the server does not
// close it. A nil opts means the defaults.
func NewServer(ts tool.Toolset, broker *hitl.Broker, opts *Options) *Server {
	s := &Server{ts: ts, broker: broker, calls: map[string]*call{}, pumped: make(chan struct{}), tick: make(chan struct{})}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.MaxBodyBytes <= 0 {
		s.opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if s.opts.MaxCalls <= 0 {
		s.opts.MaxCalls = DefaultMaxCalls
	}
	if s.opts.MaxStreams <= 0 {
		s.opts.MaxStreams = DefaultMaxStreams
	}
	if s.opts.MaxResultBytes <= 0 {
		s.opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if s.opts.Title == "" {
		s.opts.Title = "lcp"
	}
	s.token = s.opts.Token
	if s.token == "" {
		s.token = NewToken()
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s.slots = make(chan struct{}, s.opts.MaxCalls)
	s.auth.init()
	s.hub.init(defaultRing)
	s.resolved.init(1024)
	s.page = template.Must(template.ParseFS(assets, "static/index.html"))
	s.baseCtx, s.stop = context.WithCancel(context.Background())
	s.sub = broker.Subscribe(256)
	go s.pump()
	s.routes()
	return s
}

// NewToken returns a random session token (128 bits, hex).
func NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// Token returns the session token.
func (s *Server) Token() string { return s.token }

// ServeHTTP serves the page, its assets and the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	s.serve(sw, r)
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	// The path and status only: bodies (arguments, answers) never go to
	// the log.
	s.log.Debug("web: request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
		"duration", time.Since(start).Round(time.Microsecond))
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	setCommonHeaders(w.Header())
	if !s.hostAllowed(r.Host) {
		writeError(w, http.StatusForbidden, "host not allowed: "+truncate(r.Host, 100))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Event adds a call's event to the event log: what a tool printed (its
// text is shown as printed, so a tool must not print secrets) and its log
// records; the progress of the calls the page made. The calls the page
// makes subscribe to their own events, and keep what they printed and
// their latest progress; a host that runs calls elsewhere may hand their
// events here too (lcp.Config.OnEvent).
func (s *Server) Event(e tool.Event) {
	switch e.Kind {
	case tool.EventOutput:
		if e.Text == "" {
			return
		}
		s.output(e.CallID, e.Stream, e.Text)
	case tool.EventLog:
		level := e.Level
		if level == "" {
			level = "info"
		}
		s.output(e.CallID, "log", level+": "+strings.TrimRight(e.Text, "\n")+"\n")
	case tool.EventProgress:
		s.mu.Lock()
		defer s.mu.Unlock()
		if c := s.calls[e.CallID]; c != nil && !s.closed && c.State == "running" {
			s.progress(c, &Progress{Progress: e.Progress, Total: e.Total, Message: truncate(e.Text, 500)})
		}
	}
}

// output publishes a piece of printed text or a log record, and keeps it
// with the call when the page made it.
func (s *Server) output(callID, stream, text string) {
	const maxChunk = 16 << 10
	if len(text) > maxChunk {
		text = cutUTF8(text, maxChunk) + "… (output cut)"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	toolName := ""
	if c := s.calls[callID]; c != nil {
		toolName = c.Tool
		s.record(c, stream, text)
	}
	s.hub.publish(Event{Type: EventOutput, Output: &OutputEvent{CallID: callID, Tool: toolName, Stream: stream, Text: text}})
}

// Drain stops the server from starting calls (503), declines the
// confirmations and questions waiting for the page with a message that
// says why (the calls go on with that answer), and waits until the calls
// in flight have finished or ctx ends. /readyz answers 503 from then on.
func (s *Server) Drain(ctx context.Context) error {
	s.mu.Lock() // no call is counted in after this (handleCalls)
	first := s.draining.CompareAndSwap(false, true)
	s.mu.Unlock()
	if first {
		s.broker.Drain("The server is shutting down: this request was cancelled. Call the tool again once it is back.")
	}
	done := make(chan struct{})
	go func() { s.running.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ToolsChanged tells the pages that the inventory changed (a reload of
// its tool files, say): they list the tools again. what is a short note
// for the event log ("" for a generic one).
func (s *Server) ToolsChanged(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.hub.publish(Event{Type: EventTools, Tools: what})
	}
}

// Close cancels the calls in flight (their pending requests are withdrawn)
// and ends every event stream. It does not close the toolset or the
// broker, which belong to the caller. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.hub.closeAll()
	s.mu.Unlock()
	s.stop()
	s.sub.Close()
	<-s.pumped
	return nil
}

// pump copies the broker's events into the event log.
func (s *Server) pump() {
	defer close(s.pumped)
	var dropped int64
	for ev := range s.sub.Events() {
		if ev.Replayed {
			continue // already pending: the state snapshot lists it
		}
		s.mu.Lock()
		if !s.closed {
			switch ev.Type {
			case hitl.EventAnswered, hitl.EventWithdrawn, hitl.EventTimedOut, hitl.EventFailed:
				if ev.Request != nil {
					s.resolved.add(ev.Request.ID, string(ev.Type), true)
				}
			}
			e := ev
			s.hub.publish(Event{Type: EventRequest, Request: &e})
			if d := s.sub.Dropped(); d != dropped {
				// Some broker events never reached us: the pages must
				// re-read the pending requests.
				dropped = d
				s.hub.publish(Event{Type: EventResync})
			}
		}
		close(s.tick)
		s.tick = make(chan struct{})
		s.mu.Unlock()
	}
}

// waitLogged waits until the resolution of request id is in the log, so
// that a call's answer is logged before what the tool does next (its
// output, its result). The broker publishes on its own goroutine; this
// bounds the wait in case an event was dropped.
func (s *Server) waitLogged(id string) {
	timeout := time.NewTimer(2 * time.Second)
	defer timeout.Stop()
	for {
		s.mu.Lock()
		done := s.resolved.how[id].logged
		tick := s.tick
		closed := s.closed
		s.mu.Unlock()
		if done || closed {
			return
		}
		select {
		case <-tick:
		case <-timeout.C:
			return
		}
	}
}

// statusWriter remembers the status for the access log; it passes Flush
// through for the event stream.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
