package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/internal/firstbyte"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/web"
	"github.com/spf13/cobra"
)

// ServeOptions are the options of lcp serve.
type ServeOptions struct {
	env *Env
	ctx context.Context

	inv         inventoryFlags
	watch       watchFlags
	approval    approvalFlags
	addr        string
	open        bool
	allowRemote bool
	token       string
	log         logFlags
	drain       drainFlags
	stopped     stoppedFlags
	// ready, when set, gets the page's URL once the server listens (tests).
	ready func(url string)
}

// NewCmdServe returns lcp serve; runF runs it (nil: runServe).
func NewCmdServe(env *Env, runF func(*ServeOptions) error) *cobra.Command {
	o := &ServeOptions{env: env}
	cmd := &cobra.Command{
		Use:   "serve [--addr ADDR] [--open]",
		Short: "Serve the web page: run tools and answer their questions in a browser",
		Long: `Serve a web page that lists the tools, runs calls with forms built from their
schemas, shows the results, and answers the tools' confirmations and questions
while they wait, with a live event log. Stop with Ctrl-C.

The page listens on the loopback interface (--addr 127.0.0.1:7777). Another
address needs --allow-remote.

No local user can act for another: the printed address carries a one-time
sign-in token, which the page trades for a cookie only that browser holds;
a request with neither gets a short sign-in hint. Each sign-in prints the
next address. Programs may send the server's token (--token, or
$LCP_SERVE_TOKEN; random and secret otherwise) in the X-LCP-Token header.
/healthz and /readyz need no sign-in. On SIGTERM or Ctrl-C the page stops
taking calls, declines pending approvals and lets calls in flight finish
(--drain-timeout). A Python worker stopped (SIGSTOP, a debugger) for
--stopped-limit while calls wait for it is killed, and those calls fail
with a reason that says so.`,
		Example: `  # the page on 127.0.0.1:7777, opened in the browser
  $ lcp serve --tools ./my_tools --open

  # another port, the tools reloaded when they change
  $ lcp serve --addr 127.0.0.1:9000 --watch`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ctx = cmd.Context()
			if runF != nil {
				return runF(o)
			}
			return runServe(o)
		},
	}
	o.inv.register(cmd.Flags(), runsTools)
	o.inv.status = env.Stderr
	o.watch.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:7777", "listen `address` (host:port; port 0 picks a free one)")
	f.BoolVar(&o.open, "open", false, "open the page in the default browser")
	f.BoolVar(&o.allowRemote, "allow-remote", false, "allow an address other machines can reach (the page then needs its token)")
	f.StringVar(&o.token, "token", "", "session `token` (default: $LCP_SERVE_TOKEN, else random)")
	o.approval.register(f, false, "the page")
	o.drain.register(f)
	o.stopped.register(f)
	o.log.register(f, "log requests and answers (never their values) on stderr")
	registerCompletions(cmd, &o.inv)
	return cmd
}

func runServe(o *ServeOptions) error {
	ctx, env := o.ctx, o.env
	if err := web.CheckAddr(o.addr, o.allowRemote); err != nil {
		return &usageError{err}
	}
	policy, err := o.approval.policy()
	if err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(o.addr)
	remote := !web.IsLoopbackHost(host)
	token := o.token
	if token == "" && env.Getenv != nil {
		token = env.Getenv("LCP_SERVE_TOKEN")
	}
	if remote && token != "" && len(token) < 16 {
		return usagef("--token must be at least 16 characters for a remote page")
	}

	if err := o.drain.check(); err != nil {
		return err
	}
	logger, err := o.log.logger(env.Stderr, slog.LevelWarn)
	if err != nil {
		return err
	}
	// Nobody but the page answers: requests wait for it (nil front end).
	broker := hitl.New(nil, &hitl.Options{Policy: policy, Logger: logger})
	defer broker.Close()

	// The page subscribes to the events of the calls it makes; what the
	// workers print outside any call goes to the log.
	relay := &changeRelay{}
	eng, err := o.inv.engine(ctx, func(c *lcp.Config) {
		o.watch.configure(c, relay)
		o.stopped.configure(c)
		c.Respond = broker.Respond
		c.Logger = logger
		c.OnCall = logCalls(logger, nil)
		c.OnWorker = logWorkers(logger, nil)
		c.OnEvent = func(e tool.Event) {
			if e.CallID == "" && e.Kind == tool.EventOutput {
				logger.Debug("worker output", "stream", e.Stream, "text", e.Text)
			}
		}
	})
	if err != nil {
		return err
	}
	defer eng.Close()

	var hosts []string
	if remote && host != "" && net.ParseIP(host) == nil {
		hosts = append(hosts, host)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return listenError("--addr", o.addr, err)
	}
	base := pageURL(ln.Addr().String(), host)
	var srv *web.Server
	var printMu sync.Mutex
	// Each sign-in uses up the address printed: the next one is printed
	// for another browser.
	onSignIn := func() {
		printMu.Lock()
		defer printMu.Unlock()
		fmt.Fprintf(env.Stdout, "lcp serve: signed in a browser; the next sign-in address: %s\n", srv.SignInURL(base))
	}
	srv = web.NewServer(eng, broker, &web.Options{Token: token, Remote: remote, Hosts: hosts, Logger: logger, OnSignIn: onSignIn})
	defer srv.Close()
	relay.add(func(c lcp.Change) {
		what := describeChange(c)
		fmt.Fprintln(env.Stderr, "lcp serve: reloaded: "+what)
		srv.ToolsChanged(what)
	})
	printMu.Lock()
	u := srv.SignInURL(base)
	fmt.Fprintf(env.Stdout, "lcp serve: %s\n", u)
	printMu.Unlock()
	if n := len(eng.Diagnostics(ctx)); n > 0 {
		fmt.Fprintf(env.Stderr, "lcp serve: %d diagnostic(s); see the page or lcp check\n", n)
	}

	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(firstbyte.Listen(ln, hs.IdleTimeout)) }()
	if o.ready != nil {
		o.ready(u)
	}
	if o.open {
		if err := openBrowser(u); err != nil {
			fmt.Fprintf(env.Stderr, "lcp serve: could not open a browser (%v); open the URL above\n", err)
		}
	}

	abort, stop := secondSignal(env)
	defer stop()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Drain: no new calls, pending approvals declined, calls in flight
	// get --drain-timeout (a second signal ends the wait). Then the calls
	// still running are cancelled and the event streams end, so that the
	// HTTP server can stop; the engine's workers stop when the deferred
	// Close runs.
	dctx, cancelDrain := context.WithTimeout(context.Background(), o.drain.timeout)
	go func() {
		select {
		case <-abort:
			cancelDrain()
		case <-dctx.Done():
		}
	}()
	if err := srv.Drain(dctx); err != nil {
		fmt.Fprintln(env.Stderr, "lcp serve: calls still running after --drain-timeout are cancelled")
	}
	cancelDrain()
	_ = srv.Close()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(env.Stderr, "lcp serve: stopped")
	return nil
}

// pageURL is the address of the page: the listener's, with the name the
// user gave when it was one.
func pageURL(listen, host string) string {
	_, port, _ := net.SplitHostPort(listen)
	switch {
	case host == "" || host == "0.0.0.0" || host == "::":
		host = "localhost"
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/"}
	return u.String()
}

func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
