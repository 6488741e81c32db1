package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/lcptools/lcp/internal/spawn"
)

// spawn starts a worker for the group's library and waits for its hello.
func (p *Pool) spawn(g *group, s *slot) (*proc, error) {
	python, exe, err := p.interpreter()
	if err != nil {
		return nil, err
	}
	if err := checkWorkspace(g.workspace); err != nil {
		return nil, err
	}
	pp, err := openPipes()
	if err != nil {
		return nil, err
	}
	cmd := p.workerCommand(python, exe, g.workspace, pp.child)
	var wrapped Wrapped
	var pr *proc
	var prMu sync.Mutex
	calls := func() []context.Context {
		prMu.Lock()
		defer prMu.Unlock()
		if pr == nil {
			return nil
		}
		return pr.callContexts()
	}
	if p.opts.Wrap != nil {
		if wrapped, err = p.opts.Wrap(cmd, g.lib, g.workspace, calls); err != nil {
			pp.closeChild()
			pp.closeParent()
			return nil, fmt.Errorf("worker: prepare the worker of %s: %w", g.lib.Path, err)
		}
	}
	err = supported()
	var process *spawn.Process
	if err == nil {
		// The guardian gets SIGTERM when the engine dies: it then kills the
		// worker and everything below it.
		process, err = spawn.Start(cmd, &spawn.Options{DeathSignal: syscall.SIGTERM})
	}
	if wrapped.Started != nil {
		wrapped.Started()
	}
	if err != nil {
		pp.closeChild()
		pp.closeParent()
		return nil, &InterpreterError{Python: python, Err: err}
	}
	pp.closeChild()
	prMu.Lock()
	pr = p.newProc(g, s, process, pp)
	pr.callStarted, pr.callEnded = wrapped.CallStarted, wrapped.CallEnded
	prMu.Unlock()
	if !p.addProc(pr) {
		process.Kill()
		pp.closeParent()
		_ = process.Wait()
		return nil, ErrClosed
	}
	pr.start(p.startFrame(g.lib))
	if err := p.handshake(pr, python); err != nil {
		return nil, err
	}
	return pr, nil
}

func checkWorkspace(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("worker: workspace: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("worker: workspace %q is not a directory", dir)
	}
	return nil
}

// childFiles are the worker's ends of its pipes.
type childFiles struct {
	call   *os.File // fd 3: calls
	reply  *os.File // fd 4: replies
	status *os.File // fd 5: the guardian's report
	side   *os.File // fd 6: everything else towards the worker
	out    *os.File // fd 1
	err    *os.File // fd 2
}

// workerCommand builds the command of a worker process: the bootstrap run
// by the interpreter in the workspace, with the protocol pipes as its file
// descriptors 3 to 6 (see lcp_worker.py).
//
// The interpreter runs isolated (-I: no working folder, PYTHON* variables
// or user site-packages on sys.path, and safe_path on 3.11), so nothing in
// the workspace is imported while the worker starts; the worker adds the
// user's PYTHONPATH and user site itself once its own modules are loaded.
func (p *Pool) workerCommand(python, exe, dir string, f childFiles) *exec.Cmd {
	return &exec.Cmd{
		Path:       exe,
		Args:       []string{python, "-I", "-c", bootstrap},
		Dir:        dir,
		Env:        p.workerEnv(),
		Stdout:     f.out,
		Stderr:     f.err,
		ExtraFiles: []*os.File{f.call, f.reply, f.status, f.side},
	}
}

func (p *Pool) workerEnv() []string {
	env := append(os.Environ(), p.opts.Env...)
	if p.opts.MemoryLimit > 0 && os.Getenv("MALLOC_ARENA_MAX") == "" {
		// Each glibc arena reserves 64 MiB of address space, which an
		// RLIMIT_AS budget cannot afford per thread.
		env = append(env, "MALLOC_ARENA_MAX=2")
	}
	return env
}

// pipes are the pipes between the engine and a worker. The call, side and
// reply pipes are made without Go's network poller (see reader.go): the
// engine's ends of the call and side pipes are blocking files, the reply
// pipe and the kick pipe raw non-blocking descriptors.
type pipes struct {
	child                childFiles
	callW, sideW         *os.File
	statusR, outR, errR  *os.File
	replyR, kickR, kickW int
}

func openPipes() (*pipes, error) {
	pp := &pipes{replyR: -1, kickR: -1, kickW: -1}
	raw := func() (r, w *os.File, err error) {
		rfd, wfd, err := rawPipe()
		if err != nil {
			return nil, nil, err
		}
		return os.NewFile(uintptr(rfd), "|0"), os.NewFile(uintptr(wfd), "|1"), nil
	}
	var errs [8]error
	pp.child.call, pp.callW, errs[0] = raw()
	pp.child.side, pp.sideW, errs[1] = raw()
	var replyW int
	pp.replyR, replyW, errs[2] = rawPipe()
	if errs[2] == nil {
		pp.child.reply = os.NewFile(uintptr(replyW), "|1")
		errs[3] = setNonblock(pp.replyR)
	}
	pp.kickR, pp.kickW, errs[4] = rawPipe()
	if errs[4] == nil {
		errs[4] = errors.Join(setNonblock(pp.kickR), setNonblock(pp.kickW))
	}
	pp.statusR, pp.child.status, errs[5] = os.Pipe()
	pp.outR, pp.child.out, errs[6] = os.Pipe()
	pp.errR, pp.child.err, errs[7] = os.Pipe()
	if err := errors.Join(errs[:]...); err != nil {
		pp.closeChild()
		pp.closeParent()
		return nil, fmt.Errorf("worker: pipes: %w", err)
	}
	return pp, nil
}

