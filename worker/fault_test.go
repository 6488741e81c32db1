package worker

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const faultLib = `
import os, sys, time, ctypes, re, subprocess, json

STATE = {"n": 0}

def tool_inc():
    STATE["n"] += 1
    return STATE["n"]

def tool_raise():
    raise ValueError("boom")

def tool_exit():
    sys.exit(5)

def tool_kbint():
    raise KeyboardInterrupt("stop")

def tool_interrupt_main():
    import _thread
    _thread.interrupt_main()
    time.sleep(0.1)
    return "main interrupted"

def tool_os_exit():
    os._exit(3)

def tool_segv():
    ctypes.string_at(0)

def tool_loop():
    while True:
        pass

def tool_sleep():
    time.sleep(3600)

def tool_gil_hog():
    # Catastrophic backtracking: C code that holds the GIL for ages.
    return bool(re.match(r"(a+)+$", "a" * 64 + "b"))

def tool_catch_all():
    while True:
        try:
            while True:
                pass
        except BaseException:
            pass

def tool_alloc():
    hog = []
    while True:
        hog.append(bytearray(32 * 1024 * 1024))

def tool_print_100mb():
    line = "x" * (1024 * 1024)
    for _ in range(100):
        print(line)
    return "printed"

def tool_fd_100mb():
    chunk = b"y" * (1024 * 1024 - 1) + b"\n"
    for _ in range(100):
        os.write(1, chunk)
    return "written"

def tool_close_fds():
    os.close(1)
    os.close(2)
    print("still captured")
    return "closed"

def tool_print_after():
    print("after repair")
    os.write(1, b"fd1 works\n")
    return "ok"

def tool_fork_child():
    p = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    q = subprocess.Popen(["sleep", "1001"])
    return [p.pid, q.pid]

def _square(x):
    print("child computes", x)
    return x * x

def tool_multiprocessing():
    import multiprocessing
    with multiprocessing.get_context("fork").Pool(2) as pool:
        return pool.map(_square, [1, 2, 3])

def tool_big_string():
    return "z" * (50 * 1024 * 1024)

def tool_break_worker():
    # Sabotage the worker itself: it fails on its next call.
    import threading
    threading.current_thread = None
    return "sabotaged"
`

// faultWant is what a fault case expects.
type faultWant struct {
	value      string // expected JSON value
	exception  string // expected exception type
	crash      CrashCause
	exitCode   int
	signal     syscall.Signal
	timeout    bool
	killed     bool
	cancelled  bool
	stateReset bool // the next call reports a reset and starts from 1
}

