package hitl

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/lcptools/lcp/tool"
)

// EventType says what happened to a request.
type EventType string

// The events a Broker publishes.
const (
	// EventOpened: a request waits for an answer (Request, Deadline).
	EventOpened EventType = "opened"
	// EventAnswered: a request was answered (Response, By). A request the
	// broker answers at once (always memory, policy) has this event only.
	EventAnswered EventType = "answered"
	// EventWithdrawn: the call was cancelled or the broker closed before
	// anybody answered; the request is gone.
	EventWithdrawn EventType = "withdrawn"
	// EventTimedOut: nobody answered within the limit.
	EventTimedOut EventType = "timed_out"
	// EventFailed: the front end failed or gave an answer of the wrong
	// shape; the request was rejected or declined (Response says how).
	EventFailed EventType = "failed"
	// EventGranted: an always approval was remembered (Grant).
	EventGranted EventType = "granted"
	// EventRevoked: an always approval was forgotten (Grant).
	EventRevoked EventType = "revoked"
)

// By says who resolved a request.
type By string

// Who resolves requests.
const (
	ByFrontEnd By = "front_end" // the front end's Ask
	ByAnswer   By = "answer"    // Broker.Answer
	ByAlways   By = "always"    // an earlier always approval
	ByPolicy   By = "policy"    // the approval policy
	ByTimeout  By = "timeout"   // the limit
	ByCaller   By = "caller"    // the call was cancelled
	ByBroker   By = "broker"    // Broker.Close
	ByDrain    By = "drain"     // Broker.Drain: the host is stopping
)

// Event is one step in the life of a request, or a change of the always
// memory. Requests and responses in events are copies safe to show: a
// secret's answer (and default) is masked, never present.
type Event struct {
	// Seq orders the events of a broker (1, 2, ...).
	Seq  uint64    `json:"seq"`
	Type EventType `json:"type"`
	Time time.Time `json:"time"`
	// Request is the request concerned, for request events.
	Request *tool.Request `json:"request,omitempty"`
	// Response is how it was resolved, for answered, withdrawn,
	// timed_out and failed.
	Response *tool.Response `json:"response,omitempty"`
	By       By             `json:"by,omitempty"`
	// Deadline is when an opened request times out (zero: never).
	Deadline time.Time `json:"deadline,omitzero"`
	// Grant is the approval of granted and revoked events.
	Grant *Grant `json:"grant,omitempty"`
	// Replayed marks the opened events a new subscription starts with, one
	// per request already pending when it subscribed.
	Replayed bool `json:"replayed,omitempty"`
}

// Subscription receives a broker's events in order. It never slows the
// broker down: when its buffer is full, events are dropped and counted
// (Dropped); a UI that fell behind re-reads Broker.Pending.
type Subscription struct {
	b       *Broker
	ch      chan Event
	dropped atomic.Int64
	once    sync.Once
}

// Subscribe returns a subscription to every later event, which starts
// with a replayed opened event for each request already pending, so that
// a UI joining late misses nothing. buffer is the number of events it may
// hold beyond those (at least 16).
func (b *Broker) Subscribe(buffer int) *Subscription {
	b.mu.Lock()
	defer b.mu.Unlock()
	buffer = max(buffer, 16)
	s := &Subscription{b: b, ch: make(chan Event, buffer+len(b.pending))}
	if b.closed {
		s.closeLocked()
		return s
	}
	for _, e := range b.sortedPendingLocked() {
		s.ch <- Event{Seq: e.seq, Type: EventOpened, Time: e.opened, Request: cloneRequest(e.shown), Deadline: e.deadline, Replayed: true}
	}
	b.subs[s] = struct{}{}
	return s
}

// Events returns the channel of events; it is closed by Close and by the
// broker's Close.
func (s *Subscription) Events() <-chan Event { return s.ch }

// Dropped returns how many events did not fit in the buffer.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Close ends the subscription and closes its channel.
func (s *Subscription) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	delete(s.b.subs, s)
	s.closeLocked()
}

func (s *Subscription) closeLocked() { s.once.Do(func() { close(s.ch) }) }

// publishLocked numbers ev and hands it to every subscriber; it returns
// the number.
func (b *Broker) publishLocked(ev Event) uint64 {
	b.seq++
	ev.Seq = b.seq
	ev.Time = time.Now()
	for s := range b.subs {
		select {
		case s.ch <- ev:
		default:
			s.dropped.Add(1)
		}
	}
	return ev.Seq
}
