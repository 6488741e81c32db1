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

// caught are the signals the init catches (catchSignals): those the Go
// runtime would otherwise act on when a process sends them — exit
// (SIGHUP, SIGINT, SIGTERM), print a crash dump and exit (SIGQUIT,
// SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSTKFLT, SIGSYS),
// or leave at the system's default, which stops the init (SIGTSTP,
// SIGTTIN, SIGTTOU; and SIGCONT with them) — the forwarded ones, and
// SIGPIPE (caught, a write to a closed standard error fails with EPIPE
// instead of ending the init). Every other signal (SIGALRM, SIGXCPU,
// SIGWINCH, the real-time signals...) the runtime catches itself from its
// start and drops, exactly as forwardSignals would.
var caught = []os.Signal{
	unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGILL, unix.SIGTRAP,
	unix.SIGABRT, unix.SIGBUS, unix.SIGFPE, unix.SIGUSR1, unix.SIGSEGV,
	unix.SIGUSR2, unix.SIGPIPE, unix.SIGTERM, unix.SIGSTKFLT, unix.SIGCONT,
	unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU, unix.SIGSYS,
}

// catchSignals makes every signal that could kill the init, stop it or
// make the Go runtime print a crash dump reach it as a value on the
// returned channel instead: a tool may send any signal to PID 1 (kill
// -SEGV 1), and a SIGSEGV, SIGBUS, SIGABRT... sent with kill would
// otherwise end the init with a stack trace the model reads.
//
// It names only the signals of caught, not every signal: each one the
// runtime marks for notification costs a round trip with the runtime's
// signal-mask thread (two thread switches), 35-80 µs at a load of 12-40
// on two cores, and the 52 of all signals took 2-4 ms of every
// sandboxed command's start; the 12 of these that need one take a
// quarter of it. SIGURG and SIGCHLD stay at the runtime's handling
// (ignored): the runtime sends itself SIGURG to preempt goroutines, and
// each child's exit raises SIGCHLD; caught, they filled the channel, and
// a SIGTERM that came while it was full was dropped.
func catchSignals() chan os.Signal {
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, caught...)
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
