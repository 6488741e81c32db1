package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/autonomy"
	"github.com/lcptools/lcp/internal/buildinfo"
	"github.com/lcptools/lcp/mcp/oauth"
	"github.com/lcptools/lcp/tool"
)

// ClientOptions configures a ClientToolset. The zero value is usable.
type ClientOptions struct {
	// Name and Version identify lcp to the servers; by default "lcp" and
	// the version `lcp version` prints.
	Name, Version string
	// OnEvent receives the progress notifications of every call as
	// events (tool.EventProgress), and the servers' log messages
	// (tool.EventLog), in addition to the subscribers of the call itself.
	// A log message that belongs to no call (see ClientToolset) comes
	// without Tool and CallID, with the server's alias as Library.
	OnEvent func(tool.Event)
	// LogLevel is the least severe level of the log messages lcp asks of
	// servers that log (logging/setLevel): debug, info, notice, warning,
	// error, critical, alert or emergency; "info" when empty.
	LogLevel string
	// Respond answers an elicitation that cannot be tied to one call: one
	// that a server sends while several of its calls run, or while none
	// does (calls surface theirs as Requests of their handler). Nil
	// declines them.
	Respond func(ctx context.Context, r *tool.Request) tool.Response
	// ConnectTimeout bounds starting and initializing one server; 60 s by
	// default (npx may have to install the server first).
	ConnectTimeout time.Duration
	// RetryInterval is how long Tools waits before trying again a server
	// that failed to start; calls always try again. 15 s by default.
	RetryInterval time.Duration
	// TerminateTimeout is how long closing a stdio server waits after
	// closing its input before it signals the process; 5 s by default.
	TerminateTimeout time.Duration
	// Stderr receives the standard error of stdio servers, each line
	// prefixed with "[alias] "; nil discards it (the last lines are kept
	// for error messages either way).
	Stderr io.Writer
	// HTTPClient makes the requests to HTTP servers; nil means
	// http.DefaultTransport without a time limit.
	HTTPClient *http.Client
	// Logger receives the SDK's log; nil discards it.
	Logger *slog.Logger
	// Workspace is the folder a stdio server's box shows when its entry
	// says "workspace": "read-only" or "read-write"; empty means the
	// current directory.
	Workspace string
	// StateDir holds the state folders of boxed stdio servers, one per
	// alias; empty means DefaultStateDir().
	StateDir string
	// Autonomy is the autonomy level of a server's tools
	// (host_tool_configs[alias]); nil means safe. In safe and strict, a
	// connection a boxed server's network list does not name is put to
	// the person as a confirmation; in full_access the list alone
	// decides.
	Autonomy func(alias string) autonomy.Level
	// OAuth configures signing in to HTTP servers that ask for it (where
	// tokens are kept, how the person is sent to the browser); nil means
	// the defaults of package oauth. Each server's own settings are its
	// ServerConfig.OAuth.
	OAuth *oauth.Options
	// OnStart, when set, is told about each server as NewClientToolset
	// starts it: first with started false (the start begins), then with
	// started true and the number of its tools, or the error it failed
	// with. Servers start side by side, so calls for different servers
	// come from different goroutines and may interleave.
	OnStart func(alias string, started bool, tools int, err error)
}

func (o *ClientOptions) withDefaults() ClientOptions {
	var c ClientOptions
	if o != nil {
		c = *o
	}
	if c.Name == "" {
		c.Name = "lcp"
	}
	if c.Version == "" {
		c.Version = buildinfo.Version()
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 60 * time.Second
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = 15 * time.Second
	}
	if c.TerminateTimeout <= 0 {
		c.TerminateTimeout = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir()
	}
	return c
}

// ConnectTimeoutError reports a server that was not started and
// initialized within ClientOptions.ConnectTimeout: it hangs, or answers
// something the client waits for in vain. errors.Is(err,
// context.DeadlineExceeded) is true.
type ConnectTimeoutError struct {
	Alias string
	Limit time.Duration
}

func (e *ConnectTimeoutError) Error() string {
	return fmt.Sprintf("MCP server %q did not answer within %s", e.Alias, e.Limit)
}

