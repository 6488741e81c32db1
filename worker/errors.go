package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"
)

var (
	// ErrTimeout matches every *TimeoutError.
	ErrTimeout = errors.New("worker: call timed out")
	// ErrCancelled is returned when the caller's context was cancelled
	// during a call; the error also matches the context's error.
	ErrCancelled = errors.New("worker: call cancelled")
	// ErrClosed is returned by calls on a closed pool, and by calls in
	// flight when it closes.
	ErrClosed = errors.New("worker: pool closed")
	// ErrInvalidRequest is returned for a Request the pool cannot send
	// (relative workspace, no library path, arguments that are not JSON).
	ErrInvalidRequest = errors.New("worker: invalid request")
)

// TimeoutError reports a call that exceeded its time limit (Request.Timeout,
// or the deadline of its context).
type TimeoutError struct {
	// Function is the called function.
	Function string
	// Timeout is the limit; 0 when the context's deadline expired.
	Timeout time.Duration
	// Killed is set when the tool did not stop within Options.CancelGrace
	// and its worker was killed (the library's state was lost).
	Killed bool
}

// Error says which call timed out and whether its worker was killed.
func (e *TimeoutError) Error() string {
	s := fmt.Sprintf("worker: call of %s timed out", e.Function)
	if e.Timeout > 0 {
		s += " after " + e.Timeout.String()
	}
	if e.Killed {
		s += "; the worker was killed because the tool did not stop"
	}
	return s
}

// Is makes errors.Is(err, ErrTimeout) and context.DeadlineExceeded match.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// CrashCause classifies why a worker died.
type CrashCause int

const (
	// CauseExit: the worker process exited on its own (os._exit, a fatal
	// error inside the worker).
	CauseExit CrashCause = iota + 1
	// CauseSignal: the worker was killed by a signal (segmentation fault,
	// abort, a SIGKILL from outside lcp...).
	CauseSignal
	// CauseOOM: the worker was killed by SIGKILL that the engine did not
	// send while the kernel counted an out-of-memory kill (in the worker's
	// cgroup's memory.events or /proc/vmstat).
	CauseOOM
	// CauseMemoryLimit: the worker died after exceeding Options.MemoryLimit.
	CauseMemoryLimit
	// CauseKilled: the engine killed the worker (a call did not stop after
	// its timeout or cancellation).
	CauseKilled
	// CauseProtocol: the worker broke the protocol and was killed.
	CauseProtocol
)

// CrashError reports a worker that died while calls were in flight on it.
// The next call starts a fresh worker (Reply.StateReset).
type CrashError struct {
	// Library is the library path and Workspace the worker's workspace.
	Library, Workspace string
	// PID is the worker's process id.
	PID int
	// Cause classifies the death.
	Cause CrashCause
	// ExitCode is the exit status, or -1 when a signal killed the worker.
	ExitCode int
	// Signal is the killing signal, or 0.
	Signal syscall.Signal
	// Reason says what happened, in words.
	Reason string
	// Stderr holds the last lines the worker wrote to its stderr.
	Stderr []string
}

// Error says why the worker died, with its most telling stderr line.
func (e *CrashError) Error() string {
	s := "worker: the python worker died: " + e.Reason
	if line := e.stderrSummary(); line != "" {
		s += " (stderr: " + line + ")"
	}
	return s
}

// stderrSummary picks the most telling stderr line: Python's fatal error
// report if there is one, else the last non-empty line.
func (e *CrashError) stderrSummary() string {
	last := ""
	for _, l := range e.Stderr {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "Fatal Python error") {
			return l
		}
		if l != "" {
			last = l
		}
	}
	return last
}

// InterpreterError reports a Python interpreter that is missing, cannot run
// or is older than 3.9. Python tools stay listed; only calls fail.
type InterpreterError struct {
	// Python is the configured or looked-up interpreter.
	Python string
	// Version is the interpreter's version when it ran but is too old.
	Version string
	// Err is the underlying error, if any.
	Err error
}

// Error says what is wrong with the interpreter and what is required.
func (e *InterpreterError) Error() string {
	switch {
	case e.Version != "":
		return fmt.Sprintf("worker: python interpreter %q is version %s; Python 3.9 or newer is required", e.Python, e.Version)
	case e.Err != nil:
		return fmt.Sprintf("worker: python interpreter %q cannot be run (install Python 3.9 or newer, or configure the interpreter): %v", e.Python, e.Err)
	default:
		return fmt.Sprintf("worker: python interpreter %q cannot be run", e.Python)
	}
}

// Unwrap returns the underlying error.
func (e *InterpreterError) Unwrap() error { return e.Err }

// StartError reports a worker that ended before its start-up handshake
// was done for a reason that is not its interpreter's: a signal from
// outside (SIGKILL, the out-of-memory killer), the engine's kill of a
// start that was stopped (SIGSTOP, a debugger) or took longer than
// Options.StartTimeout, or the pool's own stop of it (a library released
// or reloaded, the pool closed; then it matches ErrClosed). A worker whose
// interpreter exits on its own is an *InterpreterError. The next call
// starts another worker.
type StartError struct {
	// Library is the library path and Python the interpreter.
	Library, Python string
	// Cause classifies the end: CauseSignal, CauseOOM, or CauseKilled when
	// the engine ended it.
	Cause CrashCause
	// Signal is the signal that ended it, or 0.
	Signal syscall.Signal
	// Reason says what happened, in words.
	Reason string
	// Stderr holds the last lines the worker wrote to its stderr.
	Stderr []string
	// Err is ErrClosed when the pool stopped the worker, else nil.
	Err error
}

// Error says that the worker did not start, and why.
func (e *StartError) Error() string {
	s := "worker: the python worker did not start: " + e.Reason
	if line := (&CrashError{Stderr: e.Stderr}).stderrSummary(); line != "" {
		s += " (stderr: " + line + ")"
	}
	return s
}

// Unwrap returns ErrClosed for a worker the pool stopped, else nil.
func (e *StartError) Unwrap() error { return e.Err }

// ProtocolError reports a worker that broke the protocol, or an internal
// failure of the worker program for one call.
type ProtocolError struct {
	// Msg says what went wrong.
	Msg string
	// Err is the underlying error, if any.
	Err error
}

// Error describes the violation.
func (e *ProtocolError) Error() string {
	if e.Err != nil {
		return "worker: protocol error: " + e.Msg + ": " + e.Err.Error()
	}
	return "worker: protocol error: " + e.Msg
}

// Unwrap returns the underlying error.
func (e *ProtocolError) Unwrap() error { return e.Err }

// ResultTooLargeError reports a return value above Options.MaxResultBytes.
type ResultTooLargeError struct {
	// Size is the JSON size of the value and Limit the cap, in bytes.
	Size, Limit int64
}

// Error gives the size and the limit.
func (e *ResultTooLargeError) Error() string {
	return fmt.Sprintf("worker: the tool's return value is %d bytes of JSON, over the limit of %d bytes", e.Size, e.Limit)
}
