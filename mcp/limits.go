package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The defaults of the limits a server puts on what clients make it hold.
// A shared server must stay within a bounded memory whatever its clients
// send; these are generous for agents and small for an attacker.
const (
	// DefaultMaxCalls caps the calls running at once, all clients together.
	DefaultMaxCalls = 64
	// DefaultMaxCallsPerSession caps the calls one session runs at once.
	DefaultMaxCallsPerSession = 16
	// DefaultMaxResultBytes caps the size of a result sent to a client;
	// a longer text is cut and says how much is missing.
	DefaultMaxResultBytes = 1 << 20
	// DefaultMaxSessions caps the HTTP sessions a server keeps.
	DefaultMaxSessions = 1000
	// DefaultSessionTimeout closes HTTP sessions idle for this long.
	DefaultSessionTimeout = 10 * time.Minute
	// DefaultMaxBatch caps the messages of a JSON-RPC batch (protocol
	// revisions before 2025-06-18, the last that allowed batches).
	DefaultMaxBatch = 16
	// DefaultMaxBatchBytes caps the size of a JSON-RPC batch.
	DefaultMaxBatchBytes = 1 << 20
	// DefaultMaxInflightBytes caps the request bodies being served at once.
	DefaultMaxInflightBytes = 16 << 20
	// DefaultDrainTimeout is how long a stopping server lets calls in
	// flight finish.
	DefaultDrainTimeout = 30 * time.Second
)

// JSON-RPC error codes of lcp's limits (in the range JSON-RPC leaves to
// servers). Over HTTP they come with status 429 and 503, so that a client
// or a load balancer can tell them apart without reading the body.
const (
	// CodeServerBusy: a limit on calls in flight is reached; try again
	// when one has finished (HTTP 429).
	CodeServerBusy = -32029
	// CodeUnavailable: the server is stopping or holds as many sessions as
	// it may; another replica may serve the request (HTTP 503).
	CodeUnavailable = -32053
)

// ErrDraining is the cause of requests refused because the server is
// stopping.
var ErrDraining = errors.New("the server is shutting down")

// BusyError is a call refused because a limit on calls in flight is
// reached.
type BusyError struct {
	// Limit is the limit reached; Session says whether it is the
	// session's own (else the server's).
	Limit   int
	Session bool
}

func (e *BusyError) Error() string {
	if e.Session {
		return fmt.Sprintf("this session already runs %d calls, its limit: wait for one to finish", e.Limit)
	}
	return fmt.Sprintf("the server already runs %d calls, its limit: try again shortly", e.Limit)
}

// rpcError is the JSON-RPC form of a limit's error.
func rpcError(err error) *jsonrpc.Error {
	var busy *BusyError
	switch {
	case errors.As(err, &busy):
		return &jsonrpc.Error{Code: CodeServerBusy, Message: err.Error()}
	case errors.Is(err, ErrDraining):
		return &jsonrpc.Error{Code: CodeUnavailable, Message: err.Error() + ": try again (another replica may serve you)"}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// callLimiter counts the calls in flight, in total and per session. A
// limit of zero or less means none.
type callLimiter struct {
	max, perSession int

	mu        sync.Mutex
	total     int
	bySession map[*sdk.ServerSession]int
	draining  bool
	idle      chan struct{} // closed when total falls to zero while draining
}

func newCallLimiter(max, perSession int) *callLimiter {
	return &callLimiter{max: max, perSession: perSession, bySession: map[*sdk.ServerSession]int{}}
}

// check reports why a call of ss would be refused now, or nil.
func (l *callLimiter) check(ss *sdk.ServerSession) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checkLocked(ss)
}

func (l *callLimiter) checkLocked(ss *sdk.ServerSession) error {
	switch {
	case l.draining:
		return ErrDraining
	case l.max > 0 && l.total >= l.max:
		return &BusyError{Limit: l.max}
	case l.perSession > 0 && ss != nil && l.bySession[ss] >= l.perSession:
		return &BusyError{Limit: l.perSession, Session: true}
	}
	return nil
}

// acquire counts a call of ss in, or says why it may not run.
func (l *callLimiter) acquire(ss *sdk.ServerSession) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkLocked(ss); err != nil {
		return err
	}
	l.total++
	if ss != nil {
		l.bySession[ss]++
	}
	return nil
}

func (l *callLimiter) release(ss *sdk.ServerSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if ss != nil {
		if n := l.bySession[ss] - 1; n > 0 {
			l.bySession[ss] = n
		} else {
			delete(l.bySession, ss)
		}
	}
	if l.total == 0 && l.idle != nil {
		close(l.idle)
		l.idle = nil
	}
}

// drain refuses later calls and returns a channel closed once no call is
// in flight.
func (l *callLimiter) drain() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.draining = true
	done := make(chan struct{})
	if l.total == 0 {
		close(done)
		return done
	}
	if l.idle == nil {
		l.idle = make(chan struct{})
	}
	return l.idle
}

func (l *callLimiter) inFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// sessionTable keeps the server's stateful HTTP sessions: their protocol
// revision (batches are refused from 2025-06-18 on, even without the
// protocol header), their last activity (to make room when the server is
// full) and a count of session slots reserved by requests creating one.
type sessionTable struct {
	mu       sync.Mutex
	byID     map[string]*sessionEntry
	reserved int
}

