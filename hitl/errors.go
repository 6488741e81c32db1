package hitl

import (
	"errors"
)

// The causes of a front end's context being cancelled (context.Cause),
// so that it can tell the person why a request went away.
var (
	// ErrWithdrawn: the call that asked was cancelled, or the broker closed.
	ErrWithdrawn = errors.New("request withdrawn")
	// ErrTimedOut: nobody answered within the limit.
	ErrTimedOut = errors.New("request timed out")
	// ErrAnswered: the request was answered elsewhere (another front end,
	// Broker.Answer, an always approval given meanwhile).
	ErrAnswered = errors.New("request answered elsewhere")
)

// ErrNotPending is wrapped by the error Broker.Answer returns for an id
// that is not pending: unknown, already answered, withdrawn or timed out.
// Each request is answered exactly once.
var ErrNotPending = errors.New("no such pending request")
