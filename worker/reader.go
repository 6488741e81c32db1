package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Reading the reply pipe.
//
// Whoever waits reads: a caller waiting for its result reads the reply pipe
// itself (it leads) and dispatches every frame it finds, so that a result
// reaches its caller without a hand-off to another goroutine or thread.
// One call leads at a time; the others wait for their frame or for the
// lead, which passes to one of them when the leader's call ends. When no
// call is in flight a watcher goroutine reads, so that what the worker
// writes between calls (a diagnostic, a fatal error, junk) is seen at once;
// it starts only after the proc has been idle for watchDelay, so that calls
// in quick succession never pay for waking it.
//
// The pipe is read with non-blocking system calls. A leader waits for it
// through Go's network poller, on a duplicate of the pipe registered there
// (leadFile): its goroutine parks and no thread stays in a system call
// while the worker works. A thread blocked in poll(2) would be seen by the
// runtime's monitor (sysmon), which then wakes every 20 µs to take its
// processor away, and the thread has to get one back when the result
// comes: on a server, a fifth of its CPU. A kick wakes a parked leader
// (its context was cancelled, the proc is closing): it counts kicks and
// sets the duplicate's read deadline in the past. Where the duplicate
// cannot be registered, the leader and the watcher wait with poll(2) on the
// pipe and a kick pipe.
//
// A leader first polls the pipe for up to spinBudget before parking (see
// spinner): waking a parked thread costs tens of microseconds on an idle
// virtual CPU, more than a warm call.
//
// The duplicate is registered only while leaders park. Registered, every
// frame the worker writes wakes the runtime's thread that waits in
// epoll_wait for the network poller (there is one whenever a processor is
// idle and anything waits in the poller), on a CPU the worker or the
// polling leader needs: on a two-CPU machine that was a tenth of a warm
// call, and most of its slow tail. So the first leader that parks opens
// it, and a leader whose poll found the result leadIdleHits times in a row
// closes it; leaders that park again open it again.

// watchDelay is how long a proc with no call in flight waits before its
// watcher starts reading.
const watchDelay = 20 * time.Millisecond

// spinBudget bounds how long a leader polls the reply pipe before parking.
const spinBudget = 150 * time.Microsecond

// spinPreempted is the gap between two polls that shows that the poller
// lost its CPU to another thread: the machine is busy, polling only gets in
// the way (a parked thread that wakes is scheduled sooner than one that
// yielded), so it stops, as after a miss.
const spinPreempted = 50 * time.Microsecond

// reader is the reading side of a proc.
type reader struct {
	rfd          int // the reply pipe, non-blocking
	kickR, kickW int

	kickMu     sync.RWMutex // kicks against the closing of the kick pipe
	kickClosed bool

	rmu       sync.Mutex // held while reading and dispatching, never while waiting
	frames    frameReader
	helloSeen bool
	reading   *pcall // the call that pumps (nil: the watcher)
	broken    bool   // a protocol violation was seen: the rest is discarded
	eof       bool

	watchFile *os.File // under mu: the watcher's duplicate of the pipe
	// The leaders' duplicate of the pipe, in the network poller (nil:
	// none now). Set and cleared by the leader under kickMu, which kick
	// holds to move its deadline.
	leadFile *os.File
	leadConn syscall.RawConn
	kicks    atomic.Uint64 // kicks so far
	// The leader's (one at a time): the kicks it has seen, the read
	// deadline set on leadFile (not known after a kick, which moves it),
	// whether the duplicate can be registered at all, and the polls in a
	// row that found the result.
	seenKicks    uint64
	leadDeadline time.Time
	deadlineSet  bool
	noLeadFile   bool
	spinHits     int
	rclosed      atomic.Bool  // set once the pipe is closed for reading
	pollers      atomic.Int32 // goroutines in poll(2) on the pipe
	readerDone   chan struct{}
	readerOnce   sync.Once

	spin spinner
}

// spinner decides whether a leader polls before parking: only while the
// worker's recent calls were short (a moving average of their durations,
// each clipped so that one slow call does not stop spinning for long),
// not for a while after spins that found nothing or lost the CPU, not
// while more threads are runnable than there are CPUs (on a busy machine
// polling only gets in the way), and only while fewer than GOMAXPROCS-1
// callers spin in the pool (the worker needs a CPU meanwhile; on one CPU
// nobody spins). A spinning caller yields its CPU between polls, so that
// it costs little to whoever else needs it.
type spinner struct {
	avg    atomic.Int64 // nanoseconds
	misses atomic.Int32 // spins in a row that found nothing
	skip   atomic.Int32 // calls left that do not spin
}

