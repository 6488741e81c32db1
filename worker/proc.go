package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stderrLines is how many lines of a worker's stderr a CrashError keeps.
const stderrLines = 20

// proc is one worker: a guardian process and the worker process below it.
type proc struct {
	pool      *Pool
	slot      *slot
	lib       Library
	workspace string
	cmd       *exec.Cmd
	gpid      int // guardian: its pid is its process group
	maxFrame  int

	wpid         atomic.Int64 // worker: its pid is its process group
	lastUsed     atomic.Int64 // unix nanoseconds of the last call's end
	resetPending atomic.Bool
	closing      atomic.Bool

	wmu sync.Mutex
	w   *os.File // request pipe (engine -> worker)

	r       *os.File // reply pipe
	statusR *os.File // guardian's status pipe
	outR    *os.File
	errR    *os.File

	hello      chan *inHeader
	readerDone chan struct{}
	drains     sync.WaitGroup
	dead       chan struct{}

	mu         sync.Mutex
	calls      map[uint64]*pcall
	crash      *CrashError
	killCause  CrashCause
	killReason string
	fatal      string
	stderr     []string
}

// pcall is a call in flight on a proc.
type pcall struct {
	id     uint64
	callID string
	host   Host
	ctx    context.Context
	done   chan frameIn
}

type frameIn struct {
	h       *inHeader
	payload []byte
}

type callHeader struct {
	Type string  `json:"type"`
	ID   uint64  `json:"id"`
	CID  string  `json:"cid,omitempty"`
	Fn   string  `json:"fn,omitempty"`
	H    [2]bool `json:"h"`
	LLM  bool    `json:"llm,omitempty"`
	Disc bool    `json:"disc,omitempty"`
}

type idHeader struct {
	Type string `json:"type"`
	ID   uint64 `json:"id,omitempty"`
	RID  uint64 `json:"rid,omitempty"`
}

type handlersHeader struct {
	Type     string `json:"type"`
	Confirm  bool   `json:"confirm"`
	Interact bool   `json:"interact"`
}

