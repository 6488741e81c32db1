package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/internal/buildinfo"
	"github.com/lcptools/lcp/tool"
)

// ServerOptions configures a Server. The zero value is usable.
type ServerOptions struct {
	// Name and Version identify the server to clients; by default "lcp" and
	// the version `lcp version` prints.
	Name, Version string
	// Instructions are sent to clients at initialization (for example the
	// libraries' system prompts).
	Instructions string

	// Broker is the human in the loop of the calls: its approval policy,
	// its memory of "always" and its time limits answer first, and it puts
	// the rest to the person through the client session the call came
	// from (hitl.Broker.RespondVia; hitl.Broker.Open on the 2026-07-28
	// wire, whose client answers with its next request), so that two
	// sessions never see each other's questions. The server does not close it. Nil: each session gets a
	// broker of its own, with the time limits below and its own memory of
	// "always".
	Broker *hitl.Broker

	// Unattended answers the requests of a client that cannot be asked (it
	// does not support elicitation); RejectUnattended by default.
	Unattended func(ctx context.Context, r *tool.Request, client string) tool.Response

	// ConfirmTimeout and QuestionTimeout limit the wait for an answer in
	// the sessions' own brokers (without Broker), and a question's wait in
	// the multi-round-trip flow: 300 s and 600 s by default (SPEC §10).
	ConfirmTimeout, QuestionTimeout time.Duration

	// ProgressInterval is how often a call whose client asked for progress
	// reports that it is still running, when the tool itself reports
	// nothing (clients reset their time limits on progress). 10 s by
	// default; negative disables it.
	ProgressInterval time.Duration

	// SecretAddr is the loopback address of the page through which secrets
	// are given; "127.0.0.1:0" (a free port) by default.
	SecretAddr string

	// Logger receives the SDK's log and the server's own records (drain,
	// calls refused); nil discards them.
	Logger *slog.Logger

	// MaxCalls caps the calls running at once, over every session, and
	// MaxCallsPerSession those of one session: a call over a limit is
	// refused at once with a JSON-RPC error (CodeServerBusy; over HTTP,
	// status 429). DefaultMaxCalls and DefaultMaxCallsPerSession when
	// zero, negative for no limit.
	MaxCalls, MaxCallsPerSession int
	// MaxResultBytes caps the size of a result sent to a client: a longer
	// text is cut, with a note of how much is missing, and content that
	// does not fit is left out. DefaultMaxResultBytes when zero, negative
	// for no limit.
	MaxResultBytes int
	// ReplicaID, when set, starts every HTTP session id ("<id>.<random>"),
	// so that a load balancer can send the requests of a session to the
	// replica that holds it (see ValidReplicaID for its alphabet).
	ReplicaID string
	// Replicas are the base URLs of the other replicas by ReplicaID
	// ("http://10.0.0.2:8765/mcp"), for stateless serving: a call that
	// asks and whose tool is not declared read-only or idempotent is kept
	// live on the replica that runs it, and a retry that reaches another
	// replica is forwarded there, so that what the call did before it
	// asked is never done again. Without them (or ReplicaID), such a call
	// is replayed from its start on each retry (replay.go).
	Replicas map[string]string
	// StateKey signs the requestState of calls served statelessly
	// (HTTPOptions.Stateless): replicas that share it continue each
	// other's calls. Nil: a random key of this process.
	StateKey []byte
	// OnRefused is told of every request a limit refused: "calls",
	// "session_calls", "sessions", "draining" (for metrics).
	OnRefused func(limit string)
	// Prompts, when set, are served as MCP prompts (prompts/list,
	// prompts/get, and completion/complete of their arguments): an
	// engine's (lcp.Engine: the libraries' system prompts, the host's,
	// the MCP servers'), or a Go host's (tool.NewPrompts).
	Prompts tool.PromptSet
}