func (s *spinner) worth() bool {
	if time.Duration(s.avg.Load()) >= spinBudget {
		return false
	}
	if s.skip.Load() > 0 {
		s.skip.Add(-1)
		return false
	}
	return true
}

func (s *spinner) observe(d time.Duration) {
	d = min(d, 4*spinBudget)
	old := s.avg.Load()
	s.avg.Store(old + (int64(d)-old)/4) // a lost update is harmless
}

// spun records whether a spin found the result: after a miss the next 2,
// 4, ... 256 calls park at once.
func (s *spinner) spun(found bool) {
	if found {
		s.misses.Store(0)
		return
	}
	s.skip.Store(1 << min(s.misses.Add(1), 8))
}

// readFor reads the reply pipe for pc: it dispatches what is there, then
// polls for a while if spin is set (and returns), or else parks until the
// pipe is readable, a kick comes or deadline passes. It reports false once
// the pipe has ended.
func (pr *proc) readFor(pc *pcall, deadline time.Time, spin bool) bool {
	if spin || pr.noLeadFile {
		// (A wait in the network poller reads first itself.)
		if !pr.pump(pc) {
			return false
		}
		if len(pc.done) > 0 {
			return true
		}
	}
	if spin {
		if cpuBusy() || !pr.pool.startSpinning() {
			return true // (the caller parks next)
		}
		until := pc.sent.Add(spinBudget)
		if !deadline.IsZero() && deadline.Before(until) {
			until = deadline
		}
		alive, last := true, time.Now()
		for alive && len(pc.done) == 0 {
			now := time.Now()
			if !now.Before(until) || now.Sub(last) > spinPreempted {
				break // nothing came, or the CPU is wanted elsewhere
			}
			last = now
			osYield()
			alive = pr.pump(pc)
		}
		pr.pool.spinning.Add(-1)
		found := len(pc.done) > 0
		pr.spin.spun(found)
		if found {
			if pr.spinHits++; pr.spinHits == leadIdleHits {
				pr.closeLeadFile()
			}
		}
		return alive
	}
	pr.spinHits = 0
	if !pr.noLeadFile {
		if alive, parked := pr.awaitNet(pc, deadline); parked {
			return alive
		}
		// No duplicate: what the pipe holds is read before poll(2) waits.
		if !pr.pump(pc) {
			return false
		}
		if len(pc.done) > 0 {
			return true
		}
	}
	timeout := -1
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return true
		}
		timeout = int((d + time.Millisecond - 1) / time.Millisecond)
	}
	if !pr.waitReadable(timeout) {
		return false
	}
	return pr.pump(pc)
}

// leadIdleHits is how many polls in a row that found the result make a
// leader close the duplicate in the network poller.
const leadIdleHits = 16

// awaitNet reads the pipe for pc until its result came, a kick came, the
// deadline passed or the pipe ended, parked in Go's network poller between
// reads; it opens the duplicate first if needed. It reports whether the
// pipe is alive, and parked false when the duplicate could not be opened:
// the caller then waits with poll(2).
func (pr *proc) awaitNet(pc *pcall, deadline time.Time) (alive, parked bool) {
	pr.pollers.Add(1)
	defer pr.pollers.Add(-1)
	if pr.rclosed.Load() {
		// (Checked after counting this poller: stopReading, which sets
		// rclosed, closes the pipe only once no poller is left, so the pipe
		// stays open while the duplicate is made.)
		return false, true
	}
	if pr.leadConn == nil && !pr.openLeadFile() {
		return true, false
	}
	return pr.awaitLead(pc, deadline), true
}

