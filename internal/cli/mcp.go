package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/internal/metrics"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/web"
)

// MCPOptions are the options of lcp mcp.
type MCPOptions struct {
	env *Env
	ctx context.Context

	inv      inventoryFlags
	watch    watchFlags
	inspect  bool
	approval approvalFlags
	http     string
	useHTTP  bool // --http was given (an empty ADDR means the default)
	token    string
	noToken  bool
	origins  []string
	hosts    []string
	log      logFlags
	drain    drainFlags
	stopped  stoppedFlags
	// bodyTimeout is --body-timeout (mcp.HTTPOptions.BodyTimeout; 0:
	// none); bodyTimeoutSet says it was given.
	bodyTimeout    time.Duration
	bodyTimeoutSet bool

	stateless    bool
	replicaID    string
	replicas     []string // ID=URL of the other stateless replicas
	metricsAddr  string
	jsonResponse bool
	tasks        bool // serve MCP's tasks extension (--tasks)
	// The limits (see mcp.ServerOptions and mcp.HTTPOptions).
	maxSessions        int
	sessionIdle        time.Duration
	maxCalls           int
	maxCallsPerSession int
	maxBatch           int
	maxResultBytes     int
	// ready, when set, gets the endpoint's URL once it listens (tests).
	ready func(url string)
}

