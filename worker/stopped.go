package worker

import (
	"fmt"
	"time"
)

// watchStopped kills the worker when it stays stopped (isStopped) for
// limit while calls are in flight on it: a stopped worker answers nothing,
// and its calls would wait for their time limits, or for ever without
// one. It looks every tenth of limit (at most every 2 s) until the worker
// dies.
func (pr *proc) watchStopped(limit time.Duration) {
	// A tenth of the limit, within [10ms, 2s]: a tiny limit must not
	// make a ticker of zero (which panics) or spin.
	every := max(min(limit/10, 2*time.Second), 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	var since time.Time // when the worker was first seen stopped; zero: running
	for {
		select {
		case <-pr.dead:
			return
		case now := <-t.C:
			pr.mu.Lock()
			busy := len(pr.calls) > 0
			pr.mu.Unlock()
			wpid := int(pr.wpid.Load())
			if !busy || wpid <= 0 || !isStopped(wpid) {
				since = time.Time{}
				continue
			}
			if since.IsZero() {
				since = now
				continue
			}
			if now.Sub(since) >= limit {
				pr.pool.log.Warn("killing a stopped worker", "library", pr.lib.Path, "pid", wpid, "stopped_for", now.Sub(since).Round(time.Millisecond))
				pr.kill(CauseKilled, fmt.Sprintf("the engine killed it because it was stopped (SIGSTOP, or a debugger) for over %s while calls waited for it", limit))
				return
			}
		}
	}
}