// awaitLead is awaitNet's wait on an open duplicate.
func (pr *proc) awaitLead(pc *pcall, deadline time.Time) bool {
	seen := pr.seenKicks
	if k := pr.kicks.Load(); k != seen {
		// A kick since the last look: whatever it was for, the caller looks
		// again. It left the deadline in the past.
		pr.seenKicks, pr.deadlineSet = k, false
		return true
	}
	if !pr.deadlineSet || !deadline.Equal(pr.leadDeadline) {
		if err := pr.leadFile.SetReadDeadline(deadline); err != nil {
			return pr.pump(pc)
		}
		pr.leadDeadline, pr.deadlineSet = deadline, true
	}
	alive := true
	err := pr.leadConn.Read(func(uintptr) bool {
		// The pipe is read to its end (or to pc's result) before the
		// goroutine parks: a frame written after that wakes it.
		alive = pr.pump(pc)
		return !alive || len(pc.done) > 0 || pr.kicks.Load() != seen || pr.rclosed.Load()
	})
	if k := pr.kicks.Load(); k != seen {
		pr.seenKicks, pr.deadlineSet = k, false
	}
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		// Not expected (the file is closed only once every reader left):
		// read what is there, the caller looks again.
		return pr.pump(pc)
	}
	return alive && !pr.rclosed.Load()
}

// openLeadFile registers a duplicate of the reply pipe with Go's network
// poller for the leaders' waits, and reports whether it did; the leader
// calls it from awaitNet. Where the poller does not take it, leaders wait
// with poll(2) from then on.
func (pr *proc) openLeadFile() bool {
	fd, err := dupCloexec(pr.rfd)
	if err != nil {
		return false // (no descriptor left, say: try again next time)
	}
	f := os.NewFile(uintptr(fd), "lcp-worker-reply")
	rc, err := f.SyscallConn()
	if err == nil {
		// Fails on a file the poller did not take.
		err = f.SetReadDeadline(time.Time{})
	}
	if err != nil {
		f.Close()
		pr.noLeadFile = true
		return false
	}
	pr.kickMu.Lock()
	if pr.kickClosed {
		pr.kickMu.Unlock()
		f.Close()
		return false
	}
	pr.leadFile, pr.leadConn = f, rc
	pr.deadlineSet = false
	pr.kickMu.Unlock()
	return true
}

// closeLeadFile takes the leaders' duplicate out of the network poller;
// the leader calls it, while it does not wait on it.
func (pr *proc) closeLeadFile() {
	pr.kickMu.Lock()
	f := pr.leadFile
	pr.leadFile, pr.leadConn = nil, nil
	pr.kickMu.Unlock()
	if f != nil {
		f.Close()
	}
}

// startSpinning takes one of the pool's spinning slots.
func (p *Pool) startSpinning() bool {
	if p.spinning.Add(1) > p.maxSpinning {
		p.spinning.Add(-1)
		return false
	}
	return true
}

// watch reads the pipe while no call is in flight, until a call takes the
// lead or the pipe ends. It waits through Go's network poller, on a
// duplicate of the pipe registered only meanwhile, so that an idle worker
// holds no thread; a call that takes the lead stops it with a deadline.
func (pr *proc) watch() {
	defer func() {
		pr.mu.Lock()
		pr.watching = false
		pr.mu.Unlock()
	}()
	f := pr.pollableReply()
	if f == nil {
		// Read what is there, then park in poll(2) until there is more.
		for pr.pump(nil) && pr.stillWatching() && pr.waitReadable(-1) && pr.stillWatching() {
		}
		return
	}
	defer f.Close()
	pr.mu.Lock()
	mine := pr.watching
	if mine {
		pr.watchFile = f
	}
	pr.mu.Unlock()
	if !mine {
		return
	}
	defer func() {
		pr.mu.Lock()
		pr.watchFile = nil
		pr.mu.Unlock()
	}()
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Read(func(uintptr) bool { return !pr.pump(nil) || !pr.stillWatching() })
	}
}

// pollableReply returns a duplicate of the reply pipe that Go's network
// poller can wait for, or nil.
func (pr *proc) pollableReply() *os.File {
	pr.rmu.Lock()
	defer pr.rmu.Unlock()
	if pr.eof {
		return nil
	}
	fd, err := dupCloexec(pr.rfd)
	if err != nil {
		return nil
	}
	// The descriptor is non-blocking (its open file is), so the file is
	// registered with the poller.
	return os.NewFile(uintptr(fd), "lcp-worker-reply")
}

// stopWatcher wakes a watcher parked in the network poller, so that it
// sees that it has to stop.
func stopWatcher(f *os.File) {
	if f != nil {
		_ = f.SetReadDeadline(time.Unix(1, 0))
	}
}