// Is makes errors.Is(err, context.DeadlineExceeded) true.
func (e *ConnectTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// ClientToolset is a tool.Toolset of the tools of MCP servers, named
// "<alias>::<tool>". Each server is one session, opened when the toolset
// is made; a server that fails to start is reported by Diagnostics and
// tried again later, without affecting the others. A stdio server that
// dies fails the calls in flight with a *tool.TransportError wrapping a
// *ServerExitError, and is restarted on the next call; a dropped HTTP
// session is opened again.
//
// A call's elicitation requests surface as Requests of its handler (form,
// text or select questions; a confirmation to open the link of a URL
// elicitation), so they reach whoever drives the call; progress
// notifications are progress events of the call (and go to
// ClientOptions.OnEvent); log messages (notifications/message, from
// ClientOptions.LogLevel up, which lcp sets on servers that log) are log events
// of the call they name with a progress token, else of the only call in
// flight on that server, else of no call; cancelling a call's context sends
// notifications/cancelled. Arguments are coerced as SPEC §7 says
// (tool.Coerce) before they are sent, and a server's refusal of invalid
// parameters is a *tool.InvalidArgumentsError (status 400).
type ClientToolset struct {
	opts    ClientOptions
	servers []*remote
	byAlias map[string]*remote

	mu     sync.Mutex
	closed bool
}

// NewClientToolset connects to the servers, concurrently, and returns the
// toolset of their tools. Only a configuration that cannot be used is an
// error (a *ConfigError); servers that cannot be reached are reported by
// Diagnostics.
func NewClientToolset(ctx context.Context, servers []ServerConfig, opts *ClientOptions) (*ClientToolset, error) {
	c := &ClientToolset{opts: opts.withDefaults(), byAlias: make(map[string]*remote)}
	for _, sc := range servers {
		sc := sc
		if sc.Disabled {
			continue
		}
		sc.Args = append([]string(nil), sc.Args...)
		sc.Env, sc.Headers = maps.Clone(sc.Env), maps.Clone(sc.Headers)
		sc.Sandbox = sc.Sandbox.clone()
		if err := sc.normalize(os.Getenv); err != nil {
			return nil, err
		}
		if c.byAlias[sc.Alias] != nil {
			return nil, &ConfigError{Alias: sc.Alias, Message: "the alias is used twice"}
		}
		r := newRemote(c, sc)
		c.servers = append(c.servers, r)
		c.byAlias[sc.Alias] = r
	}
	var wg sync.WaitGroup
	for _, r := range c.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := c.opts.OnStart
			if start != nil {
				start(r.cfg.Alias, false, 0, nil)
			}
			var infos []tool.Info
			_, err := r.session(ctx, true)
			if err == nil {
				infos, err = r.list(ctx)
			}
			if start != nil {
				start(r.cfg.Alias, true, len(infos), err)
			}
		}()
	}
	wg.Wait()
	return c, nil
}

// Tools lists the tools of every server, in the order of the
// configuration. A server that is down contributes the tools it had when
// it was last listed; one never listed contributes none (see
// Diagnostics).
func (c *ClientToolset) Tools(ctx context.Context) ([]tool.Info, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	var all []tool.Info
	for _, r := range c.servers {
		infos, _ := r.list(ctx)
		all = append(all, infos...)
	}
	return all, nil
}

// Err returns why the server alias is unavailable (its last failure to
// connect), or nil when it is not known to be.
func (c *ClientToolset) Err(alias string) error {
	r := c.byAlias[alias]
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// Diagnostics reports the servers that are unavailable, with the reason.
func (c *ClientToolset) Diagnostics() []tool.Diagnostic {
	var out []tool.Diagnostic
	for _, r := range c.servers {
		r.mu.Lock()
		err := r.lastErr
		r.mu.Unlock()
		if err != nil {
			out = append(out, tool.Diagnostic{
				Severity: "error",
				Code:     "mcp-server-unavailable",
				Message:  fmt.Sprintf("MCP server %q is unavailable: %v", r.cfg.Alias, err),
			})
		}
	}
	return out
}

// Handler returns a handler for one call of "<alias>::<tool>".
func (c *ClientToolset) Handler(ctx context.Context, name string) (tool.Handler, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	alias, tname, ok := strings.Cut(name, Separator)
	r := c.byAlias[alias]
	if !ok || r == nil || tname == "" {
		return nil, &tool.UnknownToolError{Name: name}
	}
	info, ok := r.info(ctx, tname)
	if !ok {
		return nil, &tool.UnknownToolError{Name: name}
	}
	types := r.types(&info)
	return tool.NewHandler(&info, func(ctx context.Context, c *tool.CallRequest) (*tool.Result, error) {
		return r.call(ctx, &info, tname, types.CoerceArguments(c.Arguments), c)
	}, nil), nil
}

// Close ends every session and stops the stdio servers.
func (c *ClientToolset) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range c.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.close()
		}()
	}
	wg.Wait()
	return nil
}