func (o *ServerOptions) withDefaults() ServerOptions {
	var c ServerOptions
	if o != nil {
		c = *o
	}
	if c.Name == "" {
		c.Name = "lcp"
	}
	if c.Version == "" {
		c.Version = buildinfo.Version()
	}
	if c.Unattended == nil {
		c.Unattended = RejectUnattended
	}
	if c.ConfirmTimeout <= 0 {
		c.ConfirmTimeout = hitl.DefaultConfirmLimit
	}
	if c.QuestionTimeout <= 0 {
		c.QuestionTimeout = hitl.DefaultQuestionLimit
	}
	if c.ProgressInterval == 0 {
		c.ProgressInterval = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxCalls == 0 {
		c.MaxCalls = DefaultMaxCalls
	}
	if c.MaxCallsPerSession == 0 {
		c.MaxCallsPerSession = DefaultMaxCallsPerSession
	}
	if c.MaxResultBytes == 0 {
		c.MaxResultBytes = DefaultMaxResultBytes
	}
	return c
}

// ValidReplicaID reports whether id may start session ids: 1 to 32
// ASCII letters, digits, '-' and '_' (what an nginx map and a header
// carry without escaping).
func ValidReplicaID(id string) error {
	if id == "" || len(id) > 32 {
		return fmt.Errorf("replica id %q: it must have 1 to 32 characters", id)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("replica id %q: only ASCII letters, digits, '-' and '_' are allowed", id)
		}
	}
	return nil
}

// Server serves a tool.Toolset to MCP clients, over stdio (Run,
// ServeStdio) or streamable HTTP (Handler, ListenAndServe).
//
// tools/list is the toolset's Tools, read again on every listing
// (descriptions as the toolset gives them, input schemas passed through
// as they are); tools/call runs the toolset's handler. The text of a
// result is Result.Text, its prompt_injection a second text block;
// failures and engine errors are results marked isError; tools with an
// object output schema also get structuredContent.
//
// While a call runs, its requests are put to the person through the
// session the call came from: confirmations as a form elicitation (allow,
// always or reject, with an optional reason), text and select questions
// and forms as form elicitations, and secrets through a page lcp serves
// on loopback that the client opens by URL-mode elicitation — never
// through the client itself. With clients on the 2026-07-28 protocol the
// questions travel as input requests of the call's result (the
// multi-round-trip flow) instead of requests to the client.
// notifications/cancelled stops the call; progress notifications go to
// clients that ask for them.
type Server struct {
	ts   tool.Toolset
	opts ServerOptions
	sdk  *sdk.Server

	secrets   *secretServer
	prompts   promptNames
	resources resourceSet
	pollAfter atomic.Int64 // HTTPOptions.PollAfter, in nanoseconds

	limiter  *callLimiter
	sessions sessionTable
	draining atomic.Bool
	// inflight holds a cancel function per call being served, so that a
	// drain past its timeout can end each one with a reason.
	inflight sync.Map // *serverCall → func(reason string)
	// posts holds the context of each HTTP request carrying calls in a
	// session, by the token the guard put in its requestHeader, so that a
	// call ends when its client disconnects.
	posts sync.Map // string → context.Context
	// removed holds when each tool that left the list did (under mu),
	// for reloadWindow.
	removed   map[string]time.Time
	stateless atomic.Bool  // served with HTTPOptions.Stateless
	posting   atomic.Int64 // HTTP requests with calls being answered
	bodies    byteBudget   // bytes of HTTP request bodies being served
	keyOnce   sync.Once
	key       []byte // signs request states (replay.go)

	syncMu  sync.Mutex // one listing at a time
	mu      sync.RWMutex
	tools   map[string]*servedTool
	brokers map[*sdk.ServerSession]*hitl.Broker // the sessions' own, without Broker
	trips   map[string]*roundTrip
	closed  bool
}

type servedTool struct {
	info       tool.Info
	wire       string // the name clients call it by (tool.WireNames)
	structured bool
}