// closeChild closes the worker's ends (in the engine, once it started).
func (pp *pipes) closeChild() {
	for _, f := range []*os.File{pp.child.call, pp.child.reply, pp.child.status, pp.child.side, pp.child.out, pp.child.err} {
		if f != nil {
			f.Close()
		}
	}
}

// closeParent closes the engine's ends, for a worker that did not start.
func (pp *pipes) closeParent() {
	for _, f := range []*os.File{pp.callW, pp.sideW, pp.statusR, pp.outR, pp.errR} {
		if f != nil {
			f.Close()
		}
	}
	for _, fd := range []int{pp.replyR, pp.kickR, pp.kickW} {
		if fd >= 0 {
			closeFD(fd)
		}
	}
}

func (p *Pool) newProc(g *group, s *slot, process *spawn.Process, pp *pipes) *proc {
	pr := &proc{
		pool:      p,
		slot:      s,
		lib:       g.lib,
		workspace: g.workspace,
		process:   process,
		gpid:      process.Pid(),
		maxFrame:  p.opts.MaxResultBytes + 4<<20,
		callPipe:  &pipeWriter{f: pp.callW},
		sidePipe:  &pipeWriter{f: pp.sideW},
		statusR:   pp.statusR,
		outR:      pp.outR,
		errR:      pp.errR,
		hello:     make(chan *inHeader, 1),
		dead:      make(chan struct{}),
		calls:     make(map[uint64]*pcall),
		watching:  true,                   // the watcher reads the hello
		oom:       markOOM(process.Pid()), // for a death in the start-up; the hello marks the worker's
	}
	pr.rfd, pr.kickR, pr.kickW = pp.replyR, pp.kickR, pp.kickW
	pr.frames = newFrameReader(64<<10, pr.maxFrame)
	pr.readerDone = make(chan struct{})
	pr.spin.avg.Store(int64(spinBudget))
	pr.lastUsed.Store(time.Now().UnixNano())
	return pr
}

// startFrame is the first thing a worker reads: its program (source, then
// the compiled code of an earlier worker if there is one), then the frame
// of its configuration.
func (p *Pool) startFrame(lib Library) []byte {
	var init struct {
		Library struct {
			Path string `json:"path"`
			Stem string `json:"stem"`
			Code string `json:"code,omitempty"`
		} `json:"library"`
		MemoryLimit int64 `json:"memory_limit,omitempty"`
		MaxResult   int   `json:"max_result"`
		OutputLimit int   `json:"output_limit"`
		WantCode    bool  `json:"want_code,omitempty"`
	}
	init.Library.Path = lib.Path
	init.Library.Stem = lib.stem()
	init.Library.Code = lib.Code
	init.MemoryLimit = p.opts.MemoryLimit
	init.MaxResult = p.opts.MaxResultBytes
	init.OutputLimit = p.opts.OutputLimit
	compiled := p.compiledProgram()
	init.WantCode = compiled == nil
	cfg, _ := jsonFrame(init) // strings and numbers: cannot fail
	return append(append(rawFrame(workerSource), rawFrame(compiled)...), cfg...)
}

// start runs the proc's goroutines and sends its first frame.
func (pr *proc) start(first []byte) {
	pr.drains.Add(2)
	go pr.drain(pr.outR, "stdout")
	go pr.drain(pr.errR, "stderr")
	go pr.watch()
	go pr.monitor()
	if pr.pool.opts.StoppedLimit > 0 && stoppedKnown {
		go pr.watchStopped(pr.pool.opts.StoppedLimit)
	}
	// The worker may die before reading; the error then shows as its death.
	go func() { _ = pr.callPipe.write(first) }()
}

