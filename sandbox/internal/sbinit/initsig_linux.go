package sbinit

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// forwarded are the signals the init passes on to the command's process
// group: the ones a host sends to stop or poke a run.
var forwarded = map[syscall.Signal]bool{
	unix.SIGTERM: true, unix.SIGINT: true, unix.SIGHUP: true,
	unix.SIGQUIT: true, unix.SIGUSR1: true, unix.SIGUSR2: true,
}

// catchSignals makes every signal that can be caught reach the init as a
// value on the returned channel, so that none can kill it or make the Go
// runtime print a crash dump: a tool may send any signal to PID 1 (kill
// -SEGV 1), and a SIGSEGV, SIGBUS, SIGABRT... sent with kill would
// otherwise end the init with a stack trace the model reads.
//
// SIGURG and SIGCHLD are left at their default (ignore): the Go runtime
// sends itself SIGURG to preempt goroutines, many times a second on a busy
// machine, and each child's exit raises SIGCHLD. Caught, they filled the
// channel, and a SIGTERM that came while it was full was dropped.
func catchSignals() chan os.Signal {
	sigs := make(chan os.Signal, 64)
	for n := 1; n < 65; n++ {
		switch s := syscall.Signal(n); s {
		case unix.SIGKILL, unix.SIGSTOP, unix.SIGURG, unix.SIGCHLD:
		default:
			signal.Notify(sigs, s)
		}
	}
	return sigs
}

// forwardSignals passes the forwarded signals on to the process group pgid
// and drops every other one.
func forwardSignals(sigs chan os.Signal, pgid int) {
	for sig := range sigs {
		if s, ok := sig.(syscall.Signal); ok && forwarded[s] {
			_ = unix.Kill(-pgid, s)
		}
	}
}

// quietFailure makes an internal failure of the init one line on its
// standard error and a set-up error for lcp, never a Go crash dump: it
// recovers a panic of the calling goroutine into *code (the init starts
// with GOTRACEBACK=none, which turns off the tracebacks of any other).
func quietFailure(s **initState, code *int) {
	if r := recover(); r != nil {
		err := fmt.Errorf("internal error: %v", r)
		if *s != nil {
			*code = (*s).fail("init", err)
			return
		}
		fmt.Fprintf(os.Stderr, "lcp sandbox: %v\n", err)
		*code = 126
	}
}