type initFrame struct {
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

// spawn starts a worker for the group's library and waits for its hello.
func (p *Pool) spawn(g *group, s *slot) (*proc, error) {
	python, exe, err := p.interpreter()
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(g.workspace); err != nil {
		return nil, fmt.Errorf("worker: workspace: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("worker: workspace %q is not a directory", g.workspace)
	}

	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	reqR, reqW, err1 := pipe()
	repR, repW, err2 := pipe()
	stR, stW, err3 := pipe()
	outR, outW, err4 := pipe()
	errR, errW, err5 := pipe()
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		closeAll()
		return nil, fmt.Errorf("worker: pipes: %w", err)
	}

	env := append(os.Environ(), p.opts.Env...)
	if p.opts.MemoryLimit > 0 && os.Getenv("MALLOC_ARENA_MAX") == "" {
		// Each glibc arena reserves 64 MiB of address space, which an
		// RLIMIT_AS budget cannot afford per thread.
		env = append(env, "MALLOC_ARENA_MAX=2")
	}
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        []string{python, "-c", bootstrap},
		Dir:         g.workspace,
		Env:         env,
		Stdout:      outW,
		Stderr:      errW,
		ExtraFiles:  []*os.File{reqR, repW, stW},
		SysProcAttr: sysProcAttr(),
	}
	started := func() {}
	if p.opts.Wrap != nil {
		if started, err = p.opts.Wrap(cmd, g.lib, g.workspace); err != nil {
			closeAll()
			return nil, fmt.Errorf("worker: prepare the worker of %s: %w", g.lib.Path, err)
		}
	}
	err = startCmd(cmd)
	started()
	if err != nil {
		closeAll()
		return nil, &InterpreterError{Python: python, Err: err}
	}
	for _, f := range []*os.File{reqR, repW, stW, outW, errW} {
		f.Close()
	}

	pr := &proc{
		pool:       p,
		slot:       s,
		lib:        g.lib,
		workspace:  g.workspace,
		cmd:        cmd,
		gpid:       cmd.Process.Pid,
		maxFrame:   p.opts.MaxResultBytes + 4<<20,
		w:          reqW,
		r:          repR,
		statusR:    stR,
		outR:       outR,
		errR:       errR,
		hello:      make(chan *inHeader, 1),
		readerDone: make(chan struct{}),
		dead:       make(chan struct{}),
		calls:      make(map[uint64]*pcall),
	}
	pr.lastUsed.Store(time.Now().UnixNano())
	if !p.addProc(pr) {
		killGroup(pr.gpid, syscall.SIGKILL)
		closeAll()
		_ = cmd.Wait()
		return nil, ErrClosed
	}
	pr.drains.Add(2)
	go pr.drain(outR, "stdout")
	go pr.drain(errR, "stderr")
	go pr.readLoop(bufio.NewReaderSize(repR, 64<<10))
	go pr.monitor()

	var init initFrame
	init.Library.Path = g.lib.Path
	init.Library.Stem = g.lib.stem()
	init.Library.Code = g.lib.Code
	init.MemoryLimit = p.opts.MemoryLimit
	init.MaxResult = p.opts.MaxResultBytes
	init.OutputLimit = p.opts.OutputLimit
	compiled := p.compiledProgram()
	init.WantCode = compiled == nil
	first := append(rawFrame(workerSource), rawFrame(compiled)...)
	first, err = appendFrame(first, init)
	if err != nil {
		pr.kill(CauseProtocol, "encoding its start-up frame failed")
		return nil, err
	}
	go func() {
		// The worker may die before reading; the error then shows as its
		// death.
		pr.wmu.Lock()
		defer pr.wmu.Unlock()
		if pr.w != nil {
			_, _ = pr.w.Write(first)
		}
	}()

	timer := time.NewTimer(p.opts.StartTimeout)
	defer timer.Stop()
	select {
	case h := <-pr.hello:
		if h.Error != "" {
			pr.shutdown()
			return nil, &InterpreterError{Python: python, Version: h.Python}
		}
		if h.Protocol != protocolVersion {
			pr.kill(CauseProtocol, fmt.Sprintf("it speaks protocol %d, not %d", h.Protocol, protocolVersion))
			return nil, &ProtocolError{Msg: fmt.Sprintf("worker protocol %d, engine protocol %d", h.Protocol, protocolVersion)}
		}
		pr.wpid.Store(int64(h.PID))
		p.log.Debug("worker started", "library", g.lib.Path, "workspace", g.workspace,
			"pid", h.PID, "python", h.Python)
		return pr, nil
	case <-pr.dead:
		return nil, &InterpreterError{Python: python, Err: pr.deathError()}
	case <-timer.C:
		pr.kill(CauseKilled, "it did not start within "+p.opts.StartTimeout.String())
		<-pr.dead
		return nil, &InterpreterError{Python: python, Err: pr.deathError()}
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
// limit and the context.
func (pr *proc) call(ctx context.Context, op string, req *Request, host Host) (*inHeader, []byte, error) {
	id := pr.pool.seq.Add(1)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pc := &pcall{id: id, callID: req.CallID, host: host, ctx: cctx, done: make(chan frameIn, 1)}
	pr.mu.Lock()
	if pr.calls == nil {
		pr.mu.Unlock()
		return nil, nil, pr.deathError()
	}
	pr.calls[id] = pc
	pr.mu.Unlock()
	defer func() {
		pr.mu.Lock()
		if pr.calls != nil {
			delete(pr.calls, id)
		}
		pr.mu.Unlock()
	}()

	hdr := callHeader{Type: op, ID: id, CID: req.CallID, Fn: req.Function,
		H: [2]bool{req.Handlers.Confirm, req.Handlers.Interact}, LLM: req.HasLLM, Disc: req.HasDiscussion}
	if err := pr.send(hdr, []byte(`{"args":`), orEmpty(req.Args), []byte(`,"context":`), orEmpty(req.Context),
		[]byte(`,"config":`), orEmpty(req.Config), []byte(`}`)); err != nil {
		select {
		case <-pr.dead:
		case <-time.After(5 * time.Second):
			pr.kill(CauseProtocol, "its request pipe failed: "+err.Error())
			<-pr.dead
		}
		return nil, nil, pr.deathError()
	}

	var limit <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(req.Timeout)
		defer t.Stop()
		limit = t.C
	}
	timedOut := false
	select {
	case f := <-pc.done:
		return f.h, f.payload, nil
	case <-pr.dead:
		return nil, nil, pr.deathError()
	case <-limit:
		timedOut = true
	case <-ctx.Done():
		timedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
	}

	// Stop the work: the worker raises inside the tool's thread (or cancels
	// its task); a tool that does not stop in time loses its worker.
	pr.sendAsync(idHeader{Type: "cancel", ID: id})
	cancel()
	grace := time.NewTimer(pr.pool.opts.CancelGrace)
	defer grace.Stop()
	killed := false
	select {
	case <-pc.done:
	case <-pr.dead:
	case <-grace.C:
		killed = true
		what := "cancelled"
		if timedOut {
			what = "timed out"
		}
		pr.kill(CauseKilled, fmt.Sprintf("the engine killed it because a call of %s %s and did not stop within %s",
			req.Function, what, pr.pool.opts.CancelGrace))
		select {
		case <-pr.dead:
		case <-time.After(5 * time.Second):
		}
	}
	if timedOut {
		lim := req.Timeout
		if ctx.Err() != nil {
			lim = 0
		}
		return nil, nil, &TimeoutError{Function: req.Function, Timeout: lim, Killed: killed}
	}
	if killed {
		return nil, nil, fmt.Errorf("%w (the worker was killed because the tool did not stop): %w", ErrCancelled, ctx.Err())
	}
	return nil, nil, fmt.Errorf("%w: %w", ErrCancelled, ctx.Err())
}

func orEmpty(b json.RawMessage) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

// send writes one frame to the worker.
func (pr *proc) send(header any, payload ...[]byte) error {
	buf, err := appendFrame(nil, header, payload...)
	if err != nil {
		return err
	}
	pr.wmu.Lock()
	defer pr.wmu.Unlock()
	if pr.w == nil {
		return os.ErrClosed
	}
	_, err = pr.w.Write(buf)
	return err
}

// sendAsync sends without making the caller wait on a full pipe.
func (pr *proc) sendAsync(header any, payload ...[]byte) {
	go func() { _ = pr.send(header, payload...) }()
}

// kill kills the worker's process group; the guardian then cleans up and
// reports, and the monitor declares the proc dead.
func (pr *proc) kill(cause CrashCause, reason string) {
	pr.mu.Lock()
	if pr.killCause == 0 {
		pr.killCause, pr.killReason = cause, reason
	}
	pr.mu.Unlock()
	if wpid := int(pr.wpid.Load()); wpid > 0 {
		killGroup(wpid, syscall.SIGKILL)
	} else {
		killGroup(pr.gpid, syscall.SIGTERM)
	}
}

// shutdown stops the proc: close the request pipe (the worker exits), then
// SIGTERM the guardian (it kills the worker and everything below), then
// SIGKILL both process groups. Bounded by about three seconds.
func (pr *proc) shutdown() {
	pr.closing.Store(true)
	go func() {
		pr.wmu.Lock()
		if pr.w != nil {
			pr.w.Close()
			pr.w = nil
		}
		pr.wmu.Unlock()
	}()
	steps := []func(){
		func() { killGroup(pr.gpid, syscall.SIGTERM) },
		func() {
			killGroup(int(pr.wpid.Load()), syscall.SIGKILL)
			killGroup(pr.gpid, syscall.SIGKILL)
		},
	}
	for _, step := range steps {
		select {
		case <-pr.dead:
			return
		case <-time.After(time.Second):
		}
		step()
	}
	select {
	case <-pr.dead:
	case <-time.After(time.Second):
		pr.pool.log.Warn("worker did not stop", "library", pr.lib.Path, "pid", pr.gpid)
	}
}

// readLoop reads the worker's frames until the pipe ends.
func (pr *proc) readLoop(br *bufio.Reader) {
	defer close(pr.readerDone)
	first := true
	for {
		hb, payload, err := readFrame(br, pr.maxFrame)
		if err != nil {
			if errors.Is(err, errFrameTooLarge) {
				pr.kill(CauseProtocol, "it sent an oversized frame: "+err.Error())
			}
			return
		}
		h, err := parseHeader(hb)
		if err != nil {
			pr.kill(CauseProtocol, "it sent an invalid frame: "+err.Error())
			return
		}
		if first {
			first = false
			if h.Type != "hello" {
				pr.kill(CauseProtocol, "its first frame was not a hello")
				return
			}
			pr.hello <- h
			continue
		}
		switch h.Type {
		case "result":
			pr.mu.Lock()
			pc := pr.calls[h.ID]
			pr.mu.Unlock()
			if pc != nil {
				select {
				case pc.done <- frameIn{h, payload}:
				default:
				}
			}
		case "output":
			pr.deliver(h.CID, h.Stream, string(payload), h.Dropped)
		case "request":
			pr.mu.Lock()
			pc := pr.calls[h.ID]
			pr.mu.Unlock()
			go pr.serveRequest(pc, h, payload)
		case "log":
			level := slog.LevelInfo
			if h.Level == "warn" {
				level = slog.LevelWarn
			}
			pr.pool.log.Log(context.Background(), level, h.Msg, "library", pr.lib.Path, "pid", pr.wpid.Load())
		case "code":
			pr.pool.keepCompiledProgram(payload)
		case "fatal":
			pr.mu.Lock()
			pr.fatal = h.Error
			pr.mu.Unlock()
		default:
			pr.kill(CauseProtocol, fmt.Sprintf("it sent an unknown frame type %q", h.Type))
			return
		}
	}
}

func (pr *proc) deliver(callID, stream, data string, dropped int64) {
	if f := pr.pool.opts.OnOutput; f != nil {
		f(Output{CallID: callID, Library: pr.lib.Path, Workspace: pr.workspace, Stream: stream,
			Data: data, Dropped: dropped, PID: int(pr.wpid.Load())})
	}
}

// serveRequest asks the call's host and answers the worker.
func (pr *proc) serveRequest(pc *pcall, h *inHeader, payload []byte) {
	answer := []byte("null")
	func() {
		defer func() {
			if v := recover(); v != nil {
				pr.pool.log.Error("host request panicked", "kind", h.Kind, "panic", v, "stack", string(debug.Stack()))
			}
		}()
		answer = pr.answer(pc, h, payload)
	}()
	_ = pr.send(idHeader{Type: "answer", RID: h.RID}, answer)
}

func (pr *proc) answer(pc *pcall, h *inHeader, payload []byte) []byte {
	var host Host
	ctx := context.Background()
	if pc != nil {
		host, ctx = pc.host, pc.ctx
	}
	stem := pr.lib.stem()
	marshal := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			return []byte("null")
		}
		return b
	}
	validOr := func(b json.RawMessage, def string) []byte {
		if len(b) == 0 || !json.Valid(b) {
			return []byte(def)
		}
		return b
	}
	switch h.Kind {
	case "confirm":
		if host == nil {
			return marshal(map[string]string{"decision": "reject", "reason": "No host is available to approve this action."})
		}
		d, reason := host.Confirm(ctx, ConfirmRequest{Source: h.Source, Label: h.ScriptLabel, Argv: h.Argv, Library: stem})
		return marshal(map[string]string{"decision": d, "reason": reason})
	case "interact":
		if host == nil {
			return []byte("null")
		}
		ans := host.Interact(ctx, validOr(payload, "{}"))
		if ans == nil {
			return []byte("null")
		}
		return marshal(*ans)
	case "generate":
		if host == nil {
			return marshal(map[string]string{"error": "No LLM is available on this host."})
		}
		text, err := host.Generate(ctx, GenerateRequest{Prompt: h.Prompt, Options: validOr(payload, "{}"), Library: stem})
		if err != nil {
			return marshal(map[string]string{"error": err.Error()})
		}
		return marshal(map[string]string{"text": text})
	case "execute_tool":
		if host == nil {
			msg := fmt.Sprintf("Tool '%s' cannot be run: no host is available.", h.Name)
			return marshal(map[string]any{"success": false, "status_code": 500, "error": msg, "output": msg})
		}
		return validOr(host.ExecuteTool(ctx, h.Name, validOr(payload, "{}")), "null")
	case "discussion":
		if host == nil {
			return []byte("null")
		}
		return validOr(host.Discussion(ctx), "null")
	}
	return []byte("null")
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
		pr.deliver("", stream, s, 0)
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
		killGroup(int(pr.wpid.Load()), syscall.SIGKILL)
	}
	_ = pr.cmd.Wait()
	// Frames the worker wrote before it died are still in the pipe.
	select {
	case <-pr.readerDone:
	case <-time.After(2 * time.Second):
		pr.r.Close()
		<-pr.readerDone
	}
	pr.mu.Lock()
	closing := pr.closing.Load() && pr.killCause == 0
	if !closing {
		pr.crash = pr.crashError(st, statusOK)
	}
	pr.calls = nil
	pr.mu.Unlock()
	pr.wmu.Lock()
	if pr.w != nil {
		pr.w.Close()
		pr.w = nil
	}
	pr.wmu.Unlock()
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
	pr.r.Close()
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
		c.Cause = CauseOOM
		c.Reason = "it was killed by SIGKILL that the engine did not send (most likely the kernel's out-of-memory killer)"
		if limit > 0 {
			c.Cause = CauseMemoryLimit
			c.Reason += fmt.Sprintf("; its memory limit is %d bytes", limit)
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