type sessionEntry struct {
	ss       *sdk.ServerSession
	version  string
	lastSeen atomic.Int64 // unix nanoseconds
	active   atomic.Int32 // POST requests being served
}

func (t *sessionTable) add(ss *sdk.ServerSession, version string) {
	id := ss.ID()
	if id == "" {
		return // a one-request session (stateless)
	}
	e := &sessionEntry{ss: ss, version: version}
	e.lastSeen.Store(time.Now().UnixNano())
	t.mu.Lock()
	if t.byID == nil {
		t.byID = map[string]*sessionEntry{}
	}
	t.byID[id] = e
	t.mu.Unlock()
	go func() {
		_ = ss.Wait()
		t.mu.Lock()
		if t.byID[id] == e {
			delete(t.byID, id)
		}
		t.mu.Unlock()
	}()
}

func (t *sessionTable) get(id string) *sessionEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

// enter returns the session id, marked as serving a request (active)
// until the caller lowers its count; nil when there is none.
func (t *sessionTable) enter(id string) *sessionEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.byID[id]
	if e != nil {
		e.active.Add(1)
		e.lastSeen.Store(time.Now().UnixNano())
	}
	return e
}

func (t *sessionTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}

// reserve takes a slot for a session about to be created, making room by
// closing the session idle the longest when the table is full, however
// briefly it has been idle, so that clients opening sessions cannot lock
// others out. Only a session serving a request is never closed: false
// when every session is serving one (which the limits on calls in flight
// make rare). max <= 0: no limit.
func (t *sessionTable) reserve(max int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if max <= 0 || len(t.byID)+t.reserved < max {
		t.reserved++
		return true
	}
	var oldest *sessionEntry
	var oldestID string
	for id, e := range t.byID {
		if e.active.Load() > 0 {
			continue
		}
		if oldest == nil || e.lastSeen.Load() < oldest.lastSeen.Load() {
			oldest, oldestID = e, id
		}
	}
	if oldest == nil {
		return false
	}
	delete(t.byID, oldestID)
	t.reserved++
	go oldest.ss.Close()
	return true
}

func (t *sessionTable) unreserve() {
	t.mu.Lock()
	t.reserved--
	t.mu.Unlock()
}

// writeRPCError answers an HTTP request with a JSON-RPC error: the status
// tells proxies and clients what happened, the body tells the client's
// MCP library (which reads the JSON-RPC error of a refused request).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *jsonrpc.Error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		h.Set("Retry-After", strconv.Itoa(1))
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// capResult bounds the size of a result sent to a client to about max
// bytes: text blocks share what is left, each cut with a note of what is
// missing; binary content and structured content that do not fit are
// left out, and the note says so. max <= 0: no limit.
func capResult(res *sdk.CallToolResult, limit int) *sdk.CallToolResult {
	if limit <= 0 {
		return res
	}
	size := 0
	for _, c := range res.Content {
		size += contentSize(c)
	}
	if sc, ok := res.StructuredContent.(json.RawMessage); ok {
		size += len(sc)
	}
	if size <= limit {
		return res
	}
	budget := limit
	var notes []string
	out := &sdk.CallToolResult{IsError: res.IsError, Meta: res.Meta} // the notes of _meta are short
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			if len(c.Text) <= budget {
				out.Content = append(out.Content, c)
				budget -= len(c.Text)
				continue
			}
			keep := cutUTF8(c.Text, max(budget, 0))
			budget -= len(keep)
			out.Content = append(out.Content, &sdk.TextContent{Text: keep + fmt.Sprintf("\n… (%d more bytes not shown: the result exceeds the server's limit of %d bytes)", len(c.Text)-len(keep), limit)})
		default:
			n := contentSize(c)
			if n <= budget {
				out.Content = append(out.Content, c)
				budget -= n
				continue
			}
			notes = append(notes, fmt.Sprintf("a %d-byte content block", n))
		}
	}
	if res.StructuredContent != nil {
		notes = append(notes, "the structured content")
	}
	if len(notes) > 0 {
		out.Content = append(out.Content, &sdk.TextContent{Text: fmt.Sprintf("(Not shown, over the server's limit of %d bytes: %s.)", limit, strings.Join(notes, ", "))})
	}
	return out
}

func contentSize(c sdk.Content) int {
	switch c := c.(type) {
	case *sdk.TextContent:
		return len(c.Text)
	case *sdk.ImageContent:
		return len(c.Data)
	case *sdk.AudioContent:
		return len(c.Data)
	case *sdk.EmbeddedResource:
		if c.Resource != nil {
			return len(c.Resource.Blob) + len(c.Resource.Text)
		}
	}
	return 64
}

func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// byteBudget bounds the bytes held at once by requests being served.
type byteBudget struct {
	mu    sync.Mutex
	limit int64 // <= 0: none
	used  int64
}

func (b *byteBudget) setLimit(n int64) {
	b.mu.Lock()
	b.limit = n
	b.mu.Unlock()
}

// acquire takes n bytes of the budget; a request larger than the whole
// budget may still run alone.
func (b *byteBudget) acquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit > 0 && b.used > 0 && b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

func (b *byteBudget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}
