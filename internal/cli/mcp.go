package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/mcp"
)

// MCPOptions are the options of lcp mcp.
type MCPOptions struct {
	env *Env
	ctx context.Context

	inv      inventoryFlags
	watch    watchFlags
	approval approvalFlags
	http     string
	useHTTP  bool // --http was given (an empty ADDR means the default)
	token    string
	origins  []string
	hosts    []string
	verbose  bool
	// ready, when set, gets the endpoint's URL once it listens (tests).
	ready func(url string)
}

// NewCmdMCP returns lcp mcp; runF runs it (nil: runMCP).
func NewCmdMCP(env *Env, runF func(*MCPOptions) error) *cobra.Command {
	o := &MCPOptions{env: env}
	cmd := &cobra.Command{
		Use:   "mcp [--http ADDR] [--token T]",
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

--http listens on loopback (127.0.0.1:8765 if ADDR is empty); pages of other
origins and other Host names are refused. Another address needs a bearer
token (--token, or $LCP_MCP_TOKEN), which every request must then carry.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ctx, o.useHTTP = cmd.Context(), cmd.Flags().Changed("http")
			if runF != nil {
				return runF(o)
			}
			return runMCP(o)
		},
	}
	o.inv.register(cmd.Flags())
	o.watch.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&o.http, "http", "", "serve streamable HTTP at this `address` (host:port) instead of stdio")
	f.StringVar(&o.token, "token", "", "bearer `token` HTTP requests must carry (default: $LCP_MCP_TOKEN)")
	f.StringArrayVar(&o.origins, "allow-origin", nil, "an `origin` (scheme://host[:port]) whose pages may call the HTTP endpoint (repeatable)")
	f.StringArrayVar(&o.hosts, "allow-host", nil, "a Host `name` accepted besides loopback, e.g. behind a proxy (repeatable)")
	o.approval.register(f, true, "the client's user")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log the MCP traffic's events on stderr (never answer values)")
	cmd.AddCommand(newMCPLoginCmd(env), newMCPLogoutCmd(env))
	return cmd
}

func runMCP(o *MCPOptions) error {
	ctx, env, useHTTP := o.ctx, o.env, o.useHTTP
	policy, err := o.approval.policy()
	if err != nil {
		return err
	}
	token := o.token
	if token == "" && env.Getenv != nil {
		token = env.Getenv("LCP_MCP_TOKEN")
	}
	if !useHTTP && (o.token != "" || len(o.origins) > 0 || len(o.hosts) > 0) {
		return usagef("--token, --allow-origin and --allow-host go with --http")
	}
	httpOpts := &mcp.HTTPOptions{Token: token, AllowedOrigins: o.origins, AllowedHosts: o.hosts}
	var ln net.Listener
	if useHTTP {
		// Listen before starting Python workers: a bad address fails fast.
		ln, err = mcp.Listen(o.http, httpOpts)
		if errors.Is(err, mcp.ErrTokenRequired) {
			return &usageError{err}
		}
		if err != nil {
			return err
		}
		defer ln.Close()
	}

	var logger *slog.Logger
	if o.verbose {
		logger = slog.New(slog.NewTextHandler(env.Stderr, nil))
	}
	// One broker for every session: the sessions' front ends ask through
	// it, and calls a Python tool makes itself get the unattended answer.
	broker := hitl.New(unattended, &hitl.Options{Policy: policy, Logger: logger})
	defer broker.Close()
	relay := &changeRelay{}
	eng, err := o.inv.engine(ctx, func(cfg *lcp.Config) {
		o.watch.configure(cfg, relay)
		cfg.DynamicPrompts = true
		cfg.Respond = broker.Respond // calls a Python tool makes itself
		cfg.Logger = logger
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

	srv := mcp.NewServer(eng, &mcp.ServerOptions{
		Name:         "lcp",
		Instructions: instructions(ctx, eng),
		Broker:       broker,
		Unattended:   mcpUnattended(policy),
		Logger:       logger,
		Prompts:      eng,
	})
	defer srv.Close()
	relay.add(func(c lcp.Change) {
		fmt.Fprintln(env.Stderr, "lcp mcp: reloaded: "+describeChange(c))
		if err := srv.ToolsChanged(ctx); err != nil {
			fmt.Fprintln(env.Stderr, "lcp mcp: listing the reloaded tools: "+err.Error())
		}
	})
	mcp.TuneGC()

	if !useHTTP {
		// stdout carries the protocol: everything else goes to stderr.
		t := &sdk.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}}
		err := srv.Run(ctx, t)
		if err == nil || clientGone(err) {
			return nil
		}
		return err
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	fmt.Fprintf(env.Stderr, "lcp: serving MCP at %s (Ctrl-C stops)\n", url)
	if o.ready != nil {
		o.ready(url)
	}
	return srv.Serve(ctx, ln, httpOpts)
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