func (pr *proc) stillWatching() bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.watching
}

// scheduleIdleCheck arranges for the watcher to start once the proc has
// been idle for watchDelay; pr.mu is held. One check at a time: calls in
// quick succession cost no timer each.
func (pr *proc) scheduleIdleCheck() {
	if pr.idleCheck || pr.calls == nil {
		return
	}
	pr.idleCheck = true
	gen := pr.started
	time.AfterFunc(watchDelay, func() { pr.checkIdle(gen) })
}

// checkIdle starts the watcher if no call started since generation gen
// and none is in flight.
func (pr *proc) checkIdle(gen uint64) {
	pr.mu.Lock()
	pr.idleCheck = false
	start := false
	switch {
	case pr.calls == nil || pr.lead != nil || pr.watching:
		// Dead, busy (the last call's release checks again) or watched.
	case pr.started != gen:
		pr.scheduleIdleCheck() // calls came and went: wait from now
	default:
		pr.watching, start = true, true
	}
	pr.mu.Unlock()
	if start {
		go pr.watch()
	}
}

// waitReadable parks until the pipe is readable, a kick comes or timeoutMs
// passes (-1: no limit). It reports false once the pipe is closed.
func (pr *proc) waitReadable(timeoutMs int) bool {
	pr.pollers.Add(1)
	defer pr.pollers.Add(-1)
	if pr.rclosed.Load() {
		return false
	}
	// A kick for closing stays in the pipe, so that every poller wakes.
	if pollIn(pr.rfd, pr.kickR, timeoutMs) && !pr.rclosed.Load() {
		drainKicks(pr.kickR)
	}
	return !pr.rclosed.Load()
}

// kick wakes the goroutine parked on the pipe.
func (pr *proc) kick() {
	pr.kickMu.RLock()
	if !pr.kickClosed {
		// Counted first, and whether or not a duplicate is open: a leader
		// that opens one or sets its deadline after this sees the count
		// before it parks.
		pr.kicks.Add(1)
		writeKick(pr.kickW)
		if pr.leadFile != nil {
			_ = pr.leadFile.SetReadDeadline(time.Unix(1, 0))
		}
	}
	pr.kickMu.RUnlock()
}

// pump reads what the pipe holds, without blocking, and dispatches every
// complete frame; self is the call that reads, nil for the watcher. It
// reports false once the pipe has ended.
func (pr *proc) pump(self *pcall) bool {
	pr.rmu.Lock()
	defer pr.rmu.Unlock()
	if pr.eof {
		return false
	}
	pr.reading = self
	for {
		for !pr.broken {
			body, owned, err := pr.frames.next()
			if err != nil {
				pr.violation(frameViolation(err))
				break
			}
			if body == nil {
				break
			}
			pr.dispatch(body, owned)
		}
		if pr.broken {
			// Discard what comes: the worker is being killed.
			pr.frames = frameReader{buf: pr.frames.buf, max: pr.frames.max}
		}
		if self != nil && len(self.done) > 0 {
			// Its result came: what follows is read by the next reader,
			// not by this call before it returns.
			return true
		}
		n, empty, err := readFD(pr.rfd, pr.frames.space())
		if empty {
			return true
		}
		if n > 0 && err == nil {
			pr.frames.advance(n)
			continue
		}
		pr.endReading()
		return false
	}
}

// endReading records the end of the pipe; pr.rmu is held. A worker that
// closed its end but lives on cannot answer any more: it is killed.
func (pr *proc) endReading() {
	pr.eof = true
	pr.readerOnce.Do(func() { close(pr.readerDone) })
	time.AfterFunc(3*time.Second, func() {
		if !pr.isDead() && !pr.closing.Load() {
			pr.kill(CauseProtocol, "it broke the worker protocol: it closed its reply pipe (fd 4) but kept running")
		}
	})
}

// stopReading closes the pipe for reading once every reader has left it.
func (pr *proc) stopReading() {
	pr.rclosed.Store(true)
	for pr.pollers.Load() > 0 {
		pr.kick()
		time.Sleep(time.Millisecond)
	}
	pr.rmu.Lock()
	if !pr.eof {
		pr.eof = true
		pr.readerOnce.Do(func() { close(pr.readerDone) })
	}
	closeFD(pr.rfd)
	pr.rmu.Unlock()
	pr.mu.Lock()
	f := pr.watchFile
	pr.mu.Unlock()
	stopWatcher(f)
	pr.kickMu.Lock()
	pr.kickClosed = true
	closeFD(pr.kickR)
	closeFD(pr.kickW)
	if pr.leadFile != nil {
		pr.leadFile.Close()
	}
	pr.kickMu.Unlock()
}

