package hitl

import (
	"errors"
	"fmt"
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

// ErrUnknownAutonomy is wrapped by the errors of ParseAutonomy and
// ValidateHostConfigs for a level that is not strict, safe or full_access.
var ErrUnknownAutonomy = errors.New("unknown autonomy level")

// ConfigError reports a bad entry of host_tool_configs.
type ConfigError struct {
	// Library is the key of host_tool_configs (the library stem).
	Library string
	// Key is the offending key of the library's configuration.
	Key string
	Err error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("host_tool_configs[%q].%s: %v", e.Library, e.Key, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }
