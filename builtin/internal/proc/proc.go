// Package proc runs one child process for the built-in tools: in a given
// directory, with a time limit that stops the whole process group
// (package spawn's ladder: SIGTERM, a second, SIGKILL), and with
// stdout and stderr captured separately under a size cap that keeps the head
// and the tail of each stream.
//
// It is shared by the shell and Python tools of package builtin; it knows
// nothing about tools or results.
//
//	out, err := proc.Run(ctx, proc.Spec{Path: "/bin/sh", Args: []string{"-c", "ls"}, Dir: ws, Timeout: 30 * time.Second})
//	if err != nil { ... }           // could not start
//	fmt.Println(out.ExitCode, out.Stdout.Text)
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/lcptools/lcp/internal/spawn"
)

// DefaultMaxOutput is the number of bytes kept per stream when Spec.MaxOutput
// is zero.
const DefaultMaxOutput = 64 << 10

// termGrace is how long a command that timed out or was cancelled has
// between SIGTERM and SIGKILL.
const termGrace = time.Second

// waitDelay bounds how long Run waits for the output pipes once the main
// process has exited or been killed: a background job that keeps a pipe open
// must not hold the call hostage.
const waitDelay = time.Second

// ErrNotFound is returned (wrapped) when the program to run does not exist.
var ErrNotFound = errors.New("program not found")

// Spec describes one process to run.
type Spec struct {
	Path    string    // program; looked up in PATH when it has no slash
	Args    []string  // arguments after the program name
	Dir     string    // working directory
	Env     []string  // environment; nil means the current process's
	Stdin   io.Reader // nil means an empty stdin
	Timeout time.Duration
	// MaxOutput is the number of bytes kept per stream: the first half and
	// the last half of what the process wrote. Zero means DefaultMaxOutput.
	MaxOutput int
	// Wrap, when set, may rewrite the command right before it starts (to
	// run it in a sandbox). An error means nothing runs.
	Wrap func(cmd *exec.Cmd) (Wrapped, error)
}

// Wrapped is what a Spec.Wrap hook returns; every field is optional.
type Wrapped struct {
	// Started is called once the command has started or failed to.
	Started func()
	// Ended is closed when the wrapper knows the command ended, which may
	// be before the process Run started exits (a sandbox's init tearing
	// its namespaces down); Exit then tells how the command ended, ok
	// false when it does not know (Run then waits for the process).
	Ended <-chan struct{}
	Exit  func() (code int, signal string, ok bool)
}

// Capture is what was kept of one output stream.
type Capture struct {
	Text  string // valid UTF-8; a note marks where bytes were cut
	Total int64  // bytes the process wrote
	Cut   int64  // bytes left out of Text
}

// Outcome is how a process ended.
type Outcome struct {
	Stdout, Stderr Capture
	// ExitCode is the process's exit status, or 128+N when signal N
	// killed it (the shell's convention).
	ExitCode int
	Signal   string // the signal that killed the process, if any
	TimedOut bool   // killed because Timeout passed
	Canceled bool   // killed because the context was done
	Duration time.Duration
}