func TestFaults(t *testing.T) {
	requirePython(t)
	t.Parallel()
	cases := []struct {
		name    string
		fn      string
		timeout time.Duration
		cancel  time.Duration
		want    faultWant
	}{
		{name: "raise", fn: "tool_raise", want: faultWant{exception: "ValueError"}},
		{name: "sys.exit", fn: "tool_exit", want: faultWant{exception: "SystemExit"}},
		{name: "KeyboardInterrupt", fn: "tool_kbint", want: faultWant{exception: "KeyboardInterrupt"}},
		{name: "interrupt main thread", fn: "tool_interrupt_main", want: faultWant{value: `"main interrupted"`}},
		{name: "os._exit", fn: "tool_os_exit", want: faultWant{crash: CauseExit, exitCode: 3, stateReset: true}},
		{name: "segfault", fn: "tool_segv", want: faultWant{crash: CauseSignal, exitCode: -1, signal: syscall.SIGSEGV, stateReset: true}},
		{name: "loop timeout", fn: "tool_loop", timeout: 300 * time.Millisecond, want: faultWant{timeout: true}},
		{name: "loop cancel", fn: "tool_loop", cancel: 300 * time.Millisecond, want: faultWant{cancelled: true}},
		{name: "sleep timeout", fn: "tool_sleep", timeout: 300 * time.Millisecond, want: faultWant{timeout: true, killed: true, stateReset: true}},
		{name: "gil hog timeout", fn: "tool_gil_hog", timeout: 300 * time.Millisecond, want: faultWant{timeout: true, killed: true, stateReset: true}},
		{name: "catch-all timeout", fn: "tool_catch_all", timeout: 300 * time.Millisecond, want: faultWant{timeout: true, killed: true, stateReset: true}},
		{name: "print 100MB", fn: "tool_print_100mb", want: faultWant{value: `"printed"`}},
		{name: "fd write 100MB", fn: "tool_fd_100mb", want: faultWant{value: `"written"`}},
		{name: "close fd 1 and 2", fn: "tool_close_fds", want: faultWant{value: `"closed"`}},
		{name: "fork child", fn: "tool_fork_child"},
		{name: "multiprocessing", fn: "tool_multiprocessing", want: faultWant{value: `[1,4,9]`}},
		{name: "50MB string", fn: "tool_big_string"},
		{name: "worker sabotage", fn: "tool_break_worker", want: faultWant{value: `"sabotaged"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFaultRun(t)
			start := time.Now()
			r, err := f.call(tc.fn, tc.timeout, tc.cancel)
			checkFaultOutcome(t, tc.want, r, err, time.Since(start))
			reset, closed := f.followUp(t, tc.fn, r)
			if !closed {
				f.checkState(t, tc.want.stateReset || reset)
			}
		})
	}
}

// faultRun is a pool with one warm call of faultLib, counting its output.
type faultRun struct {
	p                 *Pool
	tag               string
	lib               Library
	ws                string
	outBytes, dropped atomic.Int64
}

func newFaultRun(t *testing.T) *faultRun {
	f := &faultRun{}
	f.p, f.tag = testPool(t, &Options{CancelGrace: 300 * time.Millisecond, OnOutput: func(o Output) {
		f.outBytes.Add(int64(len(o.Data)))
		f.dropped.Add(o.Dropped)
	}})
	f.lib = writeLib(t, "faults", faultLib)
	f.ws = t.TempDir()
	wantValue(t, mustCall(t, f.p, f.ws, f.lib, "tool_inc", "{}"), "1")
	return f
}

// call calls fn with a time limit, cancelling its context after cancel.
func (f *faultRun) call(fn string, timeout, cancel time.Duration) (*Reply, error) {
	ctx := context.Background()
	if cancel > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithCancel(ctx)
		time.AfterFunc(cancel, stop)
	}
	return f.p.Call(ctx, &Request{CallID: "fault", Workspace: f.ws, Library: f.lib, Function: fn, Timeout: timeout}, nil)
}

func checkFaultOutcome(t *testing.T, w faultWant, r *Reply, err error, elapsed time.Duration) {
	t.Helper()
	switch {
	case w.timeout:
		var te *TimeoutError
		if !errors.As(err, &te) || !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want a timeout", err)
		}
		if te.Killed != w.killed {
			t.Errorf("Killed = %v, want %v", te.Killed, w.killed)
		}
		if elapsed > 30*time.Second {
			t.Errorf("the timed-out call took %v", elapsed)
		}
	case w.cancelled:
		if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want a cancellation", err)
		}
	case w.crash != 0:
		var ce *CrashError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want a crash", err)
		}
		if ce.Cause != w.crash || ce.ExitCode != w.exitCode || ce.Signal != w.signal {
			t.Errorf("crash = cause %d exit %d signal %v (%s), want cause %d exit %d signal %v",
				ce.Cause, ce.ExitCode, ce.Signal, ce.Reason, w.crash, w.exitCode, w.signal)
		}
		if w.signal == syscall.SIGSEGV && !strings.Contains(strings.Join(ce.Stderr, "\n"), "Segmentation fault") {
			t.Errorf("stderr tail lacks the fault report: %q", ce.Stderr)
		}
	case err != nil:
		t.Fatalf("err = %v", err)
	case w.exception != "":
		if r.Exception == nil || r.Exception.Type != w.exception || r.Exception.Traceback == "" {
			t.Fatalf("exception = %+v, want %s with a traceback", r.Exception, w.exception)
		}
	case w.value != "":
		wantValue(t, r, w.value)
	}
}

// followUp makes the checks particular to fn; it reports whether the
// worker was lost meanwhile, and whether the pool was closed.
func (f *faultRun) followUp(t *testing.T, fn string, r *Reply) (reset, closed bool) {
	t.Helper()
	switch fn {
	case "tool_print_100mb":
		if got, d := f.outBytes.Load(), f.dropped.Load(); got > 2<<20 || d < 90<<20 {
			t.Errorf("captured %d bytes, dropped %d: want about 1 MiB kept and the rest counted", got, d)
		}
	case "tool_fd_100mb":
		deadline := time.Now().Add(hangAfter)
		for f.outBytes.Load() < 100<<20 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := f.outBytes.Load(); got < 100<<20 {
			t.Errorf("drained %d bytes of fd output, want 100 MiB", got)
		}
	case "tool_close_fds":
		f.outBytes.Store(0)
		wantValue(t, mustCall(t, f.p, f.ws, f.lib, "tool_print_after", "{}"), `"ok"`)
	case "tool_big_string":
		if len(r.Value) != 50<<20+2 {
			t.Errorf("value of %d bytes, want %d", len(r.Value), 50<<20+2)
		}
	case "tool_fork_child":
		checkForkedChildren(t, f.p, r, f.tag)
		return false, true
	case "tool_break_worker":
		_, err := f.p.Call(context.Background(), &Request{Workspace: f.ws, Library: f.lib, Function: "tool_inc"}, nil)
		var ce *CrashError
		if !errors.As(err, &ce) || ce.Cause != CauseExit || !strings.Contains(ce.Reason, "internally") {
			t.Fatalf("call after sabotage: err = %v, want an internal crash", err)
		}
		return true, false
	}
	return false, false
}

// checkState checks that the pool is still up, and that the library's
// state survived unless the worker died.
func (f *faultRun) checkState(t *testing.T, reset bool) {
	t.Helper()
	next := mustCall(t, f.p, f.ws, f.lib, "tool_inc", "{}")
	if reset {
		wantValue(t, next, "1")
		if !next.StateReset {
			t.Error("the call after the crash does not report a state reset")
		}
	} else {
		wantValue(t, next, "2")
		if next.StateReset {
			t.Error("unexpected state reset")
		}
	}
	if again := mustCall(t, f.p, f.ws, f.lib, "tool_inc", "{}"); again.StateReset {
		t.Error("state reset reported twice")
	}
}

// checkForkedChildren asserts that children a tool started outlive the call
// but not the pool. It closes the pool.
func checkForkedChildren(t *testing.T, p *Pool, r *Reply, tag string) {
	t.Helper()
	var pids []int
	for _, s := range strings.Split(strings.Trim(string(r.Value), "[]"), ",") {
		pid, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("value %s", r.Value)
		}
		pids = append(pids, pid)
	}
	for _, pid := range pids {
		if signalZero(pid) != nil {
			t.Errorf("child %d died with the call", pid)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	waitNoTagged(t, tag, hangAfter)
	for _, pid := range pids {
		if signalZero(pid) == nil {
			t.Errorf("child %d survived the pool", pid)
		}
	}
}

func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	p, _ := testPool(t, &Options{MemoryLimit: 512 << 20})
	lib := writeLib(t, "faults", faultLib)
	ws := t.TempDir()
	wantValue(t, mustCall(t, p, ws, lib, "tool_inc", "{}"), "1")
	r, err := p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_alloc"}, nil)
	var ce *CrashError
	switch {
	case errors.As(err, &ce):
		if ce.Cause != CauseMemoryLimit {
			t.Errorf("crash cause %d (%s), want the memory limit", ce.Cause, ce.Reason)
		}
	case err != nil:
		t.Fatalf("err = %v", err)
	case r.Exception == nil || r.Exception.Type != "MemoryError":
		t.Fatalf("reply %+v, want a MemoryError", r)
	}
	next := mustCall(t, p, ws, lib, "tool_inc", "{}")
	if ce == nil {
		wantValue(t, next, "2")
	} else {
		wantValue(t, next, "1")
	}
}

func TestResultTooLarge(t *testing.T) {
	t.Parallel()
	p, _ := testPool(t, &Options{MaxResultBytes: 10 << 20})
	lib := writeLib(t, "faults", faultLib)
	ws := t.TempDir()
	_, err := p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_big_string"}, nil)
	var tl *ResultTooLargeError
	if !errors.As(err, &tl) || tl.Size != 50<<20+2 || tl.Limit != 10<<20 {
		t.Fatalf("err = %v, want a *ResultTooLargeError of %d bytes", err, 50<<20+2)
	}
	wantValue(t, mustCall(t, p, ws, lib, "tool_inc", "{}"), "1")
}

func TestCloseStopsBusyWorkers(t *testing.T) {
	t.Parallel()
	p, tag := testPool(t, nil)
	lib := writeLib(t, "faults", faultLib)
	ws := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for _, fn := range []string{"tool_loop", "tool_sleep", "tool_gil_hog"} {
		wg.Go(func() {
			_, err := p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: fn}, nil)
			errs <- err
		})
	}
	for len(taggedPids(tag)) < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Close took %v", d)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("call in flight got %v, want ErrClosed", err)
		}
	}
	if _, err := p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_inc"}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
	waitNoTagged(t, tag, hangAfter)
}

var _ = os.Getpid

// With ReturnOnCancel, a cancelled call returns at once and is stopped in
// the background as it would be otherwise: a tool that stops keeps its
// worker (and the library's state), one that does not loses its worker
// after the grace, and the next call reports the reset.
func TestReturnOnCancel(t *testing.T) {
	requirePython(t)
	t.Parallel()
	for _, tc := range []struct {
		fn     string
		killed bool
	}{{"tool_loop", false}, {"tool_sleep", true}} {
		t.Run(tc.fn, func(t *testing.T) {
			t.Parallel()
			f := newFaultRun(t)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			_, err := f.p.Call(ctx, &Request{CallID: "c", Workspace: f.ws, Library: f.lib, Function: tc.fn, ReturnOnCancel: true}, nil)
			if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want a cancellation", err)
			}
			if strings.Contains(err.Error(), "killed") {
				t.Fatalf("err = %v: the call waited for its stop", err)
			}
			if tc.killed {
				// The next call waits for the kill (its worker is doomed) or
				// runs beside the stopping call and the one after it sees the
				// reset.
				waitDoomed(t, f)
			}
			f.checkState(t, tc.killed)
		})
	}
}

// waitDoomed waits until the pool has killed the worker of f's library.
func waitDoomed(t *testing.T, f *faultRun) {
	t.Helper()
	deadline := time.Now().Add(hangAfter)
	for time.Now().Before(deadline) {
		dead := true
		for _, pr := range f.p.liveProcs(nil) {
			if !pr.doomed.Load() && !pr.isDead() {
				dead = false
			}
		}
		if dead {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the worker of the call that did not stop was not killed")
}

// signalZero sends the null signal to pid: nil when the process exists.
func signalZero(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Signal(syscall.Signal(0))
}