// NewServer returns a server of ts; nil opts means defaults. The server
// does not own ts: closing the server leaves it open.
func NewServer(ts tool.Toolset, opts *ServerOptions) *Server {
	s := &Server{
		ts:      ts,
		opts:    opts.withDefaults(),
		tools:   map[string]*servedTool{},
		brokers: map[*sdk.ServerSession]*hitl.Broker{},
		trips:   map[string]*roundTrip{},
	}
	s.secrets = &secretServer{addr: s.opts.SecretAddr}
	s.limiter = newCallLimiter(s.opts.MaxCalls, s.opts.MaxCallsPerSession)
	sessionID := rand.Text
	if id := s.opts.ReplicaID; id != "" {
		sessionID = func() string { return id + "." + rand.Text() }
	}
	caps := &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}}
	//lint:ignore SA1019 logging is deprecated from protocol 2026-07-28 on, and still what older clients show tools' log records with
	caps.Logging = &sdk.LoggingCapabilities{}
	sopts := &sdk.ServerOptions{
		Instructions: s.opts.Instructions,
		Logger:       slog.New(quietUndelivered{s.opts.Logger.Handler()}),
		Capabilities: caps,
		GetSessionID: sessionID,
		// Subscriptions are accepted for the host's resources (see
		// AddResource); the capability shows once there are some.
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
	}
	if s.opts.Prompts != nil {
		caps.Prompts = &sdk.PromptCapabilities{}
		sopts.CompletionHandler = s.complete
	}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: s.opts.Name, Version: s.opts.Version}, sopts)
	s.sdk.AddReceivingMiddleware(s.middleware)
	return s
}

// SDK returns the underlying SDK server, for hosts that add prompts or
// resources of their own.
func (s *Server) SDK() *sdk.Server { return s.sdk }

// Run serves one session over t until the client leaves or ctx ends.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	s.presync(ctx)
	return s.sdk.Run(ctx, t)
}

// ToolsChanged tells the server that the toolset's tools changed (its
// tool files were reloaded, say): it lists them now, and the connected
// clients get notifications/tools/list_changed (the server declares the
// listChanged capability) when what it serves differs.
func (s *Server) ToolsChanged(ctx context.Context) error { return s.sync(ctx) }

// presync lists the tools once before the first session, so that the first
// listing does not announce a change to it.
func (s *Server) presync(ctx context.Context) {
	s.mu.RLock()
	done := len(s.tools) > 0
	s.mu.RUnlock()
	if !done {
		_ = s.sync(ctx)
	}
}

// ServeStdio serves one session over the process's standard input and
// output (how MCP clients run "lcp mcp").
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.Run(ctx, &sdk.StdioTransport{})
}

// Close stops the calls waiting for input in the multi-round-trip flow,
// the sessions' own brokers and the secret page. Sessions end with their
// transports.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	trips := s.trips
	s.trips = map[string]*roundTrip{}
	brokers := s.brokers
	s.brokers = map[*sdk.ServerSession]*hitl.Broker{}
	s.mu.Unlock()
	for _, rt := range trips {
		rt.end("the server is closing")
	}
	for _, b := range brokers {
		b.Close()
	}
	s.secrets.close()
	return nil
}

func (s *Server) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if ir, ok := res.(*sdk.InitializeResult); ok && err == nil {
				if ss, ok := req.GetSession().(*sdk.ServerSession); ok {
					s.sessions.add(ss, ir.ProtocolVersion)
				}
			}
			return res, err
		case "tools/list":
			if err := s.sync(ctx); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "listing the tools: " + err.Error()}
			}
		case "tools/call":
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok {
				s.mu.RLock()
				_, known := s.tools[p.Name]
				s.mu.RUnlock()
				if !known {
					_ = s.sync(ctx)
					s.mu.RLock()
					_, known = s.tools[p.Name]
					s.mu.RUnlock()
					if res, ok := s.reloading(p.Name); !known && ok {
						return res, nil
					}
				}
			}
			// The limits on calls in flight, for every transport (over
			// HTTP the guard has refused what it could with a status).
			ss, _ := req.GetSession().(*sdk.ServerSession)
			if err := s.limiter.acquire(ss); err != nil {
				s.refused(refusalOf(err))
				return nil, rpcError(err)
			}
			defer s.limiter.release(ss)
		case "prompts/list":
			if s.opts.Prompts != nil {
				return s.listPrompts(ctx)
			}
		case "prompts/get":
			if p, ok := req.GetParams().(*sdk.GetPromptParams); ok && s.opts.Prompts != nil {
				return s.servePrompt(ctx, req, p)
			}
		}
		return next(ctx, method, req)
	}
}

