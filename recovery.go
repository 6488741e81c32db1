package lcp

import (
	"log/slog"
	"os"

	"github.com/lcptools/lcp/sandbox"
)

// recoverWorkspace completes or removes what dead lcp processes left
// unfinished in the engine's workspace (an interrupted apply of a change
// set, staging folders, copy-on-write layers) before the engine runs
// anything there, and logs what it did.
func (e *Engine) recoverWorkspace() {
	ws := e.cfg.Workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	if ws == "" {
		return
	}
	r, err := sandbox.Recover(ws)
	e.recovery = r
	log := e.cfg.Logger
	if log == nil {
		return
	}
	for _, s := range r.Completed {
		log.Info("lcp: recovery", slog.String("did", s))
	}
	for _, s := range r.Removed {
		log.Info("lcp: recovery removed a dead run's leftovers", slog.String("path", s))
	}
	if err != nil {
		log.Warn("lcp: recovery of the workspace failed", slog.String("workspace", ws), slog.Any("error", err))
	}
}

// Recovery says what the engine's start completed or removed in its
// workspace for lcp processes that had died (nil when it did not look).
func (e *Engine) Recovery() *sandbox.Recovery { return e.recovery }
