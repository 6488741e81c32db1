package worker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

const (
	defaultOutputLimit = 1 << 20
	defaultMaxResult   = 128 << 20
	defaultGrace       = time.Second
	defaultStart       = 30 * time.Second
	// defaultStoppedLimit is Options.StoppedLimit's default.
	defaultStoppedLimit = 10 * time.Second
	maxProcesses        = 64
)

// Pool runs Python tool calls in worker processes: one process (or
// Options.Processes) per library and workspace, started on first use and kept
// for later calls, so module state persists. A Pool is safe for concurrent
// use; calls to one library run concurrently (threads in its worker).
type Pool struct {
	opts Options
	log  *slog.Logger
	seq  atomic.Uint64

	// Callers polling a reply pipe (see spinner), at most maxSpinning.
	spinning    atomic.Int32
	maxSpinning int32

	interpMu  sync.Mutex
	interpExe string
	compiled  []byte // the worker program compiled by the interpreter

	mu     sync.Mutex
	closed bool
	groups map[groupKey]*group
	procs  map[*proc]struct{}
	reaper chan struct{} // closed by Close; nil until a reaper runs
}

// groupKey identifies the workers of one library in one workspace.
type groupKey struct {
	workspace string
	path      string
	code      string // hash of Library.Code, "" for files
}

// group holds the worker slots of one library in one workspace.
type group struct {
	key       groupKey
	lib       Library
	workspace string
	slots     []*slot

	mu sync.Mutex // serializes picks
	rr int
}

// slot is one worker position of a group: at most one live process.
type slot struct {
	g        *group
	inflight atomic.Int64

	mu    sync.Mutex
	cur   *proc
	start *startOp
	reset bool // the previous process died: the next one reports a reset
}

// startOp is a worker start that concurrent callers share.
type startOp struct {
	done chan struct{}
	pr   *proc
	err  error
}

// NewPool returns a pool; opts may be nil. No process starts until the
// first call.
func NewPool(opts *Options) *Pool {
	p := &Pool{groups: make(map[groupKey]*group), procs: make(map[*proc]struct{})}
	if opts != nil {
		p.opts = *opts
	}
	if p.opts.OutputLimit <= 0 {
		p.opts.OutputLimit = defaultOutputLimit
	}
	if p.opts.MaxResultBytes <= 0 {
		p.opts.MaxResultBytes = defaultMaxResult
	}
	if p.opts.CancelGrace <= 0 {
		p.opts.CancelGrace = defaultGrace
	}
	if p.opts.StartTimeout <= 0 {
		p.opts.StartTimeout = defaultStart
	}
	if p.opts.StoppedLimit == 0 {
		p.opts.StoppedLimit = defaultStoppedLimit
	}
	p.log = p.opts.Logger
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.maxSpinning = int32(runtime.GOMAXPROCS(0) - 1)
	return p
}

// Call runs req.Function of req.Library in req.Workspace and returns its raw
// outcome. Tool failures (an exception, a load error, a function that is not
// at module level) are in the Reply; engine failures are errors:
// *TimeoutError, ErrCancelled, *CrashError, *InterpreterError,
// *ProtocolError, *ResultTooLargeError, ErrClosed, ErrInvalidRequest.
// host answers the tool's requests while it runs; nil answers every request
// negatively.
func (p *Pool) Call(ctx context.Context, req *Request, host Host) (*Reply, error) {
	if req == nil || req.Function == "" {
		return nil, fmt.Errorf("%w: no function to call", ErrInvalidRequest)
	}
	h, payload, reset, err := p.run(ctx, "call", req, host)
	if err != nil {
		return nil, err
	}
	r := &Reply{StateReset: reset}
	switch {
	case h.LoadError != nil:
		r.LoadError = h.LoadError
	case h.Exception != nil:
		r.Exception = h.Exception
	case h.NotModuleLevel:
		r.NotModuleLevel = true
	default:
		if len(payload) == 0 {
			return nil, &ProtocolError{Msg: "result without a value"}
		}
		r.Value = json.RawMessage(payload)
		if len(h.Converted) > 0 && string(h.Converted) != "null" {
			r.Converted = h.Converted
		}
	}
	return r, nil
}