// sync makes the SDK server's tools those the toolset lists now.
func (s *Server) sync(ctx context.Context) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	infos, err := s.ts.Tools(ctx)
	if err != nil && len(infos) == 0 {
		return err
	}
	// MCP clients (and the LLM APIs behind them) accept only some names:
	// "alias::tool" and the like are served under their wire name.
	names := make([]string, len(infos))
	for i := range infos {
		names[i] = infos[i].Name
	}
	wire, _ := tool.WireNames(names)
	seen := make(map[string]bool, len(infos))
	var add []*sdk.Tool
	var added []*servedTool
	s.mu.RLock()
	for i, info := range infos {
		w := wire[i]
		if seen[w] {
			continue
		}
		seen[w] = true
		if old, ok := s.tools[w]; ok && old.info.Name == info.Name && sameInfo(&old.info, &info) {
			continue
		}
		t, st, ok := s.toSDKTool(info, w)
		if !ok {
			continue
		}
		add = append(add, t)
		added = append(added, st)
	}
	var remove []string
	for name := range s.tools {
		if !seen[name] {
			remove = append(remove, name)
		}
	}
	s.mu.RUnlock()

	if len(remove) > 0 {
		s.sdk.RemoveTools(remove...)
	}
	for i, t := range add {
		if !s.addTool(t) {
			added[i] = nil
		}
	}
	s.mu.Lock()
	now := time.Now()
	if s.removed == nil {
		s.removed = map[string]time.Time{}
	}
	for name, at := range s.removed {
		if now.Sub(at) > reloadWindow {
			delete(s.removed, name)
		}
	}
	for _, name := range remove {
		delete(s.tools, name)
		s.removed[name] = now
	}
	for _, st := range added {
		if st != nil {
			s.tools[st.wire] = st
			delete(s.removed, st.wire)
		}
	}
	s.mu.Unlock()
	return nil
}

// reloadWindow is how long after a tool left the list a call of it is
// told that its library is being reloaded rather than that the tool is
// unknown: a file being rewritten is read empty or half written for a
// moment, and its tools come back with the next version.
const reloadWindow = 10 * time.Second

// reloading returns the answer to a call of a tool that is not served
// now but was moments ago, and whether it was.
func (s *Server) reloading(name string) (*sdk.CallToolResult, bool) {
	s.mu.RLock()
	at, ok := s.removed[name]
	s.mu.RUnlock()
	if !ok || time.Since(at) > reloadWindow {
		return nil, false
	}
	return reloadingResult(name), true
}

// reloadingResult is the answer to a call of a tool whose library is
// being reloaded.
func reloadingResult(name string) *sdk.CallToolResult {
	msg := fmt.Sprintf("the tool %q is not available at the moment: its library is being reloaded (its file changed on disk and does not define the tool now); call it again shortly", name)
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}

// refused tells OnRefused that a limit refused a request.
func (s *Server) refused(limit string) {
	s.opts.Logger.Debug("request refused", "limit", limit)
	if s.opts.OnRefused != nil {
		s.opts.OnRefused(limit)
	}
}

func refusalOf(err error) string {
	var busy *BusyError
	switch {
	case errors.As(err, &busy) && busy.Session:
		return "session_calls"
	case errors.As(err, &busy):
		return "calls"
	case errors.Is(err, ErrDraining):
		return "draining"
	}
	return "other"
}

func sameInfo(a, b *tool.Info) bool {
	return a.Description == b.Description && a.Title == b.Title && bytes.Equal(a.InputSchema, b.InputSchema) &&
		bytes.Equal(a.OutputSchema, b.OutputSchema) && reflect.DeepEqual(a.Annotations, b.Annotations)
}

// toSDKTool describes a tool for tools/list. A tool whose input schema is
// not an object schema cannot be served (MCP requires one) and is left
// out; an output schema is passed on only when it describes an object,
// as older clients require.
func (s *Server) toSDKTool(info tool.Info, wire string) (*sdk.Tool, *servedTool, bool) {
	in := info.InputSchema
	if len(bytes.TrimSpace(in)) == 0 {
		in = json.RawMessage(`{"type":"object"}`)
	}
	if schemaType(in) != "object" {
		s.opts.Logger.Warn("not serving a tool whose input schema is not an object schema", "tool", info.Name)
		return nil, nil, false
	}
	t := &sdk.Tool{Name: wire, Title: info.Title, Description: info.Description, InputSchema: in,
		Annotations: toSDKToolAnnotations(info.Annotations)}
	st := &servedTool{info: info, wire: wire}
	if len(info.OutputSchema) > 0 && schemaType(info.OutputSchema) == "object" {
		t.OutputSchema = info.OutputSchema
		st.structured = true
	}
	return t, st, true
}