// NewCmdMCP returns lcp mcp; runF runs it (nil: runMCP).
func NewCmdMCP(env *Env, runF func(*MCPOptions) error) *cobra.Command {
	o := &MCPOptions{env: env}
	cmd := &cobra.Command{
		Use:   "mcp [--http ADDR [--token T | --no-token] [--stateless]]",
		Short: "Serve the tools to MCP clients (stdio by default, or streamable HTTP)",
		Long: `Serve the inventory as an MCP server: over stdio (how desktop assistants,
IDEs and agent CLIs start it), or over streamable HTTP with --http.

Confirmations and questions of the tools go to the person through the
client's elicitation: approvals as a form asking allow, always or reject;
questions as forms; secrets through a page lcp serves on loopback, which the
client opens (URL-mode elicitation) so that they never pass through it.
With a client that cannot ask, nothing is approved unless --yes or
--approve=allow says so, and the tool is told why.

Tools' images, sound and documents reach the client as content blocks. The
libraries' system prompts, the MCP servers' prompts and their arguments are
served as MCP prompts. Without --llm, omni-tools (generate_text) ask the
client's model through sampling when the client offers it.

--http listens on loopback (127.0.0.1:8765 when ADDR is left out); pages of other
origins and other Host names are refused. Every request must carry a bearer
token ("Authorization: Bearer T"): --token, or $LCP_MCP_TOKEN, or one made
up and printed on stderr at start. --no-token serves without one, on
loopback only: then any local user can run the tools.

Limits keep a shared server bounded: sessions (--max-sessions, idle ones
closed after --session-idle), calls in flight (--max-calls,
--max-calls-per-session: 429 when full), JSON-RPC batches (refused from
protocol 2025-06-18 on, --max-batch messages before), results
(--max-result-bytes). /healthz and /readyz answer without a token;
/metrics (Prometheus) needs it, unless --metrics-addr serves it on a
listener of its own. On SIGTERM or Ctrl-C the server drains: new sessions
and calls get 503, questions waiting for a person are declined, calls in
flight have --drain-timeout to finish; those still running then are
cancelled, each answered with an error that says so.

Deadlines: a request's body must arrive within --body-timeout of its
headers (408 otherwise); a Python worker stopped (SIGSTOP, a debugger) for
--stopped-limit while calls wait for it is killed and those calls fail with
a reason that says so.

--tasks serves MCP's tasks extension to clients of the 2026-07-28 wire
that declare it: their tools/call requests answer at once with a task,
which they poll with tasks/get, answer with tasks/update (a question of
the tool) and stop with tasks/cancel. Other clients are served as before;
the same Host, Origin and token checks apply.

Replicas: --stateless keeps no session, so any replica serves any
request behind a round-robin balancer; --replica-id ID starts the session
ids of a stateful replica, for a balancer that routes on them.`,
		Example: `  # over stdio, as MCP clients start it (lcp mcp install writes their configuration)
  $ lcp mcp --tools ./my_tools --watch

  # over HTTP on 127.0.0.1:8765, with a token printed at start
  $ lcp mcp --tools ./my_tools --http

  # a shared server: any interface, a chosen token, no session state
  $ LCP_MCP_TOKEN=$(openssl rand -hex 24) lcp mcp --http 0.0.0.0:8765 --stateless`,
		Args: func(cmd *cobra.Command, args []string) error {
			// --http takes its address as --http=ADDR or --http ADDR;
			// alone it means the default address (NoOptDefVal), so the
			// word after it arrives as an argument.
			if cmd.Flags().Changed("http") && len(args) == 1 && o.http == mcp.DefaultAddr {
				if !isAddress(args[0]) {
					return usagef("--http %q: want host:port, e.g. %s", args[0], mcp.DefaultAddr)
				}
				o.http = args[0]
				return nil
			}
			return subcommandArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ctx, o.useHTTP = cmd.Context(), cmd.Flags().Changed("http")
			o.bodyTimeoutSet = cmd.Flags().Changed("body-timeout")
			if runF != nil {
				return runF(o)
			}
			if o.inspect {
				return runInspector(o)
			}
			return runMCP(o)
		},
	}
	o.inv.register(cmd.Flags(), runsTools)
	o.inv.status = env.Stderr
	o.watch.register(cmd.Flags())
	f := cmd.Flags()
	f.BoolVar(&o.inspect, "inspect", false, "open the official MCP Inspector ("+inspectorPackage+", when installed) on this server over stdio")
	f.StringVar(&o.http, "http", "", "serve streamable HTTP at this `address` (host:port; alone: "+mcp.DefaultAddr+") instead of stdio")
	f.Lookup("http").NoOptDefVal = mcp.DefaultAddr
	f.StringVar(&o.token, "token", "", "bearer `token` HTTP requests must carry (default: $LCP_MCP_TOKEN, else a random one printed on stderr)")
	f.BoolVar(&o.noToken, "no-token", false, "serve HTTP without a bearer token (loopback only: any local user can then run the tools)")
	f.StringArrayVar(&o.origins, "allow-origin", nil, "an `origin` (scheme://host[:port]) whose pages may call the HTTP endpoint (repeatable)")
	f.StringArrayVar(&o.hosts, "allow-host", nil, "a Host `name` accepted besides loopback, e.g. behind a proxy (repeatable)")
	f.BoolVar(&o.stateless, "stateless", false, "keep no session: any replica serves any request (questions go through input-required results or the approval policy)")
	f.StringVar(&o.replicaID, "replica-id", "", "start every session id with this `id` and a dot, for a balancer that routes sessions to their replica")
	f.StringArrayVar(&o.replicas, "replica", nil, "with --stateless and --replica-id: another replica, as `ID=URL` (its MCP endpoint), to which the retries of a call it holds are forwarded (repeatable)")
	f.BoolVar(&o.jsonResponse, "json-response", false, "answer each request of a session with one JSON body instead of an event stream (less CPU; progress and questions then need the client's GET stream)")
	f.BoolVar(&o.tasks, "tasks", false, "serve MCP's tasks extension (2026-07-28 wire): a client that declares it gets each tools/call as a task it polls with tasks/get")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve /metrics on this `address` without a token (default: on the MCP address, behind the token)")
	f.IntVar(&o.maxSessions, "max-sessions", mcp.DefaultMaxSessions, "sessions kept at once; -1 for no limit (0: the default)")
	f.DurationVar(&o.sessionIdle, "session-idle", mcp.DefaultSessionTimeout, "close sessions idle for this long")
	f.IntVar(&o.maxCalls, "max-calls", mcp.DefaultMaxCalls, "calls running at once, all sessions together; -1 for no limit")
	f.IntVar(&o.maxCallsPerSession, "max-calls-per-session", mcp.DefaultMaxCallsPerSession, "calls one session runs at once; -1 for no limit")
	f.IntVar(&o.maxBatch, "max-batch", mcp.DefaultMaxBatch, "messages in a JSON-RPC batch (protocol revisions before 2025-06-18)")
	f.IntVar(&o.maxResultBytes, "max-result-bytes", mcp.DefaultMaxResultBytes, "size of a result sent to a client; longer text is cut")
	o.bodyTimeout = mcp.DefaultBodyTimeout
	f.Var(deadline{&o.bodyTimeout}, "body-timeout", "with --http: a request whose body has not arrived this `long` after its headers gets 408 and its connection is closed; 0: no bound")
	o.drain.register(f)
	o.stopped.register(f)
	o.approval.register(f, true, "the client's user")
	o.log.register(f, "log at debug level: each call, worker and request (never answer values)")
	cmd.AddCommand(NewCmdMCPInstall(env, nil), newMCPLoginCmd(env), newMCPLogoutCmd(env))
	registerCompletions(cmd, &o.inv)
	return cmd
}

