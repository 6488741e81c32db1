package binding

import (
	"context"
	"sort"
	"sync"

	"github.com/lcptools/lcp/tool"
)

// promptCache keeps what the prompt functions returned, per library file:
// an MCP client lists the tools again and again, and running every
// tool_<name>_prompt each time made each listing as slow as the slowest
// prompt. A result stays until its file changes (Reload, the watcher) or
// the host asks for a refresh (RefreshPrompts). A failure is cached too,
// with its one diagnostic; a run cut short by the caller's context is not.
type promptCache struct {
	mu   sync.Mutex
	seq  uint64
	runs map[promptKey]*promptRun
}

// promptKey names one prompt function of one library file.
type promptKey struct{ path, fn string }

// promptRun is one run of a prompt function, shared by concurrent
// listings; done is closed when text and diag are set.
type promptRun struct {
	done chan struct{}
	seq  uint64 // orders the diagnostics
	text string
	err  error
	diag *tool.Diagnostic
}

// get returns the cached result of key, running it with run first when
// there is none. fail builds the diagnostic of a failure.
func (c *promptCache) get(ctx context.Context, key promptKey, run func(context.Context) (string, error), fail func(error) tool.Diagnostic) (string, error) {
	for {
		c.mu.Lock()
		if c.runs == nil {
			c.runs = map[promptKey]*promptRun{}
		}
		r, ok := c.runs[key]
		if !ok {
			c.seq++
			r = &promptRun{done: make(chan struct{}), seq: c.seq}
			c.runs[key] = r
			c.mu.Unlock()
			r.text, r.err = run(ctx)
			if r.err != nil && ctx.Err() != nil {
				// The caller gave up: nothing is known about the
				// function, so the next listing runs it again.
				c.mu.Lock()
				if c.runs[key] == r {
					delete(c.runs, key)
				}
				c.mu.Unlock()
				close(r.done)
				return "", r.err
			}
			if r.err != nil {
				d := fail(r.err)
				r.diag = &d
			}
			close(r.done)
			return r.text, r.err
		}
		c.mu.Unlock()
		select {
		case <-r.done:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if r.err != nil && r.diag == nil {
			continue // that run was cut short: try again
		}
		return r.text, r.err
	}
}

// invalidate forgets the results of the given library files (all of them
// with no path given).
func (c *promptCache) invalidate(paths ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(paths) == 0 {
		c.runs = nil
		return
	}
	drop := make(map[string]bool, len(paths))
	for _, p := range paths {
		drop[p] = true
	}
	for k := range c.runs {
		if drop[k.path] {
			delete(c.runs, k)
		}
	}
}

// diagnostics returns the diagnostics of the cached failures, each once,
// in the order the functions first ran.
func (c *promptCache) diagnostics() []tool.Diagnostic {
	c.mu.Lock()
	runs := make([]*promptRun, 0, len(c.runs))
	for _, r := range c.runs {
		runs = append(runs, r)
	}
	c.mu.Unlock()
	sort.Slice(runs, func(i, j int) bool { return runs[i].seq < runs[j].seq })
	var out []tool.Diagnostic
	for _, r := range runs {
		select {
		case <-r.done:
			if r.diag != nil {
				out = append(out, *r.diag)
			}
		default:
		}
	}
	return out
}