// addTool adds t to the SDK server, which panics on schemas it rejects;
// such a tool is left out rather than taking the server down.
func (s *Server) addTool(t *sdk.Tool) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			s.opts.Logger.Warn("not serving a tool the MCP SDK rejects", "tool", t.Name, "reason", fmt.Sprint(r))
			ok = false
		}
	}()
	s.sdk.AddTool(t, s.handleCall)
	return true
}

func schemaType(raw json.RawMessage) string {
	var s struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	t, _ := s.Type.(string)
	return t
}

// newProtocol reports whether the request follows the 2026-07-28 revision,
// where servers cannot send requests to clients and ask through
// input-required results instead.
func newProtocol(req *sdk.CallToolRequest) bool {
	return req.ProtocolVersion() >= "2026-07-28"
}

func (s *Server) handleCall(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	p := req.Params
	replay := s.stateless.Load() && newProtocol(req)
	if p.RequestState != "" && (!replay || isTripState(p.RequestState)) {
		return s.resume(ctx, req)
	}
	s.mu.RLock()
	st := s.tools[p.Name]
	s.mu.RUnlock()
	if replay && p.RequestState == "" && st != nil && s.keepsLive(&st.info) {
		// A stateless replica that can reach the others keeps the call
		// live, as a stateful server does: a retry that reaches another
		// replica is forwarded here (forward.go).
		replay = false
	}
	name := p.Name
	if st != nil {
		name = st.info.Name
	}
	h, err := s.ts.Handler(ctx, name)
	if err != nil {
		var unknown *tool.UnknownToolError
		if errors.As(err, &unknown) {
			if st != nil {
				// The list still has the tool: the tool set has
				// already reloaded its library, and the list is about
				// to follow.
				return reloadingResult(p.Name), nil
			}
			if res, ok := s.reloading(p.Name); ok {
				return res, nil
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
		}
		return errorToMCP(err), nil
	}
	c := &serverCall{s: s, name: p.Name, h: h, structured: st != nil && st.structured, id: tool.NewID()}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.inflight.Store(c, func(reason string) { cancel(&tool.CancelledError{Tool: name, Reason: reason}) })
	defer s.inflight.Delete(c)
	if s.opts.Logger.Enabled(ctx, slog.LevelDebug) {
		sid := ""
		if req.Session != nil {
			sid = req.Session.ID()
		}
		s.opts.Logger.Debug("tools/call", "call_id", c.id, "tool", name, "session", sid)
	}
	c.progress.attach(ctx, req, s.opts.ProgressInterval)
	c.session = req.Session
	if !newProtocol(req) {
		ss := req.Session
		if ss != nil {
			// A client that offers sampling lends its model to the call.
			//lint:ignore SA1019 see sampling.go: still how clients lend their model
			c.sample = ss.CreateMessage
			c.model = newClientModel(sampleViaCall(c.sample), req.ClientCapabilities(), clientName(req.ClientInfo()))
		}
		c.frontEnd = func() *clientFrontEnd {
			fe := newClientFrontEnd(s, req.ClientCapabilities(), clientName(req.ClientInfo()))
			fe.elicit = func(ctx context.Context, p *sdk.ElicitParams) (*sdk.ElicitResult, error) { return ss.Elicit(ctx, p) }
			fe.complete = func(ctx context.Context, id string) {
				_ = ss.NotifyElicitationComplete(ctx, &sdk.ElicitationCompleteParams{ElicitationID: id})
			}
			return fe
		}
		c.ask = sessionAsker(ss, req.ClientCapabilities())
		stop := s.pollLater(req)
		gone := s.cancelWhenClientGone(req, func() {
			cancel(&tool.CancelledError{Tool: name, Reason: "the client disconnected before the answer"})
		})
		res, err := c.drive(ctx, p.Arguments)
		gone()
		stop()
		c.progress.detach()
		return c.toMCP(res, err), nil
	}
	if replay {
		return s.replayCall(ctx, req, c)
	}
	return s.startRoundTrip(ctx, req, c, p.Arguments)
}

// brokerFor returns the broker that answers the requests of a session's
// calls: ServerOptions.Broker, else the session's own, forgotten when the
// session ends (not closed: in the multi-round-trip flow a call outlives
// the request, and the session, that started it).
func (s *Server) brokerFor(ss *sdk.ServerSession) *hitl.Broker {
	if s.opts.Broker != nil {
		return s.opts.Broker
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.brokers[ss]
	if b == nil {
		b = hitl.New(nil, &hitl.Options{ConfirmLimit: s.opts.ConfirmTimeout, QuestionLimit: s.opts.QuestionTimeout, Logger: s.opts.Logger})
		if s.closed {
			b.Close()
			return b
		}
		s.brokers[ss] = b
		if ss != nil {
			go func() {
				_ = ss.Wait()
				s.mu.Lock()
				if s.brokers[ss] == b {
					delete(s.brokers, ss)
				}
				s.mu.Unlock()
			}()
		}
	}
	return b
}

// serverCall is one tools/call being served.
type serverCall struct {
	s          *Server
	id         string // the call's id, in every log record of it
	name       string
	h          tool.Handler
	structured bool
	progress   progressSink
	session    *sdk.ServerSession
	// model is the client's language model (sampling), nil when it
	// offers none; its requests are host requests of the call, which
	// sample answers.
	model  tool.Generator
	sample sampler
	// frontEnd makes the front end of the call's session; it is made when
	// the tool first asks, as most calls never do.
	frontEnd func() *clientFrontEnd
	fe       *clientFrontEnd
	// noSampling: the call asked for the client's model, which the client
	// did not declare (absentModel).
	noSampling atomic.Bool
	// ask puts AskClient's requests to the client (clientinput.go); the
	// tool's AskClient makes them host requests of the call, which ask
	// answers.
	ask clientAsker
}

// drive runs the handler to completion (tool.Drive), answering its
// requests through the session's front end (the host's own, its model's
// and AskClient's, with sample and ask) and reporting its progress and
// log records to the client.
func (c *serverCall) drive(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	opts := c.options()
	opts.Respond = func(ctx context.Context, r *tool.Request) tool.Response {
		if r.Kind == tool.KindHost {
			return answerHost(ctx, r, c.sample, c.ask)
		}
		if c.fe == nil {
			c.fe = c.frontEnd()
		}
		return c.s.brokerFor(c.session).RespondVia(ctx, c.fe, r)
	}
	return tool.Drive(c.withAsker(ctx), c.h, args, opts)
}

// withAsker gives ctx the call's way to ask its client for AskClient.
func (c *serverCall) withAsker(ctx context.Context) context.Context {
	if c.ask != nil {
		ctx = withClientAsker(ctx, askViaCall(c.ask))
	}
	return ctx
}

// options are the call's options on every path (Drive, a Run the
// 2026-07-28 wire steps): its id, its progress and log records, the
// status "waiting for the user" while a person's request is pending, the
// client's model. Whoever runs the call sets how it is answered.
func (c *serverCall) options() *tool.CallOptions {
	return &tool.CallOptions{
		CallID: c.id,
		OnRequest: func(r *tool.Request) {
			if r.Kind != tool.KindHost {
				c.progress.waiting(r)
			}
		},
		OnResponse: func(r *tool.Request, _ tool.Response) {
			if r.Kind != tool.KindHost {
				c.progress.waiting(nil)
			}
		},
		OnEvent:   c.event,
		Generator: c.model,
	}
}

// event forwards a call's progress as notifications/progress (when the
// client asked for it) and its log records as notifications/message (at
// the level the client set with logging/setLevel).
func (c *serverCall) event(e tool.Event) {
	switch e.Kind {
	case tool.EventProgress:
		c.progress.send(e.Progress, e.Total, e.Text, true)
	case tool.EventLog:
		c.log(e)
	}
}

// log sends a log record of the call to the client of the request being
// served, if the client's level admits it (the SDK applies
// logging/setLevel; before the client sets one, nothing is sent).
// MCP logging is deprecated from protocol 2026-07-28 on (SEP-2577) but
// remains how clients of earlier revisions show a tool's log records.
func (c *serverCall) log(e tool.Event) {
	ctx, ss := c.progress.current()
	if ss == nil {
		return
	}
	level := e.Level
	switch level {
	case "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
	default:
		level = "info"
	}
	var data any = e.Text
	if len(e.Data) > 0 {
		data = map[string]any{"message": e.Text, "data": e.Data}
	}
	//lint:ignore SA1019 see above: still how older clients get log records
	_ = ss.Log(ctx, &sdk.LoggingMessageParams{Level: sdk.LoggingLevel(level), Logger: e.Tool, Data: data})
}

func (c *serverCall) toMCP(res *tool.Result, err error) *sdk.CallToolResult {
	if err != nil {
		return capResult(errorToMCP(err), c.s.opts.MaxResultBytes)
	}
	return capResult(toMCP(res, c.structured), c.s.opts.MaxResultBytes)
}

// progressSink sends a call's progress to the request that asked for it
// (the latest one, in the multi-round-trip flow), keeping the values
// increasing as MCP requires, and a heartbeat while the tool says nothing.
type progressSink struct {
	mu       sync.Mutex
	ctx      context.Context
	session  *sdk.ServerSession
	token    any
	last     float64
	total    float64 // the latest total the tool reported
	reported bool    // the tool reports progress itself
	status   string
	stop     chan struct{}
	started  time.Time
}

func (p *progressSink) attach(ctx context.Context, req *sdk.CallToolRequest, interval time.Duration) {
	token := req.Params.GetProgressToken()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
	p.ctx, p.session, p.token = ctx, req.Session, token
	if p.started.IsZero() {
		p.started = time.Now()
	}
	if token == nil || interval <= 0 {
		return
	}
	stop := make(chan struct{})
	p.stop = stop
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				p.heartbeat()
			}
		}
	}()
}