func (c *ClientToolset) checkOpen() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return &tool.ClosedError{What: "MCP client toolset"}
	}
	return nil
}

// remote is one configured server and its current session.
type remote struct {
	ts     *ClientToolset
	cfg    ServerConfig
	client *sdk.Client
	store  *schemaStore
	auth   *oauth.Handler // HTTP servers that may ask for OAuth

	mu         sync.Mutex
	sess       *session
	connecting chan struct{} // closed when the connection attempt in progress ends
	lastErr    error
	lastTry    time.Time
	closed     bool

	tools  []tool.Info // from the last listing
	listed bool
	stale  bool // the server said its list changed
	// coerce holds the coercible property types of each tool, by name,
	// read from the schemas of the last listing.
	coerce map[string]tool.PropertyTypes

	active  map[*callEntry]struct{}
	byToken map[string]*callEntry
}

// session is one connection to a server.
type session struct {
	cs   *sdk.ClientSession
	proc *process // stdio only
	dead chan struct{}
}

func (s *session) alive() bool {
	select {
	case <-s.dead:
		return false
	default:
		return true
	}
}

func newRemote(c *ClientToolset, sc ServerConfig) *remote {
	r := &remote{ts: c, cfg: sc, store: newSchemaStore(), active: map[*callEntry]struct{}{}, byToken: map[string]*callEntry{}}
	r.auth = newOAuthHandler(&c.opts, &sc)
	r.client = sdk.NewClient(&sdk.Implementation{Name: c.opts.Name, Version: c.opts.Version}, &sdk.ClientOptions{
		Logger:                      c.opts.Logger,
		ElicitationHandler:          r.elicit,
		ProgressNotificationHandler: r.progress,
		//lint:ignore SA1019 logging is deprecated from protocol 2026-07-28 on, and still how servers of earlier revisions report what their tools do
		LoggingMessageHandler: r.logMessage,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			r.mu.Lock()
			r.stale = true
			r.mu.Unlock()
		},
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{
			Form: &sdk.FormElicitationCapabilities{},
			URL:  &sdk.URLElicitationCapabilities{},
		}},
	})
	return r
}

// session returns the live session, connecting first if there is none.
// With lazy, a server that failed recently is not tried again before
// RetryInterval has passed.
func (r *remote) session(ctx context.Context, lazy bool) (*session, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, &tool.ClosedError{What: "MCP server " + r.cfg.Alias}
		}
		if r.sess != nil && r.sess.alive() {
			s := r.sess
			r.mu.Unlock()
			return s, nil
		}
		if ch := r.connecting; ch != nil {
			r.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if lazy && r.lastErr != nil && time.Since(r.lastTry) < r.ts.opts.RetryInterval {
			err := r.lastErr
			r.mu.Unlock()
			return nil, err
		}
		ch := make(chan struct{})
		r.connecting = ch
		r.lastTry = time.Now()
		r.mu.Unlock()

		// The attempt outlives a caller that gives up, so that a slow
		// start still benefits the next call.
		go func() {
			s, err := r.connect()
			r.mu.Lock()
			r.connecting = nil
			if err != nil {
				r.lastErr = err
			} else if r.closed {
				go r.endSession(s)
			} else {
				r.sess, r.lastErr = s, nil
				r.stale = true // a fresh session may serve other tools
			}
			r.mu.Unlock()
			close(ch)
		}()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		r.mu.Lock()
		s, err := r.sess, r.lastErr
		r.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if s != nil && s.alive() {
			return s, nil
		}
	}
}

