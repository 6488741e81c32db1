package discover

import (
	"sync"

	"github.com/lcptools/lcp/pysrc"
)

// Cache remembers the files discoveries read, by absolute path, for
// hosts that read the same folders again when they change (hot reload):
// a file whose content is the same is not parsed again, and a file that
// no longer reads — a syntax error, a half-written or non-UTF-8 file, an
// unreadable one — gives the tools of its last good version (one that
// parsed without a syntax error) with a diagnostic, instead of the lossy
// fallback's. A file read for the first time follows SPEC §4 as usual.
// The zero Cache is ready to use; it is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	files map[cacheKey]*cached
}

type cacheKey struct {
	path    string
	precise bool
}

type cached struct {
	sum  Sum
	pf   *pysrc.File
	good *cached // the last version without syntax errors
}

// lookup returns the cached parse of path when its content is sum.
func (c *Cache) lookup(path string, sum Sum, precise bool) *pysrc.File {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.files[cacheKey{path, precise}]; e != nil && e.sum == sum {
		return e.pf
	}
	return nil
}

// good returns the last good version of path, nil when there is none.
func (c *Cache) good(path string, precise bool) *cached {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.files[cacheKey{path, precise}]; e != nil {
		return e.good
	}
	return nil
}

// store records the parse of path's content sum.
func (c *Cache) store(path string, sum Sum, precise bool, pf *pysrc.File) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil {
		c.files = map[cacheKey]*cached{}
	}
	k := cacheKey{path, precise}
	e := &cached{sum: sum, pf: pf}
	if pf.SyntaxErrors == nil {
		e.good = e
	} else if old := c.files[k]; old != nil {
		e.good = old.good
	}
	c.files[k] = e
}

// Forget drops what the cache knows of the files for which drop is true
// (every file when drop is nil): a file read again starts afresh.
func (c *Cache) Forget(drop func(path string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.files {
		if drop == nil || drop(k.path) {
			delete(c.files, k)
		}
	}
}
