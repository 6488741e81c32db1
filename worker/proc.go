package worker

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lcptools/lcp/internal/spawn"
)

// stderrLines is how many lines of a worker's stderr a CrashError keeps.
const stderrLines = 20

// proc is one worker: a guardian process and the worker process below it.
type proc struct {
	pool      *Pool
	slot      *slot
	lib       Library
	workspace string
	process   *spawn.Process // the guardian: its pid is its process group
	gpid      int
	maxFrame  int
	// callStarted and callEnded are the Wrap's hooks (Wrapped), or nil.
	callStarted func()
	callEnded   func() error

	wpid         atomic.Int64 // worker: its pid is its process group
	oom          oomMark      // the kernel's OOM kill counters at its start
	lastUsed     atomic.Int64 // unix nanoseconds of the last call's end
	resetPending atomic.Bool
	closing      atomic.Bool
	doomed       atomic.Bool // the engine is killing it: new calls go elsewhere
	loaded       atomic.Bool // the library is loaded: calls no longer carry its config

	callPipe *pipeWriter // calls sent while no other call is in flight (fd 3)
	sidePipe *pipeWriter // everything else (fd 6)

	reader // the reply pipe (fd 4), see reader.go

	statusR *os.File // guardian's status pipe
	outR    *os.File
	errR    *os.File

	hello  chan *inHeader
	drains sync.WaitGroup
	dead   chan struct{}

	mu         sync.Mutex
	calls      map[uint64]*pcall // calls whose result has not arrived; nil once dead
	lead       *pcall            // the call whose goroutine reads the reply pipe
	watching   bool              // the watcher reads the reply pipe
	started    uint64            // calls started, for idle checks
	idleCheck  bool              // an idle check is scheduled
	crash      *CrashError
	killCause  CrashCause
	killReason string
	fatal      string
	stderr     []string
}

// pcall is a call in flight on a proc.
type pcall struct {
	id      uint64
	callID  string
	host    Host
	ctx     context.Context // ends with the call; given to the host
	cancel  context.CancelFunc
	sent    time.Time
	done    chan frameIn               // the result frame
	promote chan struct{}              // the lead passes to this call
	events  atomic.Pointer[callEvents] // made by the reader on the first event
}

type frameIn struct {
	h       *inHeader
	payload []byte
}

// pipeWriter writes whole frames to a pipe towards the worker.
type pipeWriter struct {
	mu sync.Mutex
	f  *os.File
}

func (w *pipeWriter) write(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return os.ErrClosed
	}
	_, err := w.f.Write(b)
	return err
}

