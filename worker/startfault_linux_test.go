package worker

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestStartSignalled: a worker stopped or killed while it starts, by a
// real signal to its real process, fails the call with a *StartError that
// says what happened (not a missing interpreter), and the next call
// starts a worker that works.
func TestStartSignalled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sig   syscall.Signal
		opts  Options
		limit time.Duration // the start limit, set once the interpreter is known
		cause CrashCause
		want  []string
	}{
		{name: "killed", sig: syscall.SIGKILL, cause: CauseSignal,
			want: []string{"did not start", "killed by signal KILL during its start-up"}},
		{name: "terminated", sig: syscall.SIGTERM, cause: CauseSignal,
			want: []string{"killed by signal 15 (terminated) during its start-up"}},
		{name: "stopped", sig: syscall.SIGSTOP, opts: Options{StoppedLimit: 200 * time.Millisecond}, cause: CauseKilled,
			want: []string{"stopped (SIGSTOP, or a debugger) during its start-up for over 200ms"}},
		{name: "stopped past the start limit", sig: syscall.SIGSTOP, opts: Options{StoppedLimit: -1}, limit: 500 * time.Millisecond, cause: CauseKilled,
			want: []string{"stopped (SIGSTOP, or a debugger) during its start-up and did not start within 500ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lib := writeLib(t, "starting", "def tool_ok():\n    return 'ok'\n")
			var armed atomic.Bool
			armed.Store(true)
			var p *Pool
			o := tc.opts
			o.Wrap = func(cmd *exec.Cmd, _ Library, _ string, _ func() []context.Context) (Wrapped, error) {
				return Wrapped{Started: func() {
					if cmd.Process == nil || !armed.CompareAndSwap(true, false) {
						return
					}
					if err := cmd.Process.Signal(tc.sig); err != nil {
						t.Errorf("signal: %v", err)
					}
				}}, nil
			}
			p, _ = testPool(t, &o)
			ws := t.TempDir()
			if tc.limit > 0 {
				// The interpreter's probe has the start limit too: run it
				// first, with the suite's.
				if _, _, err := p.interpreter(); err != nil {
					t.Fatal(err)
				}
				p.opts.StartTimeout = tc.limit
			}
			// A hang detector only: each case ends in well under a second.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_, err := p.Call(ctx, &Request{CallID: "first", Workspace: ws, Library: lib, Function: "tool_ok"}, nil)
			var se *StartError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *StartError", err)
			}
			if errors.As(err, new(*InterpreterError)) {
				t.Errorf("%v: reported as an interpreter that cannot run", err)
			}
			if se.Cause != tc.cause {
				t.Errorf("cause %v, want %v (%v)", se.Cause, tc.cause, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			p.opts.StartTimeout = hangAfter // the next start is a real one
			if got := string(mustCall(t, p, ws, lib, "tool_ok", "{}").Value); got != `"ok"` {
				t.Errorf("the next call got %s", got)
			}
		})
	}
}

// TestStartReleased: a library released (its file changed) while its
// worker is still starting stops that worker; the call waiting for it
// never ran, and goes to the library's next worker. Closing the pool
// during a start fails the call with ErrClosed, in a *StartError that
// says so.
func TestStartReleased(t *testing.T) {
	for _, closing := range []bool{false, true} {
		lib := writeLib(t, "starting", "def tool_ok():\n    return 'ok'\n")
		var armed atomic.Bool
		armed.Store(true)
		p, _ := testPool(t, &Options{StoppedLimit: -1, Wrap: func(cmd *exec.Cmd, _ Library, _ string, _ func() []context.Context) (Wrapped, error) {
			return Wrapped{Started: func() {
				if cmd.Process != nil && armed.CompareAndSwap(true, false) {
					_ = cmd.Process.Signal(syscall.SIGSTOP)
				}
			}}, nil
		}})
		// A hang detector only.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		go func() {
			// Once the stopped worker is the pool's.
			for len(p.liveProcs(nil)) == 0 && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
			}
			if closing {
				p.Close()
			} else {
				p.Release(lib)
			}
		}()
		r, err := p.Call(ctx, &Request{CallID: "first", Workspace: t.TempDir(), Library: lib, Function: "tool_ok"}, nil)
		switch {
		case closing:
			var se *StartError
			if !errors.Is(err, ErrClosed) || errors.As(err, &se) && !strings.Contains(se.Reason, "the pool stopped it during its start-up") {
				t.Errorf("closed during the start: got %v, want ErrClosed", err)
			}
		case err != nil:
			t.Errorf("released during the start: %v", err)
		case string(r.Value) != `"ok"`:
			t.Errorf("released during the start: got %s", r.Value)
		}
	}
}
