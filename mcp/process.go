package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/internal/spawn"
	"github.com/lcptools/lcp/sandbox"
)

// ServerExitError reports a stdio MCP server whose process ended. It is
// wrapped in the *tool.TransportError of the calls it breaks.
type ServerExitError struct {
	Alias string
	// ExitCode is the process's exit status, -1 when a signal ended it.
	ExitCode int
	// Signal names the signal that ended it, if any.
	Signal string
	// Stderr holds the last lines the server wrote on its standard error.
	Stderr string
	// Boxed is true when the server ran in lcp's sandbox.
	Boxed bool
}

func (e *ServerExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %q exited", e.Alias)
	if e.Signal != "" {
		fmt.Fprintf(&b, " (killed by %s)", e.Signal)
	} else {
		fmt.Fprintf(&b, " with status %d", e.ExitCode)
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, "; its last output: %s", e.Stderr)
	}
	if e.Boxed && (e.ExitCode != 0 || e.Signal != "") {
		b.WriteString(` (it ran in lcp's sandbox, which shows it the system, its toolchains, its state folder and what its entry's "sandbox" names: "read", "write", "workspace", "network")`)
	}
	return b.String()
}

// process is a stdio MCP server: its own process group, so that closing
// it also ends what it started (npx and its children), with the last
// lines of its stderr kept for error messages.
type process struct {
	alias  string
	proc   *spawn.Process
	box    *serverBox // nil for a server with "sandbox": false
	stdin  io.WriteCloser
	stdout io.ReadCloser
	tail   *tailBuffer

	done    chan struct{} // closed once the process has been waited for
	errDone chan struct{} // closed when its stderr is drained
	state   *os.ProcessState
	// report is the box's account of the run (nil unboxed): its set-up
	// error, and how the server itself ended.
	report *sandbox.Report
	// inputClosed is closed when lcp closes the process's input; own
	// tells whether the process ended before that (by itself), and is set
	// before done is closed.
	inputClosed chan struct{}
	closeInput  sync.Once
	own         bool

	mu  sync.Mutex
	bad error // the first thing it wrote on stdout that is not MCP
	// goneFirst is set when its output ended, or its input stopped taking
	// writes, before lcp closed its input: it went away by itself.
	goneFirst bool
}

// BadOutputError reports a stdio MCP server that wrote something other
// than MCP's JSON-RPC messages on its standard output.
type BadOutputError struct {
	Alias string
	Err   error
	// Stderr holds the last lines the server wrote on its standard error.
	Stderr string
}

func (e *BadOutputError) Error() string {
	msg := fmt.Sprintf("MCP server %q wrote something that is not an MCP message on its standard output: %v", e.Alias, e.Err)
	if e.Stderr != "" {
		msg += "; its last output on stderr: " + e.Stderr
	}
	return msg
}

func (e *BadOutputError) Unwrap() error { return e.Err }

func startProcess(cfg *ServerConfig, stderr io.Writer, hooks boxHooks) (*process, error) {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = cfg.Dir
	var box *serverBox
	if cfg.Boxed() {
		var err error
		if box, err = wrapServer(cmd, cfg, hooks); err != nil {
			return nil, err
		}
	} else if len(cfg.Env) > 0 {
		env := os.Environ()
		for k, v := range cfg.Env {
			env = append(env, k+"="+v)
		}
		cmd.Env = env
	}
	// Plain pipes rather than cmd.StdoutPipe and friends: Wait then
	// returns as soon as the process ends, even while a child it left
	// behind holds the pipes, and never closes what the SDK still reads.
	inR, inW, err := os.Pipe()
	if err != nil {
		box.close()
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		box.close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		box.close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	p := &process{alias: cfg.Alias, box: box, stdout: outR, tail: &tailBuffer{max: 2048}, done: make(chan struct{}),
		errDone: make(chan struct{}), inputClosed: make(chan struct{})}
	p.stdin = &inputCloser{WriteCloser: inW, p: p}
	// The server (or its box's init, which forwards signals to it) gets
	// SIGTERM when lcp dies.
	proc, err := spawn.Start(cmd, &spawn.Options{DeathSignal: syscall.SIGTERM})
	if box != nil {
		box.box.Started()
	}
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		box.close()
		return nil, fmt.Errorf("starting %q: %w", cfg.Command, err)
	}
	p.proc = proc
	go func() {
		defer close(p.errDone)
		defer errR.Close()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			p.tail.add(line)
			if stderr != nil {
				fmt.Fprintf(stderr, "[%s] %s\n", cfg.Alias, line)
			}
		}
	}()
	go func() {
		_ = proc.Wait()
		p.state = proc.State()
		if box != nil {
			p.report = box.box.Report()
			box.close()
		}
		select {
		case <-p.inputClosed:
		default:
			p.own = true
		}
		close(p.done)
	}()
	return p, nil
}

// inputCloser is the process's input: closing it is noted, so that an
// exit it causes is not taken for the server's own.
type inputCloser struct {
	io.WriteCloser
	p *process
}