// frameViolation words a framing error.
func frameViolation(err error) string {
	hint := ""
	if errors.Is(err, errNotAFrame) || errors.Is(err, errChecksum) {
		hint = " (did a tool write into the protocol pipe, fd 4?)"
	}
	return "it sent " + err.Error() + hint
}

// violation kills a worker that broke the protocol; pr.rmu is held.
func (pr *proc) violation(what string) {
	pr.broken = true
	pr.kill(CauseProtocol, "it broke the worker protocol: "+what)
}

// dispatch handles one frame from the worker; pr.rmu is held. A body that
// is not owned must be copied to be kept.
func (pr *proc) dispatch(body []byte, owned bool) {
	hb, payload := splitBody(body)
	h, err := parseHeader(hb)
	if err != nil {
		pr.violation("it sent an invalid frame header: " + err.Error())
		return
	}
	if !pr.helloSeen {
		if h.Type != "hello" {
			pr.violation(fmt.Sprintf("its first frame was %q, not a hello", h.Type))
			return
		}
		pr.helloSeen = true
		pr.hello <- h
		return
	}
	keep := func() []byte {
		if owned || payload == nil {
			return payload
		}
		return append([]byte(nil), payload...)
	}
	switch h.Type {
	case "result":
		pc := pr.takeCall(h.ID)
		if pc == nil {
			pr.violation(fmt.Sprintf("it sent a result for call %d, which is not in flight", h.ID))
			return
		}
		pc.done <- frameIn{h, keep()}
		pr.wakeLeader(pc)
	case "output", "progress", "log", "request":
		pc := pr.liveCall(h.ID)
		if pc == nil {
			pr.violation(fmt.Sprintf("it sent a %s frame for call %d, which is not in flight", h.Type, h.ID))
			return
		}
		if err := pr.callFrame(pc, h, payload, keep); err != nil {
			pr.violation(fmt.Sprintf("it sent a %s frame that cannot be read: %v", h.Type, err))
		}
	case "diag":
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
	case "hello":
		pr.violation("it sent a second hello")
	default:
		pr.violation(fmt.Sprintf("it sent a frame of unknown type %q", h.Type))
	}
}

// wakeLeader kicks pc if it leads: when someone else read its result (the
// watcher, before it saw that pc took the lead), pc may be parked in
// poll(2) with nothing left to read.
func (pr *proc) wakeLeader(pc *pcall) {
	if pr.reading != pc && pr.leads(pc) {
		pr.kick()
	}
}

// callFrame handles a frame that belongs to a call in flight.
func (pr *proc) callFrame(pc *pcall, h *inHeader, payload []byte, keep func() []byte) error {
	switch h.Type {
	case "output":
		if h.Stream != "stdout" && h.Stream != "stderr" {
			return fmt.Errorf("unknown stream %q", h.Stream)
		}
		pr.output(pc, Output{CallID: pc.callID, Stream: h.Stream, Data: string(payload), Dropped: h.Dropped})
	case "progress":
		var p struct {
			Progress *float64 `json:"progress"`
			Total    *float64 `json:"total"`
			Message  string   `json:"message"`
		}
		if err := json.Unmarshal(payload, &p); err != nil {
			return err
		}
		if p.Progress == nil {
			return errors.New("no progress value")
		}
		if _, ok := pc.host.(ProgressHost); ok {
			pr.queueEvent(pc, event{progress: &Progress{Progress: *p.Progress, Total: p.Total, Message: p.Message}})
		}
	case "log":
		var records []LogRecord
		if err := json.Unmarshal(payload, &records); err != nil {
			return err
		}
		for _, r := range records {
			if !validLogLevel(r.Level) {
				return fmt.Errorf("unknown log level %q", r.Level)
			}
		}
		if _, ok := pc.host.(LogHost); ok {
			for i := range records {
				pr.queueEvent(pc, event{log: &records[i]})
			}
		}
	case "request":
		go pr.serveRequest(pc, h, keep())
	}
	return nil
}
