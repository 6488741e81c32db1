// Package spawn is lcp's one way to run a child process: in a process
// group of its own, killed by the kernel when lcp dies (Linux's
// parent-death signal), waited for by one goroutine, and stopped by one
// ladder — close its input, wait, SIGTERM its group, wait, SIGKILL — with
// what it left behind in its group ended once it has exited. The Python
// workers, the stdio MCP servers and the built-in commands all start
// their processes here.
//
//	cmd := exec.Command("bash", "-c", script)
//	p, err := spawn.Start(cmd, &spawn.Options{DeathSignal: syscall.SIGKILL})
//	if err != nil { ... }
//	defer p.Stop(spawn.Ladder{TermGrace: time.Second})
//	<-p.Done()
//
// On Linux the parent-death signal is sent when the *thread* that forked
// the child exits, not the process; Go may retire OS threads, so children
// are started from one goroutine locked to its thread for the life of the
// process. Other systems have no parent-death signal; Windows has no
// process groups or signals either: every rung of the ladder is a kill of
// the process itself there.
package spawn

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Options say how a child is started.
type Options struct {
	// DeathSignal is the signal the kernel sends the child when lcp dies
	// (Linux); zero means SIGKILL. A child that must clean up what it
	// started (a guardian, a sandbox's init) asks for SIGTERM.
	DeathSignal syscall.Signal
}

// Process is a started child. Its methods are safe for concurrent use.
type Process struct {
	cmd  *exec.Cmd
	pid  int
	done chan struct{}
	err  error // cmd.Wait's, once done is closed

	mu      sync.Mutex
	adopted []int // more process groups that end with it
}

// Start starts cmd in a process group of its own, with the parent-death
// signal, and waits for it in the background: Done is closed once it
// has exited. cmd.SysProcAttr is kept and extended (a sandbox's
// namespaces stay). cmd.Wait must not be called: Wait is.
func Start(cmd *exec.Cmd, opts *Options) (*Process, error) {
	sig := syscall.SIGKILL
	if opts != nil && opts.DeathSignal != 0 {
		sig = opts.DeathSignal
	}
	prepare(cmd, sig)
	if err := start(cmd); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		// Park in the network poller until the child exits, where the
		// system allows: a blocking wait would pin an OS thread for each
		// idle child.
		awaitExit(p.pid)
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid returns the child's process id, which is also its process group's.
func (p *Process) Pid() int { return p.pid }

// Done returns a channel closed once the child has exited and been
// waited for.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the child to exit and returns cmd.Wait's error.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// State returns how the child ended, nil while it runs.
func (p *Process) State() *os.ProcessState {
	select {
	case <-p.done:
		return p.cmd.ProcessState
	default:
		return nil
	}
}

// Exited reports whether the child has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Adopt adds a process group that ends with the child: one it made for
// a process of its own (a worker below its guardian). Kill and the last
// rung of Stop kill it too.
func (p *Process) Adopt(pgid int) {
	if pgid <= 0 {
		return
	}
	p.mu.Lock()
	p.adopted = append(p.adopted, pgid)
	p.mu.Unlock()
}

// Signal sends sig to the child's process group (where there are none,
// it kills the child).
func (p *Process) Signal(sig syscall.Signal) { signalGroup(p.cmd.Process, p.pid, sig) }

// Kill kills the child's process group and the groups it adopted at
// once: whatever runs there ends, the child included.
func (p *Process) Kill() {
	p.Signal(syscall.SIGKILL)
	p.mu.Lock()
	groups := append([]int(nil), p.adopted...)
	p.mu.Unlock()
	for _, g := range groups {
		SignalGroup(g, syscall.SIGKILL)
	}
}

// Ladder is how Stop ends a child: close its input (when CloseInput is
// set) and wait InputGrace; SIGTERM its group and wait TermGrace;
// SIGKILL its group and the groups it adopted, and wait KillGrace (zero:
// until it has exited). A zero grace skips the wait of its rung.
type Ladder struct {
	CloseInput func()
	InputGrace time.Duration
	TermGrace  time.Duration
	KillGrace  time.Duration
}

// Stop ends the child as l says and reports whether it has exited. Once
// it has exited, at whichever rung, what it left running in its process
// group (and the groups it adopted) is killed: nothing it started
// outlives it.
func (p *Process) Stop(l Ladder) bool {
	defer func() {
		if p.Exited() {
			p.Kill()
		}
	}()
	if l.CloseInput != nil {
		l.CloseInput()
		if p.waitFor(l.InputGrace) {
			return true
		}
	}
	p.Signal(syscall.SIGTERM)
	if p.waitFor(l.TermGrace) {
		return true
	}
	p.Kill()
	if l.KillGrace <= 0 {
		<-p.done
		return true
	}
	return p.waitFor(l.KillGrace)
}

// waitFor waits up to d for the child to exit.
func (p *Process) waitFor(d time.Duration) bool {
	if d <= 0 {
		return p.Exited()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}