// isAddress reports whether s reads as the host:port (or :port) of --http
// ADDR, "" being the default address.
func isAddress(s string) bool {
	if s == "" {
		return true
	}
	_, port, err := net.SplitHostPort(s)
	return err == nil && port != ""
}

// checkHTTP checks the flags that go with --http and returns the
// bearer token to require ("" with --no-token).
func (o *MCPOptions) checkHTTP() (token string, generated bool, err error) {
	httpOnly := o.bodyTimeoutSet || o.token != "" || o.noToken || len(o.origins) > 0 || len(o.hosts) > 0 || o.stateless || o.replicaID != "" || len(o.replicas) > 0 || o.metricsAddr != "" || o.jsonResponse || o.tasks
	if !o.useHTTP {
		if httpOnly {
			return "", false, usagef("--token, --no-token, --allow-origin, --allow-host, --stateless, --replica-id, --metrics-addr, --json-response, --tasks and --body-timeout go with --http")
		}
		return "", false, nil
	}
	if err := o.drain.check(); err != nil {
		return "", false, err
	}
	if o.replicaID != "" {
		if err := mcp.ValidReplicaID(o.replicaID); err != nil {
			return "", false, &usageError{err}
		}
		if o.stateless && len(o.replicas) == 0 {
			return "", false, usagef("--replica-id names the sessions of a stateful replica; --stateless keeps none (add --replica ID=URL for each other replica to keep calls live)")
		}
	}
	if len(o.replicas) > 0 {
		if !o.stateless || o.replicaID == "" {
			return "", false, usagef("--replica goes with --stateless and --replica-id")
		}
		if _, err := o.replicaMap(); err != nil {
			return "", false, &usageError{err}
		}
	}
	if o.jsonResponse && o.stateless {
		return "", false, usagef("--json-response answers the requests of sessions; --stateless keeps none")
	}
	// Zero means the default (as for options built without flags).
	for _, l := range []struct {
		v   *int
		def int
	}{{&o.maxSessions, mcp.DefaultMaxSessions}, {&o.maxCalls, mcp.DefaultMaxCalls}, {&o.maxCallsPerSession, mcp.DefaultMaxCallsPerSession},
		{&o.maxBatch, mcp.DefaultMaxBatch}, {&o.maxResultBytes, mcp.DefaultMaxResultBytes}} {
		if *l.v == 0 {
			*l.v = l.def
		}
	}
	if o.maxBatch < 0 {
		return "", false, usagef("--max-batch must be positive: batches are always capped")
	}
	if o.sessionIdle < 0 {
		return "", false, usagef("--session-idle must be positive")
	}
	if o.sessionIdle == 0 {
		o.sessionIdle = mcp.DefaultSessionTimeout
	}
	token = o.token
	if token == "" && o.env.Getenv != nil {
		token = o.env.Getenv("LCP_MCP_TOKEN")
	}
	if o.noToken {
		if o.token != "" {
			return "", false, usagef("--no-token contradicts --token")
		}
		addr := o.http
		if addr == "" {
			addr = mcp.DefaultAddr
		}
		if host, _, err := net.SplitHostPort(addr); err != nil || !web.IsLoopbackHost(host) {
			return "", false, usagef("--no-token serves loopback only: %q is not a loopback address", addr)
		}
		return "", false, nil
	}
	if token == "" {
		return newToken(), true, nil
	}
	return token, false, nil
}