// handshake waits for the worker's hello. A worker that ends before it,
// or is stopped (SIGSTOP, a debugger) for Options.StoppedLimit, or takes
// longer than Options.StartTimeout, fails with an error that says which.
func (p *Pool) handshake(pr *proc, python string) error {
	timer := time.NewTimer(p.opts.StartTimeout)
	defer timer.Stop()
	var tick <-chan time.Time
	limit := p.opts.StoppedLimit
	if limit > 0 && stoppedKnown {
		t := time.NewTicker(max(min(limit/10, 2*time.Second), 10*time.Millisecond))
		defer t.Stop()
		tick = t.C
	}
	var since time.Time // when the start was first seen stopped; zero: running
	for {
		select {
		case h := <-pr.hello:
			if h.Error != "" {
				pr.shutdown()
				return &InterpreterError{Python: python, Version: h.Python}
			}
			if h.Protocol != protocolVersion {
				pr.kill(CauseProtocol, fmt.Sprintf("it speaks protocol %d, not %d", h.Protocol, protocolVersion))
				return &ProtocolError{Msg: fmt.Sprintf("worker protocol %d, engine protocol %d", h.Protocol, protocolVersion)}
			}
			oom := markOOM(h.PID)
			pr.mu.Lock()
			pr.oom = oom
			pr.mu.Unlock()
			pr.wpid.Store(int64(h.PID))
			pr.process.Adopt(h.PID) // the worker's own group ends with its guardian
			p.log.Debug("worker started", "library", pr.lib.Path, "workspace", pr.workspace,
				"pid", h.PID, "python", h.Python)
			return nil
		case <-pr.dead:
			return pr.startError(python)
		case <-timer.C:
			// The interpreter ran: the machine is too busy, or the
			// library's start too slow. Not an interpreter to install.
			reason := fmt.Sprintf("the engine killed it: it did not start within %s (Options.StartTimeout; a busy machine can need more)", p.opts.StartTimeout)
			if !since.IsZero() || startStopped(pr.gpid) {
				reason = fmt.Sprintf("the engine killed it: it was stopped (SIGSTOP, or a debugger) during its start-up and did not start within %s (Options.StartTimeout)", p.opts.StartTimeout)
			}
			pr.killStart(reason)
			<-pr.dead
			return pr.startError(python)
		case now := <-tick:
			if !startStopped(pr.gpid) {
				since = time.Time{}
				continue
			}
			if since.IsZero() {
				since = now
				continue
			}
			if now.Sub(since) >= limit {
				p.log.Warn("killing a worker stopped in its start-up", "library", pr.lib.Path, "pid", pr.gpid, "stopped_for", now.Sub(since).Round(time.Millisecond))
				pr.killStart(fmt.Sprintf("the engine killed it: it was stopped (SIGSTOP, or a debugger) during its start-up for over %s", limit))
				<-pr.dead
				return pr.startError(python)
			}
		}
	}
}

// startStopped reports whether a process of a worker in its start-up is
// stopped.
func startStopped(gpid int) bool {
	for _, pid := range startPids(gpid) {
		if isStopped(pid) {
			return true
		}
	}
	return false
}

// killStart kills a worker still in its start-up, with SIGKILL: a stopped
// process never acts on SIGTERM, and there is no call to lose. The worker,
// forked or not yet, goes with its guardian (its parent-death signal), and
// is killed here too when the guardian has forked it already.
func (pr *proc) killStart(reason string) {
	pr.doomed.Store(true)
	pr.mu.Lock()
	if pr.killCause == 0 {
		pr.killCause, pr.killReason = CauseKilled, reason
	}
	pr.mu.Unlock()
	pids := startPids(pr.gpid)
	pr.process.Kill()
	killPids(pids[1:])
}

// startError explains a worker that ended before its hello. The pool's
// own stop (a release, a reload, Close) and a signal are StartErrors; an
// interpreter that exited on its own cannot run the worker program: an
// InterpreterError that says how it ended.
func (pr *proc) startError(python string) error {
	pr.mu.Lock()
	cause, reason := pr.killCause, pr.killReason
	var c CrashError
	if pr.crash != nil {
		c = *pr.crash
	}
	pr.mu.Unlock()
	se := &StartError{Library: pr.lib.Path, Python: python, Stderr: c.Stderr}
	sig, code := c.Signal, -1
	if c.Cause == CauseExit {
		code = c.ExitCode
	}
	if st := pr.process.State(); sig == 0 && code < 0 && st != nil {
		// The guardian itself ended before it could report (it had not
		// forked the worker yet, or was killed with it).
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			sig = ws.Signal()
		} else {
			code = st.ExitCode()
		}
	}
	switch {
	case cause != 0:
		se.Cause, se.Reason = cause, reason
	case pr.closing.Load():
		se.Cause, se.Err = CauseKilled, ErrClosed
		se.Reason = "the pool stopped it during its start-up (its library was released or reloaded, or the pool closed)"
	case sig == syscall.SIGKILL:
		se.Cause, se.Signal = CauseSignal, sig
		se.Reason = "it was killed by signal KILL during its start-up, from outside lcp (the kernel counted no out-of-memory kill)"
		pr.mu.Lock()
		where, oom := pr.oom.oomSince()
		pr.mu.Unlock()
		if oom {
			se.Cause = CauseOOM
			se.Reason = "it was killed by the kernel's out-of-memory killer during its start-up (the kernel counted an OOM kill in " + where + ")"
		}
	case sig != 0:
		se.Cause, se.Signal = CauseSignal, sig
		se.Reason = fmt.Sprintf("it was killed by signal %d (%s) during its start-up", int(sig), sig)
	default:
		why := "it ended during its start-up"
		if code >= 0 {
			why = fmt.Sprintf("it exited with code %d during its start-up", code)
		}
		if line := c.stderrSummary(); line != "" {
			why += " (stderr: " + line + ")"
		}
		return &InterpreterError{Python: python, Err: errors.New(why)}
	}
	return se
}