func (w *pipeWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

func (pr *proc) isDead() bool {
	select {
	case <-pr.dead:
		return true
	default:
		return false
	}
}

// deathError is what calls on a dead proc get.
func (pr *proc) deathError() error {
	if pr.closing.Load() {
		return ErrClosed
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.crash == nil {
		return &CrashError{Library: pr.lib.Path, Workspace: pr.workspace, Reason: "the worker is gone", ExitCode: -1}
	}
	c := *pr.crash
	return &c
}

// call sends one operation and waits for its result, enforcing the time
// limit and the context. end runs once the call is over in the worker:
// before call returns, or, for a request with ReturnOnCancel whose context
// ended, once the call has stopped in the background.
func (pr *proc) call(ctx context.Context, op string, req *Request, host Host, end func()) (*inHeader, []byte, error) {
	pc := &pcall{id: pr.pool.seq.Add(1), callID: req.CallID, host: host,
		done: make(chan frameIn, 1), promote: make(chan struct{}, 1)}
	pc.ctx, pc.cancel = context.WithCancel(ctx)
	overlap, err := pr.register(pc)
	if err != nil {
		pc.cancel()
		end()
		return nil, nil, err
	}
	if pr.callStarted != nil {
		pr.callStarted()
	}
	size := 160 + len(req.Function) + len(req.Args) + len(req.Context) + len(req.Config)
	frame := appendCallFrame(make([]byte, 0, size), op, pc.id, req, host, op == "load" || !pr.loaded.Load())
	pipe := pr.callPipe
	if overlap {
		pipe = pr.sidePipe
	}
	pc.sent = time.Now()
	if err := pipe.write(frame); err != nil {
		pr.release(pc)
		pc.cancel()
		end()
		select {
		case <-pr.dead:
		case <-time.After(5 * time.Second):
			pr.kill(CauseProtocol, "its request pipe failed: "+err.Error())
			<-pr.dead
		}
		return nil, nil, pr.deathError()
	}
	w := pr.newWait(ctx, pc, req)
	f, left, err := w.wait(req.ReturnOnCancel)
	if left {
		// The caller gave up and leaves: the call is stopped as it would
		// be with the caller waiting, and its later events are dropped.
		if q := pc.events.Load(); q != nil {
			q.wait(ctx)
		}
		go func() {
			_, _, _ = w.wait(false) // its error is the stop's: the caller has its own
			w.close()
			pc.cancel()
			end()
		}()
		return nil, nil, err
	}
	w.close()
	if q := pc.events.Load(); q != nil {
		// The call's events reach its host before its result does.
		q.wait(ctx)
	}
	pc.cancel()
	end()
	if err == nil && pr.callEnded != nil {
		if err := pr.callEnded(); err != nil {
			// The run went over a budget and its wrap ends the process:
			// no later call may be handed to it before it is seen dead.
			pr.kill(CauseKilled, "its run went over a budget: "+err.Error())
			return nil, nil, err
		}
	}
	return f.h, f.payload, err
}

// The phases of a call that is waited for.
const (
	running  = iota
	stopping // the cancel was sent: the tool has CancelGrace to stop
	killing  // it did not stop: its worker is being killed
)

// newWait starts waiting for pc's result; close ends it.
func (pr *proc) newWait(ctx context.Context, pc *pcall, req *Request) *callWait {
	w := &callWait{pr: pr, pc: pc, req: req, ctx: ctx, ctxDone: ctx.Done(), spin: pr.spin.worth()}
	if req.Timeout > 0 {
		w.deadline = pc.sent.Add(req.Timeout)
	}
	return w
}

// close ends pc's part in the proc once the wait is over.
func (w *callWait) close() {
	if w.unkick != nil {
		w.unkick()
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.pr.release(w.pc)
}

// wait waits for pc's result. While pc leads it reads the reply pipe
// itself; otherwise it waits for its frame or for the lead. With leave, it
// returns as soon as the context ended and the call is told to stop,
// reporting left: the caller must then wait again (without leave) for the
// stop to complete.
func (w *callWait) wait(leave bool) (f frameIn, left bool, err error) {
	pr, pc := w.pr, w.pc
	for {
		if f, ok := w.result(); ok {
			if w.phase != running {
				return frameIn{}, false, w.stopError()
			}
			pr.spin.observe(time.Since(pc.sent))
			return f, false, nil
		}
		if pr.isDead() {
			if w.phase == running {
				return frameIn{}, false, pr.deathError()
			}
			return frameIn{}, false, w.stopError()
		}
		if !w.advance(time.Now()) {
			return frameIn{}, false, w.stopError()
		}
		if leave && w.phase == stopping && w.ctx.Err() != nil {
			return frameIn{}, true, w.stopError()
		}
		if pr.leads(pc) {
			if !w.spin && w.unkick == nil && w.ctx.Done() != nil {
				// A leader parked on the pipe learns of the cancellation
				// by a kick; armed only now, since most calls end while
				// their leader polls (readFor returns after polling).
				w.unkick = context.AfterFunc(w.ctx, pr.kick)
			}
			if pr.readFor(pc, w.deadline, w.spin) {
				w.spin = false
				continue
			}
		}
		w.block()
	}
}

// callWait is the state of a caller waiting for its result.
type callWait struct {
	pr      *proc
	pc      *pcall
	req     *Request
	ctx     context.Context
	ctxDone <-chan struct{} // nil once the cancellation is handled

	phase            int
	deadline         time.Time // of the phase; zero: none
	timedOut, killed bool
	got              *frameIn // a frame block received
	timer            *time.Timer
	unkick           func() bool // stops the kick on cancellation
	spin             bool        // poll before parking, once
}

// result returns the call's frame if it arrived. A caller that gave up
// does not take it: it stops the call first.
func (w *callWait) result() (frameIn, bool) {
	if w.phase == running && w.ctx.Err() != nil {
		return frameIn{}, false
	}
	if w.got != nil {
		return *w.got, true
	}
	select {
	case f := <-w.pc.done:
		return f, true
	default:
		return frameIn{}, false
	}
}

// advance moves the call to its next phase when its context ended or its
// deadline passed; it reports false when there is nothing left to wait for.
func (w *callWait) advance(now time.Time) bool {
	expired := !w.deadline.IsZero() && !now.Before(w.deadline)
	switch {
	case w.phase == running && (w.ctx.Err() != nil || expired):
		w.timedOut = w.ctx.Err() == nil || errors.Is(w.ctx.Err(), context.DeadlineExceeded)
		// Stop the work: the worker raises inside the tool's thread (or
		// cancels its task); a tool that does not stop in time loses its
		// worker.
		w.pr.sendAsync(cancelFrame(w.pc.id))
		w.pc.cancel()
		w.phase, w.deadline, w.ctxDone = stopping, now.Add(w.pr.pool.opts.CancelGrace), nil
	case w.phase == stopping && expired:
		w.killed = true
		what := "cancelled"
		if w.timedOut {
			what = "timed out"
		}
		w.pr.kill(CauseKilled, fmt.Sprintf("the engine killed it because a call of %s %s and did not stop within %s",
			w.req.Function, what, w.pr.pool.opts.CancelGrace))
		w.phase, w.deadline = killing, now.Add(5*time.Second)
	case w.phase == killing && expired:
		return false
	}
	return true
}

// block waits, without reading the pipe, for the call's frame, the lead,
// the context, the phase's deadline or the worker's death.
func (w *callWait) block() {
	var timerC <-chan time.Time
	if !w.deadline.IsZero() {
		d := time.Until(w.deadline)
		if w.timer == nil {
			w.timer = time.NewTimer(d)
		} else {
			w.timer.Reset(d)
		}
		timerC = w.timer.C
	}
	select {
	case f := <-w.pc.done:
		w.got = &f
	case <-w.pc.promote:
	case <-w.ctxDone:
	case <-timerC:
	case <-w.pr.dead:
	}
}

// stopError is the error of a call that was stopped.
func (w *callWait) stopError() error {
	if w.timedOut {
		limit := w.req.Timeout
		if w.ctx.Err() != nil {
			limit = 0
		}
		return &TimeoutError{Function: w.req.Function, Timeout: limit, Killed: w.killed}
	}
	if w.killed {
		return fmt.Errorf("%w (the worker was killed because the tool did not stop): %w", ErrCancelled, w.ctx.Err())
	}
	return fmt.Errorf("%w: %w", ErrCancelled, w.ctx.Err())
}

// register adds pc to the calls in flight and makes it the reader when
// nobody reads. It reports whether another call is in flight: the frame
// then goes to the side pipe, since the worker's call thread may be busy.
func (pr *proc) register(pc *pcall) (overlap bool, err error) {
	pr.mu.Lock()
	if pr.calls == nil {
		pr.mu.Unlock()
		return false, pr.deathError()
	}
	overlap = len(pr.calls) > 0
	pr.calls[pc.id] = pc
	pr.started++
	kick := false
	var watcher *os.File
	if pr.lead == nil {
		pr.lead = pc
		kick, watcher = pr.watching, pr.watchFile
		pr.watching = false
	}
	pr.mu.Unlock()
	if watcher != nil {
		stopWatcher(watcher) // the watcher leaves the network poller
	} else if kick {
		pr.kick() // the watcher leaves its poll(2)
	}
	return overlap, nil
}

// release ends pc's part in the proc: it leaves the calls in flight, and
// its lead passes to another call, or, when none is left, to the watcher
// once the proc has been idle for watchDelay.
func (pr *proc) release(pc *pcall) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.calls != nil {
		delete(pr.calls, pc.id)
	}
	if pr.lead != pc {
		return
	}
	pr.lead = nil
	for _, next := range pr.calls {
		pr.lead = next
		select {
		case next.promote <- struct{}{}:
		default:
		}
		return
	}
	pr.scheduleIdleCheck()
}

func (pr *proc) leads(pc *pcall) bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.lead == pc
}

// takeCall removes the call whose result arrived.
func (pr *proc) takeCall(id uint64) *pcall {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pc := pr.calls[id]
	delete(pr.calls, id)
	return pc
}

// callContexts returns the contexts of the calls in flight, oldest first.
func (pr *proc) callContexts() []context.Context {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	out := make([]*pcall, 0, len(pr.calls))
	for _, pc := range pr.calls {
		out = append(out, pc)
	}
	slices.SortFunc(out, func(a, b *pcall) int { return cmp.Compare(a.id, b.id) })
	ctxs := make([]context.Context, len(out))
	for i, pc := range out {
		ctxs[i] = pc.ctx
	}
	return ctxs
}

// liveCall returns the call in flight with this id, or nil.
func (pr *proc) liveCall(id uint64) *pcall {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.calls[id]
}

// appendCallFrame appends the frame of a call or load: one JSON object
// written by hand (the arguments are passed through raw).
func appendCallFrame(dst []byte, op string, id uint64, req *Request, host Host, withConfig bool) []byte {
	start := len(dst)
	dst = startFrame(dst)
	dst = append(dst, `{"type":"`...)
	dst = append(dst, op...)
	dst = append(dst, `","id":`...)
	dst = strconv.AppendUint(dst, id, 10)
	if req.Function != "" {
		dst = append(dst, `,"fn":`...)
		dst = appendJSONString(dst, req.Function)
	}
	_, progress := host.(ProgressHost)
	_, logs := host.(LogHost)
	dst = appendBoolPair(append(dst, `,"h":`...), req.Handlers.Confirm, req.Handlers.Interact)
	dst = appendBoolPair(append(dst, `,"ev":`...), progress, logs)
	if req.HasLLM {
		dst = append(dst, `,"llm":true`...)
	}
	if req.HasDiscussion {
		dst = append(dst, `,"disc":true`...)
	}
	dst = append(append(dst, `,"args":`...), orEmpty(req.Args)...)
	dst = append(append(dst, `,"context":`...), orEmpty(req.Context)...)
	if withConfig {
		dst = append(append(dst, `,"config":`...), orEmpty(req.Config)...)
	}
	dst = append(dst, '}')
	return endFrame(dst, start)
}

func appendBoolPair(dst []byte, a, b bool) []byte {
	return append(strconv.AppendBool(append(strconv.AppendBool(append(dst, '['), a), ','), b), ']')
}

func orEmpty(b json.RawMessage) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

func cancelFrame(id uint64) []byte {
	return appendFrame(nil, []byte(`{"type":"cancel","id":`+strconv.FormatUint(id, 10)+`}`))
}

// sendAsync sends a frame on the side pipe without making the caller wait
// on a full pipe.
func (pr *proc) sendAsync(frame []byte) {
	go func() { _ = pr.sidePipe.write(frame) }()
}

// kill kills the worker's process group; the guardian then cleans up and
// reports, and the monitor declares the proc dead.
func (pr *proc) kill(cause CrashCause, reason string) {
	pr.doomed.Store(true)
	pr.mu.Lock()
	if pr.killCause == 0 {
		pr.killCause, pr.killReason = cause, reason
	}
	pr.mu.Unlock()
	if wpid := int(pr.wpid.Load()); wpid > 0 {
		spawn.SignalGroup(wpid, syscall.SIGKILL)
	} else {
		pr.process.Signal(syscall.SIGTERM)
	}
}

// shutdown stops the proc with spawn's ladder: close the request pipes
// (the worker exits), then SIGTERM the guardian (it kills the worker and
// everything below), then SIGKILL both process groups. Bounded by about
// three seconds.
func (pr *proc) shutdown() {
	pr.closing.Store(true)
	ended := pr.process.Stop(spawn.Ladder{
		// A write blocked on a full pipe holds it: close in the background.
		CloseInput: func() {
			go func() {
				pr.callPipe.close()
				pr.sidePipe.close()
			}()
		},
		InputGrace: time.Second, TermGrace: time.Second, KillGrace: time.Second,
	})
	if !ended {
		pr.pool.log.Warn("worker did not stop", "library", pr.lib.Path, "pid", pr.gpid)
	}
}

// drain forwards what the worker (or its children) write to fd 1 or 2, in
// chunks of whole lines (a line longer than the buffer is cut).
func (pr *proc) drain(f *os.File, stream string) {
	defer pr.drains.Done()
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	var pending []byte
	flush := func(b []byte) {
		if len(b) == 0 {
			return
		}
		s := strings.ToValidUTF8(string(b), "\uFFFD")
		if stream == "stderr" {
			pr.keepStderr(s)
		}
		pr.unattributed(stream, s)
	}
	for {
		n, err := f.Read(buf)
		pending = append(pending, buf[:n]...)
		if i := bytes.LastIndexByte(pending, '\n'); i >= 0 {
			flush(pending[:i+1])
			pending = append(pending[:0], pending[i+1:]...)
		}
		if len(pending) >= chunk {
			flush(pending)
			pending = pending[:0]
		}
		if err != nil {
			flush(pending)
			return
		}
	}
}

// keepStderr remembers the last lines of stderr for crash reports.
func (pr *proc) keepStderr(s string) {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) > stderrLines {
		lines = lines[len(lines)-stderrLines:]
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	for _, l := range lines {
		if len(l) > 2048 {
			l = l[:2048]
		}
		pr.stderr = append(pr.stderr, l)
	}
	if len(pr.stderr) > stderrLines {
		pr.stderr = append([]string(nil), pr.stderr[len(pr.stderr)-stderrLines:]...)
	}
}

type workerStatus struct {
	Exit   *int `json:"exit"`
	Signal int  `json:"signal"`
}

// monitor waits for the guardian's report of the worker's end, then
// declares the proc dead.
func (pr *proc) monitor() {
	b, _ := io.ReadAll(io.LimitReader(pr.statusR, 4096))
	var st workerStatus
	statusOK := json.Unmarshal(b, &st) == nil && (st.Exit != nil || st.Signal != 0)
	// The guardian exits right after reporting; if the worker died without
	// one (guardian killed), make sure nothing is left.
	if !statusOK {
		spawn.SignalGroup(int(pr.wpid.Load()), syscall.SIGKILL)
	}
	_ = pr.process.Wait()
	// Frames the worker wrote before it died are still in the pipe: they
	// are read to its end before the calls learn of the death.
	pr.mu.Lock()
	if pr.lead == nil && !pr.watching {
		pr.watching = true
		go pr.watch()
	}
	pr.mu.Unlock()
	select {
	case <-pr.readerDone:
	case <-time.After(2 * time.Second):
	}
	pr.stopReading()
	pr.mu.Lock()
	closing := pr.closing.Load() && pr.killCause == 0
	if !closing {
		pr.crash = pr.crashError(st, statusOK)
	}
	pr.calls = nil
	pr.mu.Unlock()
	pr.callPipe.close()
	pr.sidePipe.close()
	close(pr.dead)
	pr.slot.died(pr, !closing)
	pr.pool.removeProc(pr)
	if !closing {
		pr.pool.log.Warn("worker died", "library", pr.lib.Path, "workspace", pr.workspace,
			"pid", pr.wpid.Load(), "reason", pr.crash.Reason)
	}
	if f := pr.pool.opts.OnProcess; f != nil {
		ev := ProcessEvent{Crashed: !closing, Library: pr.lib.Path, Workspace: pr.workspace, PID: int(pr.wpid.Load())}
		if !closing {
			ev.Reason = pr.crash.Reason
		}
		f(ev)
	}
	pr.statusR.Close()
	done := make(chan struct{})
	go func() { pr.drains.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		pr.outR.Close()
		pr.errR.Close()
		<-done
	}
	pr.outR.Close()
	pr.errR.Close()
}

// crashError explains the worker's death; pr.mu is held.
func (pr *proc) crashError(st workerStatus, statusOK bool) *CrashError {
	c := &CrashError{Library: pr.lib.Path, Workspace: pr.workspace, PID: int(pr.wpid.Load()),
		ExitCode: -1, Stderr: append([]string(nil), pr.stderr...)}
	limit := pr.pool.opts.MemoryLimit
	memoryHint := func() bool {
		if limit <= 0 {
			return false
		}
		for _, l := range c.Stderr {
			if strings.Contains(l, "MemoryError") || strings.Contains(l, "Cannot allocate memory") {
				return true
			}
		}
		return false
	}
	switch {
	case statusOK && st.Signal != 0:
		c.Signal = syscall.Signal(st.Signal)
	case statusOK:
		c.ExitCode = *st.Exit
	}
	switch {
	case pr.killCause != 0:
		c.Cause, c.Reason = pr.killCause, pr.killReason
	case !statusOK:
		c.Cause, c.Reason = CauseSignal, "its guardian process ended without reporting (killed from outside?)"
	case c.Signal == syscall.SIGKILL:
		where, oom := pr.oom.oomSince()
		switch {
		case oom:
			c.Cause = CauseOOM
			c.Reason = "it was killed by the kernel's out-of-memory killer (the kernel counted an OOM kill in " + where + " while it ran)"
			if limit > 0 {
				c.Cause = CauseMemoryLimit
				c.Reason += fmt.Sprintf("; its memory limit is %d bytes", limit)
			}
		default:
			c.Cause = CauseSignal
			c.Reason = "it was killed by signal KILL from outside lcp (the kernel counted no out-of-memory kill)"
		}
	case c.Signal != 0:
		c.Cause = CauseSignal
		c.Reason = fmt.Sprintf("it was killed by signal %d (%s)", int(c.Signal), c.Signal)
		if limit > 0 && (c.Signal == syscall.SIGSEGV || c.Signal == syscall.SIGABRT || c.Signal == syscall.SIGBUS) && memoryHint() {
			c.Cause = CauseMemoryLimit
			c.Reason += fmt.Sprintf(", apparently after exceeding its memory limit of %d bytes", limit)
		}
	default:
		c.Cause = CauseExit
		c.Reason = fmt.Sprintf("it exited with code %d (os._exit or a fatal error in the worker)", c.ExitCode)
		if pr.fatal != "" {
			lines := strings.Split(strings.TrimSpace(pr.fatal), "\n")
			c.Reason = fmt.Sprintf("it failed internally and exited with code %d: %s", c.ExitCode, lines[len(lines)-1])
		}
		if memoryHint() {
			c.Cause = CauseMemoryLimit
			c.Reason += fmt.Sprintf(", apparently after exceeding its memory limit of %d bytes", limit)
		}
	}
	return c
}
