package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
)

// Per-call events and host requests.

// maxQueuedEvents bounds the events of one call waiting for a slow host;
// more are dropped (and counted).
const maxQueuedEvents = 1024

// logLevels are MCP's logging levels, the ones log_handler accepts.
var logLevels = map[string]bool{"debug": true, "info": true, "notice": true, "warning": true,
	"error": true, "critical": true, "alert": true, "emergency": true}

func validLogLevel(l string) bool { return logLevels[l] }

// event is one output, progress or log event of a call.
type event struct {
	out      *Output
	progress *Progress
	log      *LogRecord
}

// callEvents delivers one call's events to its host, in order, from a
// goroutine of its own, so that a slow host holds up neither the pipe nor
// the other calls.
type callEvents struct {
	mu      sync.Mutex
	queue   []event
	running bool
	drained chan struct{} // closed when the queue empties, for wait
	closed  bool
	lost    int // events dropped because the queue was full
}

// output delivers captured output: to the call's OutputHost, or to
// Options.OnOutput.
func (pr *proc) output(pc *pcall, o Output) {
	o.Library, o.Workspace, o.PID = pr.lib.Path, pr.workspace, int(pr.wpid.Load())
	if _, ok := pc.host.(OutputHost); ok {
		pr.queueEvent(pc, event{out: &o})
		return
	}
	if f := pr.pool.opts.OnOutput; f != nil {
		f(o)
	}
}

// unattributed delivers what was written to the worker's fds 1 and 2.
func (pr *proc) unattributed(stream, data string) {
	if f := pr.pool.opts.OnOutput; f != nil {
		f(Output{Library: pr.lib.Path, Workspace: pr.workspace, Stream: stream, Data: data, PID: int(pr.wpid.Load())})
	}
}

// queueEvent queues an event of pc; pr.rmu is held (only the reader makes
// pc.events).
func (pr *proc) queueEvent(pc *pcall, ev event) {
	q := pc.events.Load()
	if q == nil {
		q = &callEvents{}
		pc.events.Store(q)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if len(q.queue) >= maxQueuedEvents {
		q.lost++
		return
	}
	q.queue = append(q.queue, ev)
	if !q.running {
		q.running = true
		go q.deliver(pc)
	}
}

// deliver hands the queued events to the host until the queue is empty.
func (q *callEvents) deliver(pc *pcall) {
	for {
		q.mu.Lock()
		if len(q.queue) == 0 {
			lost := q.lost
			q.lost = 0
			if lost == 0 {
				q.running = false
				if q.drained != nil {
					close(q.drained)
					q.drained = nil
				}
				q.mu.Unlock()
				return
			}
			q.mu.Unlock()
			if lh, ok := pc.host.(LogHost); ok {
				lh.Log(pc.ctx, LogRecord{Level: "warning",
					Message: fmt.Sprintf("lcp: %d events of this call were dropped: the host did not keep up", lost)})
			}
			continue
		}
		ev := q.queue[0]
		q.queue[0] = event{}
		q.queue = q.queue[1:]
		q.mu.Unlock()
		switch {
		case ev.out != nil:
			pc.host.(OutputHost).Output(*ev.out)
		case ev.progress != nil:
			pc.host.(ProgressHost).Progress(pc.ctx, *ev.progress)
		case ev.log != nil:
			pc.host.(LogHost).Log(pc.ctx, *ev.log)
		}
	}
}

// wait waits until the queued events are delivered (or ctx ends); later
// events are dropped.
func (q *callEvents) wait(ctx context.Context) {
	q.mu.Lock()
	if !q.running {
		q.closed = true
		q.mu.Unlock()
		return
	}
	if q.drained == nil {
		q.drained = make(chan struct{})
	}
	ch := q.drained
	q.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
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
	frame := appendFrame(nil, []byte(`{"type":"answer","rid":`+strconv.FormatUint(h.RID, 10)+`,"value":`), answer, []byte("}"))
	_ = pr.sidePipe.write(frame)
}

// answer returns the host's answer to a request as JSON.
func (pr *proc) answer(pc *pcall, h *inHeader, payload []byte) []byte {
	host, ctx := pc.host, pc.ctx
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
	case "service":
		sh, ok := host.(ServiceHost)
		if !ok {
			return marshal(map[string]string{"error": fmt.Sprintf("The host offers no service %q.", h.Name)})
		}
		res, err := sh.Service(ctx, h.Name, validOr(payload, "null"))
		if err != nil {
			return marshal(map[string]string{"error": err.Error()})
		}
		return marshal(map[string]json.RawMessage{"result": validOr(res, "null")})
	}
	return []byte("null")
}