func (c *inputCloser) Close() error {
	c.p.mu.Lock()
	c.p.closeInput.Do(func() { close(c.p.inputClosed) })
	c.p.mu.Unlock()
	return c.WriteCloser.Close()
}

func (c *inputCloser) Write(b []byte) (int, error) {
	n, err := c.WriteCloser.Write(b)
	if err != nil {
		c.p.noteGone()
	}
	return n, err
}

// noteGone notes that the process stopped reading or writing, unless lcp
// closed its input first.
func (p *process) noteGone() {
	p.mu.Lock()
	select {
	case <-p.inputClosed:
	default:
		p.goneFirst = true
	}
	p.mu.Unlock()
}

// noteBadOutput keeps the first error of reading the server's output that
// is not the end of it.
func (p *process) noteBadOutput(err error) {
	if errors.Is(err, io.EOF) {
		p.noteGone()
		return
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
		return
	}
	p.mu.Lock()
	if p.bad == nil {
		p.bad = err
	}
	p.mu.Unlock()
}

// failure returns why a connection to the process failed, if the
// process says so: what it wrote that is not MCP, or its exit when it
// ended by itself (not because lcp closed its input). It waits up to d
// for the process to end.
func (p *process) failure(d time.Duration) error {
	if err := p.setupError(d); err != nil {
		return err
	}
	p.mu.Lock()
	bad, goneFirst := p.bad, p.goneFirst
	p.mu.Unlock()
	if bad != nil {
		select { // what it wrote last, unless a child keeps its stderr open
		case <-p.errDone:
		case <-time.After(100 * time.Millisecond):
		}
		return &BadOutputError{Alias: p.alias, Err: bad, Stderr: p.tail.String()}
	}
	if exit := p.exited(d); exit != nil && (p.own || goneFirst) {
		return exit
	}
	return nil
}

// transport connects the SDK to the process's stdin and stdout, capturing
// the raw tool schemas of tools/list results on the way.
func (p *process) transport(store *schemaStore) sdk.Transport {
	return &capturingTransport{inner: &sdk.IOTransport{Reader: p.stdout, Writer: p.stdin}, store: store, onBad: p.noteBadOutput}
}

// stop ends the process the way MCP asks, with spawn's ladder: close its
// input, wait, then SIGTERM its process group, wait, then SIGKILL.
func (p *process) stop(grace time.Duration) {
	p.proc.Stop(spawn.Ladder{CloseInput: func() { _ = p.stdin.Close() }, InputGrace: grace, TermGrace: 2 * time.Second})
	<-p.done
}

// setupError returns, once the process has ended (waiting up to d), why
// its box could not be set up, if that is why: the server never ran.
func (p *process) setupError(d time.Duration) error {
	if p.box == nil {
		return nil
	}
	select {
	case <-p.done:
	case <-time.After(d):
		return nil
	}
	if p.report != nil && p.report.SetupErr != nil {
		return &BoxError{Alias: p.alias, Err: p.report.SetupErr}
	}
	return nil
}

// exited waits up to d for the process to end and returns why it did, or
// nil if it still runs.
func (p *process) exited(d time.Duration) *ServerExitError {
	select {
	case <-p.done:
	case <-time.After(d):
		return nil
	}
	select { // what it wrote last, unless a child keeps its stderr open
	case <-p.errDone:
	case <-time.After(100 * time.Millisecond):
	}
	e := &ServerExitError{Alias: p.alias, ExitCode: -1, Stderr: p.tail.String(), Boxed: p.box != nil}
	if r := p.report; r != nil && r.Exited {
		// The box's init exits with 128+N for a signal: its report says
		// how the server itself ended.
		e.ExitCode = r.Code
		if r.Signal != "" {
			e.ExitCode, e.Signal = -1, strings.ToLower(strings.TrimPrefix(r.Signal, "SIG"))
			if sig := signalByName(r.Signal); sig != 0 {
				e.Signal = sig.String()
			}
		}
		return e
	}
	if p.state != nil {
		e.ExitCode = p.state.ExitCode()
		if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal().String()
		}
	}
	return e
}

// tailBuffer keeps the last lines written to it, up to max bytes.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	lines []string
	size  int
}

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(line) > t.max {
		line = line[len(line)-t.max:]
	}
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > t.max && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.Join(t.lines, "\n"))
}

// capturingTransport wraps a stdio transport to keep the raw bytes of the
// tool schemas in tools/list results: the SDK decodes them into maps,
// which loses the order of their keys.
type capturingTransport struct {
	inner sdk.Transport
	store *schemaStore
	// onBad, when set, is told of errors reading the messages.
	onBad func(error)
}

func (t *capturingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &capturingConn{Connection: c, store: t.store, onBad: t.onBad}, nil
}

type capturingConn struct {
	sdk.Connection
	store *schemaStore
	onBad func(error)
}

func (c *capturingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil && c.onBad != nil && ctx.Err() == nil {
		c.onBad(err)
	}
	if err == nil {
		switch m := m.(type) {
		case *jsonrpc.Response:
			c.store.captureResult(m.Result)
		case *jsonrpc.Request:
			c.store.captureRequest(m)
		}
	}
	return m, err
}