func (r *remote) connect() (*session, error) {
	limit := r.connectTimeout()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	s := &session{dead: make(chan struct{})}
	var transport sdk.Transport
	switch r.cfg.Type {
	case TypeStdio:
		p, err := startProcess(&r.cfg, r.ts.opts.Stderr, r.boxHooks())
		if err != nil {
			return nil, err
		}
		s.proc = p
		transport = p.transport(r.store)
	case TypeHTTP, TypeSSE:
		base := http.DefaultTransport
		if r.ts.opts.HTTPClient != nil && r.ts.opts.HTTPClient.Transport != nil {
			base = r.ts.opts.HTTPClient.Transport
		}
		hc := &http.Client{Transport: &headerTransport{base: base, headers: r.cfg.Headers, store: r.store}}
		if r.ts.opts.HTTPClient != nil {
			hc.Jar = r.ts.opts.HTTPClient.Jar
		}
		if r.cfg.Type == TypeSSE {
			transport = &sdk.SSEClientTransport{Endpoint: r.cfg.URL, HTTPClient: hc}
		} else {
			transport = &sdk.StreamableClientTransport{Endpoint: r.cfg.URL, HTTPClient: hc, OAuthHandler: r.oauthHandler()}
		}
	}
	cs, err := r.client.Connect(ctx, transport, nil)
	if err != nil {
		if s.proc != nil {
			// What the server did says more than the SDK's error: garbage
			// on its output, or an exit of its own. Both name the server.
			why := s.proc.failure(200 * time.Millisecond)
			go s.proc.stop(r.ts.opts.TerminateTimeout)
			if why != nil {
				return nil, why
			}
		}
		if ctx.Err() != nil {
			return nil, &ConnectTimeoutError{Alias: r.cfg.Alias, Limit: limit}
		}
		return nil, fmt.Errorf("connecting to MCP server %q: %w", r.cfg.Alias, err)
	}
	s.cs = cs
	setLogLevel(ctx, cs, r.ts.opts.LogLevel)
	go func() {
		_ = cs.Wait()
		close(s.dead)
		if s.proc != nil {
			s.proc.stop(r.ts.opts.TerminateTimeout)
		}
	}()
	if s.proc != nil {
		go func() {
			<-s.proc.done
			_ = cs.Close() // fail the calls in flight now, not at the next write
		}()
	}
	return s, nil
}

// drop forgets s so that the next call connects again.
func (r *remote) drop(s *session) {
	r.mu.Lock()
	if r.sess == s {
		r.sess = nil
	}
	r.mu.Unlock()
	go r.endSession(s)
}

func (r *remote) endSession(s *session) {
	_ = s.cs.Close()
	if s.proc != nil {
		s.proc.stop(r.ts.opts.TerminateTimeout)
	}
}

func (r *remote) close() {
	r.mu.Lock()
	r.closed = true
	s := r.sess
	r.sess = nil
	r.mu.Unlock()
	if s != nil {
		r.endSession(s)
	}
}

// list returns the server's tools, asking the server when they are not
// known or have changed.
func (r *remote) list(ctx context.Context) ([]tool.Info, error) {
	r.mu.Lock()
	if r.listed && !r.stale && r.sess != nil && r.sess.alive() {
		out := r.tools
		r.mu.Unlock()
		return out, nil
	}
	cached := r.tools
	r.mu.Unlock()
	s, err := r.session(ctx, true)
	if err != nil {
		return cached, err
	}
	r.mu.Lock()
	r.stale = false
	r.mu.Unlock()
	lib := r.library(s)
	var infos []tool.Info
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			r.mu.Lock()
			r.stale = true
			r.mu.Unlock()
			return cached, fmt.Errorf("listing the tools of MCP server %q: %w", r.cfg.Alias, err)
		}
		infos = append(infos, r.toInfo(t, lib))
	}
	r.mu.Lock()
	r.tools, r.listed, r.coerce = infos, true, nil
	r.mu.Unlock()
	return infos, nil
}

