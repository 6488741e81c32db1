package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/internal/firstbyte"
	"github.com/lcptools/lcp/internal/metrics"
	"github.com/lcptools/lcp/tool"
)

// logFlags are --log-format and -v, the structured log of the commands
// that serve (lcp mcp, lcp serve), on stderr.
type logFlags struct {
	format  string
	verbose bool
}

func (l *logFlags) register(fs *pflag.FlagSet, verboseHelp string) {
	fs.StringVar(&l.format, "log-format", "text", "log `format` on stderr: text or json")
	fs.BoolVarP(&l.verbose, "verbose", "v", false, verboseHelp)
}

// logger returns the command's logger: records at level and above (debug
// with -v), as text or JSON lines.
func (l *logFlags) logger(w io.Writer, level slog.Level) (*slog.Logger, error) {
	if l.verbose {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	switch l.format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usagef("--log-format must be text or json, not %q", l.format)
}

// logCalls returns an lcp.Config.OnCall that logs each call with its id:
// the id the front end chose, which the worker's output events carry too.
// It runs twice per call on a server's hot path: records below the
// logger's level are not built, and the others are built as typed
// attributes (LogAttrs), which box nothing.
func logCalls(log *slog.Logger, next func(lcp.CallReport)) func(lcp.CallReport) {
	return func(r lcp.CallReport) {
		if next != nil {
			next(r)
		}
		ctx := context.Background()
		if !r.Ended {
			if log.Enabled(ctx, slog.LevelDebug) {
				log.LogAttrs(ctx, slog.LevelDebug, "call started", slog.String("call_id", r.CallID),
					slog.String("tool", r.Tool), slog.Bool("nested", r.Nested))
			}
			return
		}
		level := slog.LevelInfo
		if r.Status >= 500 {
			level = slog.LevelWarn
		}
		if !log.Enabled(ctx, level) {
			return
		}
		attrs := [5]slog.Attr{slog.String("call_id", r.CallID), slog.String("tool", r.Tool),
			slog.Int("status", r.Status), slog.Int64("duration_ms", r.Duration.Milliseconds())}
		n := 4
		if r.Err != nil {
			attrs[n] = slog.String("error", r.Err.Error())
			n++
		}
		log.LogAttrs(ctx, level, "call ended", attrs[:n]...)
	}
}

// logWorkers returns an lcp.Config.OnWorker that logs the workers' lives.
func logWorkers(log *slog.Logger, next func(lcp.WorkerEvent)) func(lcp.WorkerEvent) {
	return func(e lcp.WorkerEvent) {
		if next != nil {
			next(e)
		}
		switch {
		case e.Started:
			log.Debug("worker started", "library", e.Library, "pid", e.PID, "restart", e.Restart)
		case e.Crashed:
			log.Warn("worker crashed", "library", e.Library, "pid", e.PID, "reason", e.Reason)
		}
	}
}

// logOutput returns an lcp.Config.OnEvent that logs what tools print, at
// debug level, with the call's id.
func logOutput(log *slog.Logger, next func(tool.Event)) func(tool.Event) {
	return func(e tool.Event) {
		if next != nil {
			next(e)
		}
		if e.Kind == tool.EventOutput && log.Enabled(context.Background(), slog.LevelDebug) {
			log.Debug("tool output", "call_id", e.CallID, "tool", e.Tool, "stream", e.Stream, "text", e.Text)
		}
	}
}

// drainFlags is --drain-timeout, the grace period of a stopping server.
type drainFlags struct {
	timeout time.Duration
}

func (d *drainFlags) register(fs *pflag.FlagSet) {
	fs.DurationVar(&d.timeout, "drain-timeout", 30*time.Second,
		"on SIGTERM or Ctrl-C, how long calls in flight may finish before they are cancelled (a second signal stops at once)")
}

func (d *drainFlags) check() error {
	if d.timeout < 0 {
		return usagef("--drain-timeout must not be negative")
	}
	return nil
}

// minDeadline is the shortest --body-timeout or --stopped-limit taken:
// below it a busy machine would cut healthy clients and kill workers that
// were only descheduled.
const minDeadline = time.Second

// deadline is a duration flag that takes 0 (off) or at least
// minDeadline; anything else is refused with an error naming the flag.
type deadline struct{ v *time.Duration }

func (d deadline) String() string {
	if d.v == nil {
		return ""
	}
	return d.v.String()
}

func (d deadline) Set(s string) error {
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || v < 0 || (v > 0 && v < minDeadline) {
		return fmt.Errorf("want 0 (off) or a duration of at least %s, e.g. 30s", minDeadline)
	}
	*d.v = v
	return nil
}

func (d deadline) Type() string { return "duration" }

// stoppedFlags is --stopped-limit, how long a worker with calls waiting
// may stay stopped before the server kills it (lcp mcp, lcp serve).
type stoppedFlags struct {
	limit time.Duration
}

func (s *stoppedFlags) register(fs *pflag.FlagSet) {
	s.limit = defaultStoppedLimit
	fs.Var(deadline{&s.limit}, "stopped-limit",
		"kill a Python worker stopped (SIGSTOP, a debugger; Linux) this `long` while calls wait for it, failing them with a reason; 0: never")
}

// defaultStoppedLimit is --stopped-limit's default, the engine's.
const defaultStoppedLimit = 10 * time.Second

// configure sets the engine's StoppedLimit from the flag.
func (s *stoppedFlags) configure(cfg *lcp.Config) {
	cfg.StoppedLimit = s.limit
	if s.limit == 0 {
		cfg.StoppedLimit = -1 // never; lcp.Config's zero is the default
	}
}

// secondSignal returns a channel closed when the process gets a second
// SIGINT or SIGTERM (the first one cancels the command's context and
// starts the drain), and a function to stop listening.
func secondSignal(env *Env) (<-chan struct{}, func()) {
	sigs, stop := env.signals(os.Interrupt, syscall.SIGTERM)
	abort := make(chan struct{})
	quit := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-sigs:
				n++
				if n == 2 {
					close(abort)
					return
				}
			case <-quit:
				return
			}
		}
	}()
	return abort, func() { stop(); close(quit) }
}

// newToken returns a random bearer token (26 characters of base32, 130
// bits).
func newToken() string { return rand.Text() }

// serveMetrics serves m on its own listener at addr until ctx ends.
func serveMetrics(ctx context.Context, addr string, m *metrics.Metrics) (string, <-chan error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, listenError("--metrics-addr", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	done := make(chan error, 1)
	go func() {
		// A scraper's connection dialled ahead waits for its first request
		// as long as an idle one does.
		err := hs.Serve(firstbyte.Listen(ln, hs.IdleTimeout))
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	return "http://" + ln.Addr().String() + "/metrics", done, nil
}