// Load loads req.Library in req.Workspace (if its worker has not already)
// and lists its module-level tool_* functions. With Library.Code set this
// executes the code as an in-memory module: dynamic registration. Function,
// Args and Context are ignored.
func (p *Pool) Load(ctx context.Context, req *Request, host Host) (*LoadReply, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: nil request", ErrInvalidRequest)
	}
	r := *req
	r.Function = ""
	h, _, reset, err := p.run(ctx, "load", &r, host)
	if err != nil {
		return nil, err
	}
	return &LoadReply{Functions: h.Functions, LoadError: h.LoadError, StateReset: reset}, nil
}

// run sends one operation to a worker of the request's library.
func (p *Pool) run(ctx context.Context, op string, req *Request, host Host) (*inHeader, []byte, bool, error) {
	req, err := validate(req)
	if err != nil {
		return nil, nil, false, err
	}
	var s *slot
	var pr *proc
	for attempt := 0; ; attempt++ {
		if s, err = p.slotFor(req); err != nil {
			return nil, nil, false, err
		}
		pr, err = p.procFor(ctx, s, req.Function)
		if err == nil {
			break
		}
		s.inflight.Add(-1)
		// A worker the pool stopped in its start-up (Release, Retire:
		// its library changed) never ran this call: the call goes to
		// the library's next worker, as if it had come a moment later.
		var se *StartError
		if !errors.As(err, &se) || se.Err != ErrClosed || attempt >= 3 || ctx.Err() != nil || p.isClosed() {
			return nil, nil, false, err
		}
	}
	reset := pr.resetPending.CompareAndSwap(true, false)
	h, payload, err := pr.call(ctx, op, req, host, func() {
		// The call is over in the worker (for a call that returned on
		// cancel, once it has stopped).
		pr.lastUsed.Store(time.Now().UnixNano())
		s.inflight.Add(-1)
	})
	if err != nil {
		if reset {
			pr.resetPending.Store(true)
		}
		return nil, nil, false, err
	}
	if h.LoadError == nil && h.Internal == nil && !h.Cancelled {
		pr.loaded.Store(true)
	}
	switch {
	case h.Internal != nil:
		return nil, nil, false, &ProtocolError{Msg: fmt.Sprintf("the worker failed internally: %s: %s", h.Internal.Type, h.Internal.Message)}
	case h.TooLarge > 0:
		return nil, nil, false, &ResultTooLargeError{Size: h.TooLarge, Limit: int64(p.opts.MaxResultBytes)}
	case h.Cancelled:
		return nil, nil, false, fmt.Errorf("%w: the worker cancelled the call", ErrCancelled)
	}
	return h, payload, reset, nil
}

// validate checks a request before it reaches a worker and returns the
// request to send: the same one, or a copy whose JSON fields had invalid
// UTF-8 replaced with U+FFFD, as JSON parsers do (the worker only ever
// reads valid UTF-8, so no argument can end it).
func validate(req *Request) (*Request, error) {
	if !filepath.IsAbs(req.Workspace) {
		return nil, fmt.Errorf("%w: workspace %q is not an absolute path", ErrInvalidRequest, req.Workspace)
	}
	if req.Library.Path == "" {
		return nil, fmt.Errorf("%w: library without a path", ErrInvalidRequest)
	}
	out := req
	for _, f := range []struct {
		name   string
		v      json.RawMessage
		object bool
	}{{"arguments", req.Args, true}, {"tool_context", req.Context, false}, {"config", req.Config, false}} {
		v := f.v
		if len(v) == 0 {
			continue
		}
		if !json.Valid(v) {
			return nil, fmt.Errorf("%w: %s are not valid JSON", ErrInvalidRequest, f.name)
		}
		if f.object && !strings.HasPrefix(strings.TrimLeft(string(v), " \t\r\n"), "{") {
			return nil, fmt.Errorf("%w: %s must be a JSON object", ErrInvalidRequest, f.name)
		}
		if !utf8.Valid(v) {
			if out == req {
				c := *req
				out = &c
			}
			fixed := json.RawMessage(bytes.ToValidUTF8(v, []byte("\uFFFD")))
			switch f.name {
			case "arguments":
				out.Args = fixed
			case "tool_context":
				out.Context = fixed
			default:
				out.Config = fixed
			}
		}
	}
	return out, nil
}

