package mcp

import (
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// SSE polling (SEP-1699, protocol 2025-11-25): with HTTPOptions.PollAfter,
// the event stream of a call that runs longer is closed with a retry
// hint, and the client reconnects with Last-Event-ID to get what it
// missed, replayed from the server's event store — so that proxies and
// load balancers that cut long requests do not cut long calls.

// revisionPolling is the protocol revision from which streams are primed
// for resumption and may be closed for polling.
const revisionPolling = "2025-11-25"

// pollRetry is the delay before reconnecting that a closed stream asks
// of its client.
func pollRetry(after time.Duration) time.Duration { return min(after, time.Second) }

// pollLater closes the event stream of a call still running after
// PollAfter, for clients of a revision that resumes streams; the returned
// function stops the timer when the call ends.
func (s *Server) pollLater(req *sdk.CallToolRequest) (stop func()) {
	after := time.Duration(s.pollAfter.Load())
	if after <= 0 || req.Extra == nil || req.Extra.CloseSSEStream == nil || sessionRevision(req.Session) < revisionPolling {
		return func() {}
	}
	closeStream := req.Extra.CloseSSEStream
	t := time.AfterFunc(after, func() { closeStream(sdk.CloseSSEStreamArgs{RetryAfter: pollRetry(after)}) })
	return func() { t.Stop() }
}

// sessionRevision returns the protocol revision a session's client asked
// for at initialization ("" when unknown).
func sessionRevision(ss *sdk.ServerSession) string {
	if ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}

// negotiatedRevision serves the requests of a session under the revision
// the session negotiated at initialization, when their
// Mcp-Protocol-Version header names an older one: the spec lets a server
// rely on the negotiated revision, and the event streams of a session
// that resumes them must be primed for it whatever a request says.
// Headers of unknown sessions, of no session, and of newer revisions are
// left as they are.
func (s *Server) negotiatedRevision(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid, version := r.Header.Get("Mcp-Session-Id"), r.Header.Get("Mcp-Protocol-Version")
		if sid != "" && version != "" && version < revisionPolling {
			if neg := s.sessionRevisionByID(sid); neg >= revisionPolling && neg < "2026-07-28" && neg > version {
				r = r.Clone(r.Context())
				r.Header.Set("Mcp-Protocol-Version", neg)
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) sessionRevisionByID(id string) string {
	for ss := range s.sdk.Sessions() {
		if ss.ID() == id {
			return sessionRevision(ss)
		}
	}
	return ""
}

// eventStore returns the event store of the streams of a server that
// polls: bounded, in memory.
func eventStore() sdk.EventStore {
	es := sdk.NewMemoryEventStore(nil)
	es.SetMaxBytes(eventStoreBytes)
	return es
}

// eventStoreBytes bounds what the event store keeps for replay, over
// every session.
const eventStoreBytes = 8 << 20