func runMCP(o *MCPOptions) error {
	ctx, env, useHTTP := o.ctx, o.env, o.useHTTP
	policy, err := o.approval.policy()
	if err != nil {
		return err
	}
	token, generated, err := o.checkHTTP()
	if err != nil {
		return err
	}
	level := slog.LevelWarn
	if useHTTP {
		level = slog.LevelInfo // a server's operator reads its log
	}
	logger, err := o.log.logger(env.Stderr, level)
	if err != nil {
		return err
	}
	httpOpts := &mcp.HTTPOptions{Token: token, AllowedOrigins: o.origins, AllowedHosts: o.hosts,
		MaxSessions: o.maxSessions, SessionTimeout: o.sessionIdle, MaxBatch: o.maxBatch,
		Stateless: o.stateless, DrainTimeout: o.drain.timeout, JSONResponse: o.jsonResponse,
		BodyTimeout: o.bodyTimeout}
	if o.drain.timeout == 0 {
		httpOpts.DrainTimeout = -1
	}
	if o.bodyTimeout == 0 {
		httpOpts.BodyTimeout = -1 // no bound; HTTPOptions' zero is the default
	}
	var ln net.Listener
	if useHTTP {
		// Listen before starting Python workers: a bad address fails fast.
		ln, err = mcp.Listen(o.http, httpOpts)
		if errors.Is(err, mcp.ErrTokenRequired) {
			return &usageError{err}
		}
		if err != nil {
			return listenError("--http", o.http, err)
		}
		defer ln.Close()
	}

	var m *metrics.Metrics
	if useHTTP {
		m = metrics.New()
	}
	// One broker for every session: the sessions' front ends ask through
	// it, and calls a Python tool makes itself get the unattended answer.
	broker := hitl.New(unattended, &hitl.Options{Policy: policy, Logger: logger})
	defer broker.Close()
	relay := &changeRelay{}
	eng, err := o.inv.engine(ctx, func(cfg *lcp.Config) {
		o.watch.configure(cfg, relay)
		o.stopped.configure(cfg)
		cfg.DynamicPrompts = true
		cfg.Respond = broker.Respond // calls a Python tool makes itself
		cfg.Logger = logger
		var onCall func(lcp.CallReport)
		var onWorker func(lcp.WorkerEvent)
		var onEvent func(tool.Event)
		if m != nil {
			onCall, onWorker, onEvent = m.ObserveCall, m.ObserveWorker, m.ObserveEvent
			// A result is read whole before it is cut to
			// --max-result-bytes: bound what a worker may send.
			if o.maxResultBytes > 0 {
				cfg.MaxResultBytes = max(16*o.maxResultBytes, 16<<20)
			}
		}
		cfg.OnCall = logCalls(logger, onCall)
		cfg.OnWorker = logWorkers(logger, onWorker)
		cfg.OnEvent = logOutput(logger, onEvent)
	})
	if err != nil {
		return err
	}
	defer eng.Close()
	for _, d := range eng.Diagnostics(ctx) {
		if d.Severity == "error" {
			fmt.Fprintln(env.Stderr, "lcp: "+d.String())
		}
	}

	srvOpts := &mcp.ServerOptions{
		Name:               "lcp",
		Instructions:       instructions(ctx, eng),
		Broker:             broker,
		Unattended:         mcpUnattended(policy),
		Logger:             logger,
		MaxCalls:           o.maxCalls,
		MaxCallsPerSession: o.maxCallsPerSession,
		MaxResultBytes:     o.maxResultBytes,
		ReplicaID:          o.replicaID,
		Prompts:            eng,
	}
	srvOpts.Replicas, _ = o.replicaMap()
	if token != "" {
		// Replicas that share the token continue each other's calls
		// (--stateless): the key that signs request states derives from it.
		sum := sha256.Sum256([]byte("lcp request state\x00" + token))
		srvOpts.StateKey = sum[:]
	}
	if m != nil {
		srvOpts.OnRefused = m.Refused
	}
	srv := mcp.NewServer(eng, srvOpts)
	defer srv.Close()
	relay.add(func(c lcp.Change) {
		fmt.Fprintln(env.Stderr, "lcp mcp: reloaded: "+describeChange(c))
		if err := srv.ToolsChanged(ctx); err != nil {
			fmt.Fprintln(env.Stderr, "lcp mcp: listing the reloaded tools: "+err.Error())
		}
	})
	TuneGC(ctx, env.Getenv)

	if !useHTTP {
		// stdout carries the protocol: everything else goes to stderr.
		t := &sdk.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}}
		err := srv.Run(ctx, t)
		if err == nil || clientGone(err) {
			return nil
		}
		return err
	}
	m.GaugeFunc("lcp_mcp_sessions", "MCP sessions held.", func() float64 { return float64(srv.Sessions()) })
	m.GaugeFunc("lcp_mcp_calls_in_flight", "tools/call requests being served.", func() float64 { return float64(srv.CallsInFlight()) })
	m.GaugeFunc("lcp_pending_approvals", "Confirmations and questions waiting for a person.", func() float64 { return float64(len(broker.Pending())) })
	m.GaugeFunc("lcp_draining", "1 while the server drains.", func() float64 {
		if srv.Draining() {
			return 1
		}
		return 0
	})
	if o.metricsAddr != "" {
		mctx, stop := context.WithCancel(context.Background())
		defer stop()
		murl, _, err := serveMetrics(mctx, o.metricsAddr, m)
		if err != nil {
			return &usageError{err}
		}
		fmt.Fprintf(env.Stderr, "lcp: metrics at %s\n", murl)
	} else {
		httpOpts.Metrics = m.Handler()
	}
	if o.tasks {
		// Only requests of the 2026-07-28 wire whose client declares the
		// extension become tasks; the rest pass to the server unchanged.
		tasks := mcp.NewTasks(eng, nil)
		defer tasks.Close()
		guardOpts := *httpOpts
		httpOpts.Wrap = func(h http.Handler) http.Handler {
			return mcp.TasksHandler(h, tasks, &mcp.TaskHTTPOptions{
				Support: func(string) mcp.TaskSupport { return mcp.TaskOptional },
				HTTP:    &guardOpts,
			})
		}
	}
	abort, stop := secondSignal(env)
	defer stop()
	httpOpts.Abort = abort

	url := "http://" + ln.Addr().String() + "/mcp"
	fmt.Fprintf(env.Stderr, "lcp: serving MCP at %s (Ctrl-C stops)\n", url)
	if generated {
		fmt.Fprintf(env.Stderr, "lcp: bearer token (send \"Authorization: Bearer TOKEN\"; choose one with --token or $LCP_MCP_TOKEN): %s\n", token)
	}
	if o.ready != nil {
		o.ready(url)
	}
	err = srv.Serve(ctx, ln, httpOpts)
	fmt.Fprintln(env.Stderr, "lcp: stopped")
	return err
}

// instructions are the libraries' system prompts, sent to clients at
// initialization.
func instructions(ctx context.Context, eng *lcp.Engine) string {
	var parts []string
	for _, p := range eng.SystemPrompts(ctx) {
		if t := strings.TrimSpace(p.Text); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// clientGone reports whether a stdio session ended because the client
// went away: its end of stdin closed, or it stopped reading stdout while
// the server still had something to say (a notification of a reload, say).
func clientGone(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// replicaMap reads the --replica flags (ID=URL).
func (o *MCPOptions) replicaMap() (map[string]string, error) {
	if len(o.replicas) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, r := range o.replicas {
		id, u, ok := strings.Cut(r, "=")
		if !ok {
			return nil, fmt.Errorf("--replica %q: want ID=URL", r)
		}
		if err := mcp.ValidReplicaID(id); err != nil {
			return nil, fmt.Errorf("--replica: %w", err)
		}
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, fmt.Errorf("--replica %q: the URL must be http(s)://host[:port]/path", r)
		}
		m[id] = u
	}
	return m, nil
}