// current returns the request being served and its session (nil
// between the rounds of the multi-round-trip flow).
func (p *progressSink) current() (context.Context, *sdk.ServerSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.session == nil || p.ctx == nil || p.ctx.Err() != nil {
		return nil, nil
	}
	return p.ctx, p.session
}

func (p *progressSink) detach() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
	p.token = nil
}

func (p *progressSink) heartbeat() {
	p.mu.Lock()
	if p.reported {
		p.mu.Unlock()
		return
	}
	msg := p.status
	if msg == "" {
		msg = fmt.Sprintf("running for %s", time.Since(p.started).Round(time.Second))
	}
	p.mu.Unlock()
	p.send(0, 0, msg, false)
}

// waiting notes that the call waits for the person (r) or no longer (nil).
func (p *progressSink) waiting(r *tool.Request) {
	p.mu.Lock()
	if r == nil {
		p.status = ""
		p.mu.Unlock()
		return
	}
	what := r.Title
	if what == "" {
		what = r.Label
	}
	if what == "" {
		what = string(r.Kind)
	}
	p.status = "waiting for the user: " + what
	msg, quiet := p.status, p.reported
	p.mu.Unlock()
	if !quiet {
		p.send(0, 0, msg, false)
	}
}

func (p *progressSink) send(value, total float64, msg string, fromTool bool) {
	p.mu.Lock()
	if p.token == nil {
		p.mu.Unlock()
		return
	}
	if fromTool {
		p.reported = true
		if total > 0 {
			p.total = total
		}
	}
	if total <= 0 {
		total = p.total // a message without a total keeps the known one
	}
	if value <= p.last {
		// MCP wants each value above the last: the smallest step that
		// prints cleanly (3.002 then 3.003, never 3.0029999999999997).
		value = p.last + 1
		if fromTool {
			value = math.Round((p.last+1e-3)*1e3) / 1e3
		}
		if total > 0 && value > total {
			total = 0
		}
	}
	p.last = value
	ctx, ss, token := p.ctx, p.session, p.token
	p.mu.Unlock()
	_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: value, Total: total, Message: msg})
}

// newWire reports whether a request is served on the 2026-07-28 wire:
// stateless, with _meta in every request. As the SDK decides it: a
// session without an initialize (one made for a single request) is of
// the newest revision.
func newWire(req sdk.Request) bool {
	ss, ok := req.GetSession().(*sdk.ServerSession)
	if !ok || ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip == nil || ip.ProtocolVersion >= "2026-07-28"
}