// types returns the coercible property types of a tool's input schema,
// read once per listing.
func (r *remote) types(info *tool.Info) tool.PropertyTypes {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.coerce[info.Name]; ok {
		return p
	}
	p := tool.PropertyTypesOf(info.InputSchema)
	if r.coerce == nil {
		r.coerce = map[string]tool.PropertyTypes{}
	}
	r.coerce[info.Name] = p
	return p
}

func (r *remote) library(s *session) tool.Library {
	lib := tool.Library{ID: r.cfg.Alias, Name: r.cfg.Alias}
	if init := s.cs.InitializeResult(); init != nil {
		if si := init.ServerInfo; si != nil {
			if si.Title != "" {
				lib.Name = si.Title
			}
			lib.Description = si.Description
		}
		if lib.Description == "" {
			lib.Description = init.Instructions
		}
	}
	return lib
}

// mcpInteractions is what an MCP tool may ask through elicitation.
var mcpInteractions = tool.Capabilities{Confirm: true, Text: true, Select: true, Form: true, FormValidation: true}

func (r *remote) toInfo(t *sdk.Tool, lib tool.Library) tool.Info {
	in, out := r.store.get(t.Name)
	if len(in) == 0 {
		in = marshalSchema(t.InputSchema)
	}
	if len(out) == 0 && t.OutputSchema != nil {
		out = marshalSchema(t.OutputSchema)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	ann := r.store.annotations(t.Name)
	if ann == nil {
		ann = fromSDKToolAnnotations(t.Annotations)
	}
	return tool.Info{
		Name:         r.cfg.Alias + Separator + t.Name,
		Title:        t.Title,
		Description:  desc,
		InputSchema:  in,
		OutputSchema: out,
		Interactions: mcpInteractions,
		Annotations:  ann,
		Library:      lib,
	}
}

func marshalSchema(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b
}

// info returns the Info of one of the server's tools, listing them again
// when the server said they changed. When the server cannot be listed (it
// is down), a call is still attempted: it connects and the server itself
// says whether the tool exists.
func (r *remote) info(ctx context.Context, name string) (tool.Info, bool) {
	full := r.cfg.Alias + Separator + name
	find := func() (tool.Info, bool, bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, t := range r.tools {
			if t.Name == full {
				return t, true, r.listed && !r.stale
			}
		}
		return tool.Info{}, false, r.listed && !r.stale
	}
	info, found, fresh := find()
	if found {
		return info, true
	}
	if !fresh {
		if _, err := r.list(ctx); err == nil {
			info, found, fresh = find()
			if found {
				return info, true
			}
		}
	}
	if fresh {
		return tool.Info{}, false
	}
	return tool.Info{
		Name:         full,
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		Interactions: mcpInteractions,
		Library:      tool.Library{ID: r.cfg.Alias, Name: r.cfg.Alias},
	}, true
}

// callEntry is a call in flight: server requests are routed to it.
type callEntry struct {
	runCtx context.Context // the context its questions are asked under
	call   *tool.CallRequest
	token  string
	askMu  sync.Mutex
}

type entryKey struct{}

func (r *remote) call(ctx context.Context, info *tool.Info, name string, args json.RawMessage, c *tool.CallRequest) (*tool.Result, error) {
	for attempt := 0; ; attempt++ {
		s, err := r.session(ctx, false)
		if err != nil {
			if ctx.Err() != nil {
				return nil, tool.ContextError(ctx, info.Name)
			}
			return nil, &tool.TransportError{Tool: info.Name, Err: err}
		}
		res, err := r.callOnce(ctx, s, info, name, args, c)
		if err == nil {
			return res, nil
		}
		// A session the server no longer knows (it restarted) never saw the
		// call: open a new one and send it again, once.
		if attempt == 0 && r.cfg.Type != TypeStdio && errors.Is(err, sdk.ErrSessionMissing) && ctx.Err() == nil {
			r.drop(s)
			continue
		}
		return nil, r.callError(ctx, s, info.Name, err)
	}
}

func (r *remote) callOnce(ctx context.Context, s *session, info *tool.Info, name string, args json.RawMessage, c *tool.CallRequest) (*tool.Result, error) {
	e := &callEntry{runCtx: ctx, call: c, token: tool.NewID()}
	r.mu.Lock()
	r.active[e] = struct{}{}
	r.byToken[e.token] = e
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.active, e)
		r.mu.Unlock()
		// The SDK may deliver the last progress notifications just after
		// the result they preceded: keep the token a moment longer.
		time.AfterFunc(time.Second, func() {
			r.mu.Lock()
			delete(r.byToken, e.token)
			r.mu.Unlock()
		})
	}()

	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(e.token)
	// Servers of protocol 2026-07-28 and later log for a request at the
	// level its _meta names (others ignore the key).
	//lint:ignore SA1019 see logMessage
	params.Meta[sdk.MetaKeyLogLevel] = r.ts.opts.LogLevel
	res, err := s.cs.CallTool(context.WithValue(ctx, entryKey{}, e), params)
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && ctx.Err() == nil {
			return rpcErrorResult(info.Name, r.cfg.Alias, rpc)
		}
		return nil, err
	}
	out, err := fromMCP(res)
	if err != nil {
		return nil, &tool.ProtocolError{Tool: info.Name, Message: err.Error()}
	}
	return out, nil
}