// Run starts the process, waits for it and returns its outcome. The error is
// non-nil only when the process could not be started; a process that fails,
// times out or is cancelled still yields an Outcome.
func Run(ctx context.Context, s Spec) (*Outcome, error) {
	max := s.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	runCtx := ctx
	var cancel context.CancelFunc
	if s.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, s.Timeout)
	} else {
		runCtx, cancel = context.WithCancel(ctx)
	}
	defer cancel()

	cmd := exec.Command(s.Path, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.Stdin = s.Stdin
	// Run reads the output pipes itself: a wrapper may say the command
	// ended before the process it started exits.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Path, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("start %s: %w", s.Path, err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	// A stdin given as a reader is copied by exec; the copy must not hold
	// Wait once the process is gone.
	cmd.WaitDelay = waitDelay

	var w Wrapped
	if s.Wrap != nil {
		if w, err = s.Wrap(cmd); err != nil {
			closeAll(outR, outW, errR, errW)
			return nil, fmt.Errorf("prepare %s: %w", s.Path, err)
		}
	}
	start := time.Now()
	p, err := spawn.Start(cmd, nil)
	if w.Started != nil {
		w.Started()
	}
	closeAll(outW, errW)
	if err != nil {
		closeAll(outR, errR)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, syscall.ENOENT) {
			return nil, fmt.Errorf("start %s: %w: %w", s.Path, ErrNotFound, err)
		}
		return nil, fmt.Errorf("start %s: %w", s.Path, err)
	}
	// The time limit or the cancellation stops the whole process group:
	// SIGTERM, then SIGKILL.
	var stopped atomic.Bool
	unstop := context.AfterFunc(runCtx, func() {
		stopped.Store(true)
		p.Stop(spawn.Ladder{TermGrace: termGrace})
	})
	defer unstop()
	stdout, stderr := newCapWriter(max), newCapWriter(max)
	copied := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { _, _ = io.Copy(stdout, outR); wg.Done() }()
		go func() { _, _ = io.Copy(stderr, errR); wg.Done() }()
		wg.Wait()
		close(copied)
	}()

	code, sig, early := 0, "", false
	select {
	case <-p.Done():
	case <-w.Ended:
		code, sig, early = w.Exit()
		if !early {
			<-p.Done()
		}
	}
	// A background job that keeps a pipe open must not hold the call
	// hostage.
	select {
	case <-copied:
	case <-time.After(waitDelay):
		closeAll(outR, errR)
		<-copied
	}
	closeAll(outR, errR)
	// Whatever the main process left running in its group (background jobs,
	// daemons it forked) ends with the call.
	p.Kill()
	out := &Outcome{
		Stdout:   stdout.capture(),
		Stderr:   stderr.capture(),
		Duration: time.Since(start),
	}
	if early {
		out.ExitCode, out.Signal = code, sig
		go func() { _ = p.Wait() }() // the process finishes exiting on its own
	} else {
		out.ExitCode, out.Signal = exitStatus(p.State())
	}
	if stopped.Load() {
		if ctx.Err() != nil {
			out.Canceled = true
		} else {
			out.TimedOut = true
		}
	}
	return out, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// capWriter keeps the first head bytes and the last tail bytes written.
type capWriter struct {
	headMax, tailMax int
	head             []byte
	tail             []byte // the last bytes; may hold up to 2*tailMax before compaction
	total            int64
}

func newCapWriter(max int) *capWriter {
	h := max / 2
	return &capWriter{headMax: h, tailMax: max - h}
}

func (w *capWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.total += int64(n)
	if room := w.headMax - len(w.head); room > 0 {
		k := min(room, len(p))
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= w.tailMax {
		w.tail = append(w.tail[:0], p[len(p)-w.tailMax:]...)
		return n, nil
	}
	w.tail = append(w.tail, p...)
	if len(w.tail) > 2*w.tailMax {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-w.tailMax:]...)
	}
	return n, nil
}

func (w *capWriter) capture() Capture {
	tail := w.tail
	if len(tail) > w.tailMax {
		tail = tail[len(tail)-w.tailMax:]
	}
	kept := int64(len(w.head) + len(tail))
	if kept == w.total {
		s := string(w.head) + string(tail)
		return Capture{Text: strings.ToValidUTF8(s, "\uFFFD"), Total: w.total}
	}
	head := trimPartialRuneEnd(w.head)
	tail = trimPartialRuneStart(tail)
	cut := w.total - int64(len(head)+len(tail))
	var b strings.Builder
	b.Write(head)
	fmt.Fprintf(&b, "\n[... %d bytes cut ...]\n", cut)
	b.Write(tail)
	return Capture{Text: strings.ToValidUTF8(b.String(), "\uFFFD"), Total: w.total, Cut: cut}
}

// trimPartialRuneEnd drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRuneEnd(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// trimPartialRuneStart drops continuation bytes at the start of b.
func trimPartialRuneStart(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}

// String describes the outcome in one line, for errors shown to the LLM.
func (o *Outcome) String() string {
	switch {
	case o.TimedOut:
		return "timed out; the process group was killed"
	case o.Canceled:
		return "cancelled; the process group was killed"
	case o.Signal != "":
		return fmt.Sprintf("killed by signal %s", o.Signal)
	default:
		return fmt.Sprintf("exited with code %d", o.ExitCode)
	}
}
