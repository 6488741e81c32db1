package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/lcptools/lcp/hitl"
)

// EventType says what an Event of the page's stream is about.
type EventType string

// The events of the page's stream (GET /api/events).
const (
	// EventRequest: a step in the life of a confirmation or question, or
	// an always approval granted or revoked (Request).
	EventRequest EventType = "request"
	// EventCall: a call started or finished (Call).
	EventCall EventType = "call"
	// EventOutput: text a tool printed, or a log record of it (Output).
	EventOutput EventType = "output"
	// EventProgress: how far a running call has got (Progress).
	EventProgress EventType = "progress"
	// EventResync: events were lost on the way; the page must re-read
	// GET /api/state.
	EventResync EventType = "resync"
	// EventTools: the inventory changed (its tool files were edited, with
	// lcp serve --watch); the page lists the tools again. Tools says what
	// changed, for the log.
	EventTools EventType = "tools"
)

// Event is one entry of the page's event stream and log. Secrets never
// appear: request events are the broker's, whose secret answers are
// masked, and call events carry no answers.
type Event struct {
	// Seq orders the events of a server (1, 2, ...).
	Seq      uint64         `json:"seq"`
	Time     time.Time      `json:"time"`
	Type     EventType      `json:"type"`
	Request  *hitl.Event    `json:"request,omitempty"`
	Call     *Call          `json:"call,omitempty"`
	Output   *OutputEvent   `json:"output,omitempty"`
	Progress *ProgressEvent `json:"progress,omitempty"`
	Tools    string         `json:"tools,omitempty"`
}

// OutputEvent is text a tool printed while it ran, or one of its log
// records.
type OutputEvent struct {
	CallID string `json:"call_id,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// Stream is "stdout" or "stderr", or "log" for a log record (Text is
	// then "level: message").
	Stream string `json:"stream,omitempty"`
	Text   string `json:"text"`
}

// ProgressEvent is the progress of a call the page made.
type ProgressEvent struct {
	CallID   string  `json:"call_id"`
	Tool     string  `json:"tool,omitempty"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

const defaultRing = 2000

// hub is the event log: a ring of the latest events and the streams that
// follow it. It is guarded by Server.mu.
type hub struct {
	seq  uint64
	ring []Event
	next int // where the next event goes once the ring is full
	full bool
	subs map[*stream]struct{}
}

// stream is one page following the log.
type stream struct {
	ch chan Event
	// lost is closed when the stream fell behind or the server closed:
	// the page reconnects and re-reads the state.
	lost   chan struct{}
	isLost bool
}

func (h *hub) init(size int) {
	h.ring = make([]Event, 0, size)
	h.subs = map[*stream]struct{}{}
}

func (h *hub) publish(e Event) {
	h.seq++
	e.Seq = h.seq
	e.Time = time.Now()
	if !h.full {
		h.ring = append(h.ring, e)
		if len(h.ring) == cap(h.ring) {
			h.full = true
		}
	} else {
		h.ring[h.next] = e
		h.next = (h.next + 1) % len(h.ring)
	}
	for st := range h.subs {
		select {
		case st.ch <- e:
		default:
			h.drop(st)
		}
	}
}

func (h *hub) drop(st *stream) {
	if !st.isLost {
		st.isLost = true
		close(st.lost)
	}
	delete(h.subs, st)
}

func (h *hub) closeAll() {
	for st := range h.subs {
		h.drop(st)
	}
}

// since returns the events after seq, oldest first, and whether the ring
// still holds all of them.
func (h *hub) since(seq uint64) ([]Event, bool) {
	var out []Event
	complete := true
	h.each(func(e Event) {
		if e.Seq > seq {
			out = append(out, e)
		}
	})
	if len(out) > 0 && out[0].Seq != seq+1 {
		complete = false
	}
	if len(out) == 0 && seq < h.seq {
		complete = false
	}
	return out, complete
}

// last returns the latest n events, oldest first.
func (h *hub) last(n int) []Event {
	var all []Event
	h.each(func(e Event) { all = append(all, e) })
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

func (h *hub) each(f func(Event)) {
	if !h.full {
		for _, e := range h.ring {
			f(e)
		}
		return
	}
	for i := range h.ring {
		f(h.ring[(h.next+i)%len(h.ring)])
	}
}

// resolvedSet remembers the latest resolved request ids, so that a second
// answer gets 409 Conflict rather than 404, and whether the resolution is
// in the log yet.
type resolvedSet struct {
	how   map[string]resolution
	order []string
	max   int
}

type resolution struct {
	how    string // the event type that resolved it
	logged bool   // the broker's event is in the log
}

func (r *resolvedSet) init(max int) {
	r.how = map[string]resolution{}
	r.max = max
}

// add records id; logged says the resolution is in the log.
func (r *resolvedSet) add(id, how string, logged bool) {
	if old, ok := r.how[id]; ok {
		if logged && !old.logged {
			r.how[id] = resolution{how: how, logged: true}
		}
		return
	}
	r.how[id] = resolution{how: how, logged: logged}
	r.order = append(r.order, id)
	if len(r.order) > r.max {
		delete(r.how, r.order[0])
		r.order = r.order[1:]
	}
}

// handleEvents streams the log as server-sent events. The page first reads
// GET /api/state, then follows from its seq (?since=N, or the
// Last-Event-ID header of a reconnecting EventSource); when the ring no
// longer holds what it missed, the stream starts with a resync event.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) || !s.guardAPI(w, r) {
		return
	}
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "text/event-stream")
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming is not supported")
		return
	}
	since, ok := sinceOf(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "since must be an event number")
		return
	}
	st, backlog, complete, err := s.subscribe(since)
	if err != nil {
		status := http.StatusServiceUnavailable
		if errors.Is(err, errTooManyStreams) {
			status = http.StatusTooManyRequests
		}
		writeError(w, status, err.Error())
		return
	}
	defer func() {
		s.mu.Lock()
		s.hub.drop(st)
		s.mu.Unlock()
	}()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return
	}
	if !complete {
		if writeSSE(w, Event{Seq: since, Time: time.Now(), Type: EventResync}) != nil {
			return
		}
	}
	for _, e := range backlog {
		if writeSSE(w, e) != nil {
			return
		}
	}
	flusher.Flush()
	s.follow(w, flusher, r, st)
}