// rpcErrorResult maps a JSON-RPC error answer to a tools/call: an unknown
// tool and invalid parameters (the server's validation refused the
// arguments) are engine errors, 404 and 400, as for any other tool;
// anything else (a failure inside the server) is a failed result the
// model reads, as servers are expected to report tool failures.
func rpcErrorResult(name, alias string, rpc *jsonrpc.Error) (*tool.Result, error) {
	msg := strings.ToLower(rpc.Message)
	if rpc.Code == jsonrpc.CodeMethodNotFound || (rpc.Code == jsonrpc.CodeInvalidParams && strings.Contains(msg, "tool") && (strings.Contains(msg, "unknown") || strings.Contains(msg, "not found"))) {
		return nil, &tool.UnknownToolError{Name: name}
	}
	if rpc.Code == jsonrpc.CodeInvalidParams {
		return nil, &tool.InvalidArgumentsError{Tool: name, Message: fmt.Sprintf("MCP server %q refused them: %s", alias, rpc.Message)}
	}
	return tool.Failure(fmt.Sprintf("MCP server %q returned an error: %s (code %d)", alias, rpc.Message, rpc.Code)), nil
}

// callError turns the failure of a call into the engine error the caller
// gets, and drops a session that is gone.
func (r *remote) callError(ctx context.Context, s *session, name string, err error) error {
	if ctx.Err() != nil {
		return tool.ContextError(ctx, name)
	}
	if s.proc != nil {
		if exit := s.proc.exited(2 * time.Second); exit != nil {
			r.drop(s)
			return &tool.TransportError{Tool: name, Err: fmt.Errorf("%w; it is started again on the next call", exit)}
		}
	}
	if !s.alive() || errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) {
		r.drop(s)
	}
	return &tool.TransportError{Tool: name, Err: fmt.Errorf("MCP server %q: %w", r.cfg.Alias, err)}
}

// elicit routes an elicitation of the server to the call it belongs to:
// the call whose context carries it (the multi-round-trip flow of newer
// protocol revisions), else the only call in flight. Otherwise it goes to
// ClientOptions.Respond.
func (r *remote) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	in, err := fromElicit(req.Params)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if in.req.Kind == tool.KindForm && !in.url {
		// The form's fields in the order the server wrote them.
		if raw := r.store.form(req.Params.RequestedSchema); raw != nil {
			in.req.Schema = raw
		}
	}
	e, _ := ctx.Value(entryKey{}).(*callEntry)
	if e == nil {
		r.mu.Lock()
		if len(r.active) == 1 {
			for a := range r.active {
				e = a
			}
		}
		r.mu.Unlock()
	}
	if e != nil {
		e.askMu.Lock()
		resp, err := e.call.Ask(e.runCtx, in.req)
		e.askMu.Unlock()
		if err != nil {
			return &sdk.ElicitResult{Action: actionCancel}, nil
		}
		return in.result(resp), nil
	}
	in.req.ID, in.req.Tool, in.req.Library = tool.NewID(), r.cfg.Alias, r.cfg.Alias
	if r.ts.opts.Respond == nil {
		return &sdk.ElicitResult{Action: actionDecline}, nil
	}
	return in.result(r.ts.opts.Respond(ctx, in.req)), nil
}

