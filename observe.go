package lcp

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
)

// CallReport tells Config.OnCall about a call of the engine's inventory:
// once when it starts (Ended false) and once when it ends, with its
// status. Metrics and structured logs are built on it.
type CallReport struct {
	Tool   string
	CallID string
	// Ended is false for the start of the call, true for its end.
	Ended bool
	// Status is the LCP status code of the outcome (200, 500 for a tool
	// failure or a crash, 400, 404, 499 cancelled, 504 timed out), and
	// Err the engine error when there was one.
	Status int
	Err    error
	// Duration is how long the call ran, asking included.
	Duration time.Duration
	// Nested marks a call a tool made into the inventory.
	Nested bool
}

// WorkerEvent is a Python worker process starting or ending, as
// Config.OnWorker sees it (see worker.ProcessEvent).
type WorkerEvent = worker.ProcessEvent

// observed reports the start and end of each call of a handler to
// Config.OnCall.
type observed struct {
	tool.Handler
	name   string
	report func(CallReport)
	start  time.Time
	id     string
	nested bool
	done   atomic.Bool
}

func (h *observed) Invoke(ctx context.Context, inv tool.Invocation) (tool.Step, error) {
	if inv.CallID == "" {
		// Chosen here, so that the start and the end name the same call.
		inv.CallID = tool.NewID()
	}
	h.start, h.id, h.nested = time.Now(), inv.CallID, inv.Parent != nil
	h.report(CallReport{Tool: h.name, CallID: h.id, Nested: h.nested})
	step, err := h.Handler.Invoke(ctx, inv)
	h.after(step, err)
	return step, err
}

func (h *observed) Respond(ctx context.Context, resp tool.Response) (tool.Step, error) {
	step, err := h.Handler.Respond(ctx, resp)
	h.after(step, err)
	return step, err
}

func (h *observed) Cancel(reason string) error {
	err := h.Handler.Cancel(reason)
	if !h.start.IsZero() {
		h.end(499, &tool.CancelledError{Tool: h.name, Reason: reason})
	}
	return err
}

// after reports the end of the call when step or err ends it.
func (h *observed) after(step tool.Step, err error) {
	switch {
	case err != nil:
		h.end(tool.ErrorResult(err).StatusCode, err)
	case step.Result != nil:
		h.end(step.Result.StatusCode, nil)
	}
}

func (h *observed) end(status int, err error) {
	if !h.done.CompareAndSwap(false, true) {
		return
	}
	h.report(CallReport{Tool: h.name, CallID: h.id, Ended: true, Status: status, Err: err,
		Duration: time.Since(h.start), Nested: h.nested})
}