// stem is the library's module stem.
func (l Library) stem() string {
	if l.Stem != "" {
		return l.Stem
	}
	return strings.TrimSuffix(filepath.Base(l.Path), ".py")
}

func (p *Pool) slotFor(req *Request) (*slot, error) {
	key := groupKey{workspace: filepath.Clean(req.Workspace), path: req.Library.Path}
	if req.Library.Code != "" {
		sum := sha256.Sum256([]byte(req.Library.Code))
		key.code = string(sum[:])
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	g := p.groups[key]
	if g == nil {
		n := 1
		if p.opts.Processes != nil {
			n = min(max(p.opts.Processes(req.Library), 1), maxProcesses)
		}
		g = &group{key: key, lib: req.Library, workspace: key.workspace}
		for range n {
			g.slots = append(g.slots, &slot{g: g})
		}
		p.groups[key] = g
	}
	p.mu.Unlock()
	return g.pick(), nil
}

// pick returns the least busy slot, preferring one with a live process, and
// rotating among equals; it counts the caller in the slot's load.
func (g *group) pick() *slot {
	if len(g.slots) == 1 {
		g.slots[0].inflight.Add(1)
		return g.slots[0]
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rr++
	start := g.rr
	var best *slot
	var bestLoad int64
	var bestLive bool
	for i := range g.slots {
		s := g.slots[(start+i)%len(g.slots)]
		load := s.inflight.Load()
		s.mu.Lock()
		live := s.cur != nil
		s.mu.Unlock()
		if best == nil || load < bestLoad || (load == bestLoad && live && !bestLive) {
			best, bestLoad, bestLive = s, load, live
		}
	}
	best.inflight.Add(1)
	return best
}

// procFor returns the slot's live process, starting one if needed.
func (p *Pool) procFor(ctx context.Context, s *slot, fn string) (*proc, error) {
	s.mu.Lock()
	if pr := s.cur; pr != nil {
		if !pr.isDead() && !pr.doomed.Load() {
			s.mu.Unlock()
			return pr, nil
		}
		// Dead or being killed, but its monitor has not told the slot yet.
		s.cur = nil
		if !pr.closing.Load() {
			s.reset = true
		}
	}
	op := s.start
	if op == nil {
		// Start in the background: a caller that gives up does not abort
		// the start that others may be waiting for.
		op = &startOp{done: make(chan struct{})}
		s.start = op
		reset := s.reset
		go func() {
			pr, err := p.spawn(s.g, s)
			s.mu.Lock()
			s.start = nil
			if err == nil {
				s.cur = pr
				if reset {
					pr.resetPending.Store(true)
					s.reset = false
				}
			}
			op.pr, op.err = pr, err
			s.mu.Unlock()
			if err == nil && p.opts.OnProcess != nil {
				p.opts.OnProcess(ProcessEvent{Started: true, Restart: reset, Library: s.g.lib.Path,
					Workspace: s.g.workspace, PID: int(pr.wpid.Load())})
			}
			close(op.done)
		}()
	}
	s.mu.Unlock()
	select {
	case <-op.done:
		return op.pr, op.err
	case <-ctx.Done():
		return nil, ctxError(ctx, fn, 0)
	}
}

// died records that pr is gone; crashed says whether the death was not the
// pool's doing, so the next process reports a state reset.
func (s *slot) died(pr *proc, crashed bool) {
	s.mu.Lock()
	if s.cur == pr {
		s.cur = nil
		if crashed {
			s.reset = true
		}
	}
	s.mu.Unlock()
}

// isClosed reports whether Close was called.
func (p *Pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *Pool) addProc(pr *proc) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.procs[pr] = struct{}{}
	if p.opts.IdleTimeout > 0 && p.reaper == nil {
		p.reaper = make(chan struct{})
		go p.reapIdle(p.reaper)
	}
	return true
}

// reapIdle stops workers that have been idle for Options.IdleTimeout.
func (p *Pool) reapIdle(stop chan struct{}) {
	tick := time.NewTicker(max(p.opts.IdleTimeout/4, 50*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		cutoff := time.Now().Add(-p.opts.IdleTimeout).UnixNano()
		for _, pr := range p.liveProcs(nil) {
			s := pr.slot
			s.mu.Lock()
			idle := s.cur == pr && s.inflight.Load() == 0 && pr.lastUsed.Load() < cutoff
			if idle {
				s.cur = nil
				pr.closing.Store(true)
			}
			s.mu.Unlock()
			if idle {
				p.log.Debug("stopping idle worker", "library", pr.lib.Path, "workspace", pr.workspace)
				go pr.shutdown()
			}
		}
	}
}

func (p *Pool) removeProc(pr *proc) {
	p.mu.Lock()
	delete(p.procs, pr)
	p.mu.Unlock()
}

// SetHandlers tells the live workers that the host's handlers changed: the
// loaded modules get their set_confirm_handler / set_user_interaction_handler
// hooks called again (or _CONFIRM_HANDLER / _USER_INTERACTION_HANDLER set),
// with a proxy, or None for a handler that is gone. Later calls carry their
// own Request.Handlers, which have the same effect when they differ.
func (p *Pool) SetHandlers(confirm, interact bool) {
	frame := appendFrame(nil, []byte(fmt.Sprintf(`{"type":"handlers","confirm":%t,"interact":%t}`, confirm, interact)))
	for _, pr := range p.liveProcs(nil) {
		pr.sendAsync(frame)
	}
}

// Release stops the workers of the library at lib.Path in every workspace
// (and every code variant); the next call starts afresh without reporting a
// state reset. Use it when a library is unregistered or changed on disk.
func (p *Pool) Release(lib Library) {
	p.mu.Lock()
	for k := range p.groups {
		if k.path == lib.Path {
			delete(p.groups, k)
		}
	}
	p.mu.Unlock()
	p.shutdownAll(p.liveProcs(func(pr *proc) bool { return pr.lib.Path == lib.Path }))
}

// Retire makes the next calls of lib start a fresh worker, as Release
// does, but lets the calls in flight on its current workers finish there:
// each of those workers stops once it has no call left (a reload lets
// every call run the code it began with).
func (p *Pool) Retire(lib Library) {
	p.mu.Lock()
	for k := range p.groups {
		if k.path == lib.Path {
			delete(p.groups, k)
		}
	}
	p.mu.Unlock()
	for _, pr := range p.liveProcs(func(pr *proc) bool { return pr.lib.Path == lib.Path }) {
		go pr.retire()
	}
}

// retire stops the proc once no call is in flight on it or on its way to
// it (counted in its slot from the pick on: the call that started a proc
// still in its handshake, too). Its slot is no longer in its pool's
// groups, so no new call comes.
func (pr *proc) retire() {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		pr.mu.Lock()
		busy := len(pr.calls) > 0 || pr.slot != nil && pr.slot.inflight.Load() > 0
		pr.mu.Unlock()
		if !busy {
			pr.shutdown()
			return
		}
		select {
		case <-pr.dead:
			return
		case <-t.C:
		}
	}
}

func (p *Pool) liveProcs(keep func(*proc) bool) []*proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*proc
	for pr := range p.procs {
		if keep == nil || keep(pr) {
			out = append(out, pr)
		}
	}
	return out
}

// Close stops every worker, in bounded time (a few seconds at worst), and
// kills everything the tools started. Calls in flight get ErrClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	if p.reaper != nil {
		close(p.reaper)
	}
	procs := make([]*proc, 0, len(p.procs))
	for pr := range p.procs {
		procs = append(procs, pr)
	}
	p.groups = nil
	p.mu.Unlock()
	p.shutdownAll(procs)
	return nil
}

func (p *Pool) shutdownAll(procs []*proc) {
	var wg sync.WaitGroup
	for _, pr := range procs {
		wg.Go(pr.shutdown)
	}
	wg.Wait()
}

// ctxError maps a finished context to the pool's errors.
func ctxError(ctx context.Context, fn string, limit time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{Function: fn, Timeout: limit}
	}
	return fmt.Errorf("%w: %w", ErrCancelled, ctx.Err())
}