func (r *remote) progress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	token := fmt.Sprint(req.Params.ProgressToken)
	r.mu.Lock()
	e := r.byToken[token]
	r.mu.Unlock()
	if e == nil {
		return
	}
	ev := tool.Event{Kind: tool.EventProgress, Progress: req.Params.Progress, Total: req.Params.Total, Text: req.Params.Message}
	e.call.Emit(ev)
	if r.ts.opts.OnEvent != nil {
		ev.Tool, ev.CallID, ev.Library = e.call.Tool, e.call.CallID, e.call.Info.Library.ID
		r.ts.opts.OnEvent(ev)
	}
}

// setLogLevel asks a server that declares logging, of a protocol revision
// before 2026-07-28, for its messages from level up: servers built on some
// SDKs send none until a client sets a level. Later revisions take the
// level with each request instead (callOnce). A server that refuses is
// left as it is.
func setLogLevel(ctx context.Context, cs *sdk.ClientSession, level string) {
	init := cs.InitializeResult()
	//lint:ignore SA1019 see logMessage
	if init == nil || init.Capabilities == nil || init.Capabilities.Logging == nil || init.ProtocolVersion >= perRequestLogLevel {
		return
	}
	//lint:ignore SA1019 see logMessage
	_ = cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: sdk.LoggingLevel(level)})
}

// perRequestLogLevel is the first protocol revision where a request names
// the log level it wants in its _meta, in place of logging/setLevel.
const perRequestLogLevel = "2026-07-28"

// logMessage turns a server's log message into a log event: of the call
// whose progress token it carries, else of the only call in flight on the
// server (MCP ties log messages to no request, so with several calls at
// once nobody can tell whose it is), else of no call, for
// ClientOptions.OnEvent only. MCP logging is deprecated from protocol
// 2026-07-28 on (SEP-2577), but servers of earlier revisions use it to
// say what their tools do.
func (r *remote) logMessage(ctx context.Context, req *sdk.LoggingMessageRequest) {
	if req == nil || req.Params == nil {
		return
	}
	r.mu.Lock()
	e, _ := ctx.Value(entryKey{}).(*callEntry)
	if e == nil {
		if tok := req.Params.GetProgressToken(); tok != nil {
			e = r.byToken[fmt.Sprint(tok)]
		}
	}
	if e == nil && len(r.active) == 1 {
		for a := range r.active {
			e = a
		}
	}
	r.mu.Unlock()
	// The logger's name goes before the text, unless it only repeats the
	// tool's.
	logger := req.Params.Logger
	if e != nil && (logger == e.call.Info.Name || r.cfg.Alias+Separator+logger == e.call.Info.Name) {
		logger = ""
	}
	ev := logEvent(req.Params, logger)
	if e != nil {
		e.call.Emit(ev)
		ev.Tool, ev.CallID, ev.Library = e.call.Tool, e.call.CallID, e.call.Info.Library.ID
	} else {
		ev.Library = r.cfg.Alias
	}
	if r.ts.opts.OnEvent != nil {
		r.ts.opts.OnEvent(ev)
	}
}

// logEvent is the log event of a server's log message: its level, its
// text (a string's own, else the "message" of an object, else the JSON),
// with logger's name before it, and structured data as Data.
//
//lint:ignore SA1019 see logMessage
func logEvent(p *sdk.LoggingMessageParams, logger string) tool.Event {
	ev := tool.Event{Kind: tool.EventLog, Level: string(p.Level)}
	switch ev.Level {
	case "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
	default:
		ev.Level = "info"
	}
	switch d := p.Data.(type) {
	case string:
		ev.Text = d
	case nil:
	default:
		raw, err := json.Marshal(d)
		if err == nil {
			ev.Data = raw
			ev.Text = string(raw)
			if m, ok := d.(map[string]any); ok {
				if msg, ok := m["message"].(string); ok {
					ev.Text = msg
				}
			}
		}
	}
	if logger != "" {
		ev.Text = logger + ": " + ev.Text
	}
	return ev
}