// sinceOf reads the seq a page follows from: ?since=N, else the
// Last-Event-ID header; 0 when neither is there.
func sinceOf(r *http.Request) (uint64, bool) {
	from := r.URL.Query().Get("since")
	if from == "" {
		from = r.Header.Get("Last-Event-ID")
	}
	if from == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(from, 10, 64)
	return n, err == nil
}

var errTooManyStreams = errors.New("too many pages follow the server's events; close one")

// subscribe adds a stream to the hub and returns the events after since
// that the ring still holds, and whether it holds all of them; an error
// once the server is closed or when too many streams are open.
func (s *Server) subscribe(since uint64) (st *stream, backlog []Event, complete bool, err error) {
	st = &stream{ch: make(chan Event, 256), lost: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, false, errors.New("the server is shutting down")
	}
	if len(s.hub.subs) >= s.opts.MaxStreams {
		return nil, nil, false, errTooManyStreams
	}
	backlog, complete = s.hub.since(since)
	if since > s.hub.seq {
		complete = false // a page from an earlier server run
		backlog = nil
	}
	s.hub.subs[st] = struct{}{}
	return st, backlog, complete, nil
}

// follow writes the stream's events as they come, with a ping every 15 s,
// until the page leaves, the stream falls behind or the server closes.
func (s *Server) follow(w http.ResponseWriter, flusher http.Flusher, r *http.Request, st *stream) {
	// drain writes what is queued, without waiting.
	drain := func() bool {
		for n := len(st.ch); n > 0; n-- {
			if writeSSE(w, <-st.ch) != nil {
				return false
			}
		}
		return true
	}
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case e := <-st.ch:
			// Send what else is queued before flushing.
			if writeSSE(w, e) != nil || !drain() {
				return
			}
			flusher.Flush()
		case <-st.lost:
			// Deliver what was queued, then end: the page reconnects
			// and re-reads the state.
			if drain() {
				flusher.Flush()
			}
			return
		case <-ping.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
			flusher.Flush()
		case <-r.Context().Done():
			return
		case <-s.baseCtx.Done():
			return
		}
	}
}

func writeSSE(w http.ResponseWriter, e Event) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	// JSON has no raw newlines, so the data is one line.
	_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, data)
	return err
}
