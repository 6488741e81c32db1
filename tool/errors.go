package tool

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrClosed is wrapped by *ClosedError; errors.Is(err, ErrClosed) reports
// use after Close.
var ErrClosed = errors.New("closed")

// UnknownToolError reports a call to a name no toolset provides.
type UnknownToolError struct {
	Name string
}

func (e *UnknownToolError) Error() string { return fmt.Sprintf("Tool '%s' not found.", e.Name) }

// Violation is one way the arguments break the input schema.
type Violation struct {
	// Pointer is the JSON pointer of the offending value ("" for the root).
	Pointer string `json:"pointer"`
	// Message says what is wrong there.
	Message string `json:"message"`
}

// InvalidArgumentsError reports arguments that are not JSON, not an object,
// or do not satisfy the tool's input schema.
type InvalidArgumentsError struct {
	Tool       string
	Message    string
	Violations []Violation
}

func (e *InvalidArgumentsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid arguments for %s: %s", e.Tool, e.Message)
	for _, v := range e.Violations {
		p := v.Pointer
		if p == "" {
			p = "/"
		}
		fmt.Fprintf(&b, "; at %s: %s", p, v.Message)
	}
	return b.String()
}

// UndeclaredInteractionError reports a tool asking for a kind of
// interaction its Info did not declare.
type UndeclaredInteractionError struct {
	Tool string
	Kind Kind
}

func (e *UndeclaredInteractionError) Error() string {
	return fmt.Sprintf("tool %s asked for a %s interaction it did not declare", e.Tool, e.Kind)
}

// InvalidInteractionError reports a request or response of the wrong shape:
// a reply to a request that was never asked, a reply to the wrong id, a
// select answer that is not one of the options, a form that fails its schema.
type InvalidInteractionError struct {
	ID      string
	Message string
}

func (e *InvalidInteractionError) Error() string {
	if e.ID == "" {
		return "invalid interaction: " + e.Message
	}
	return fmt.Sprintf("invalid interaction %s: %s", e.ID, e.Message)
}

// InteractionDeclinedError reports that the person declined to answer a
// request of a native tool, which gave up.
type InteractionDeclinedError struct {
	Tool   string
	Reason string
}

func (e *InteractionDeclinedError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("%s: the request was declined", e.Tool)
	}
	return fmt.Sprintf("%s: the request was declined: %s", e.Tool, e.Reason)
}

// CancelledError reports a call stopped by its caller.
type CancelledError struct {
	Tool   string
	Reason string
}

func (e *CancelledError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("Tool '%s' was cancelled.", e.Tool)
	}
	return fmt.Sprintf("Tool '%s' was cancelled: %s", e.Tool, e.Reason)
}

// TimeoutError reports a call stopped by its time limit.
type TimeoutError struct {
	Tool  string
	Limit time.Duration
}

func (e *TimeoutError) Error() string {
	if e.Limit <= 0 {
		return fmt.Sprintf("Tool '%s' timed out.", e.Tool)
	}
	return fmt.Sprintf("Tool '%s' timed out after %s.", e.Tool, e.Limit)
}

// TransportError reports that the process or connection behind a tool
// failed: a dead worker, a dropped MCP session, a missing interpreter.
type TransportError struct {
	Tool string
	Err  error
}

func (e *TransportError) Error() string {
	if e.Tool == "" {
		return "transport: " + e.Err.Error()
	}
	return fmt.Sprintf("%s: transport: %v", e.Tool, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// ProtocolError reports a peer or backend that broke its protocol.
type ProtocolError struct {
	Tool    string
	Message string
}

func (e *ProtocolError) Error() string {
	if e.Tool == "" {
		return "protocol violation: " + e.Message
	}
	return fmt.Sprintf("%s: protocol violation: %s", e.Tool, e.Message)
}

// ClosedError reports use of a toolset or handler after it was closed or
// after its call completed.
type ClosedError struct {
	What string
}

func (e *ClosedError) Error() string { return e.What + " is closed" }

// Is makes errors.Is(err, ErrClosed) true.
func (e *ClosedError) Is(target error) bool { return target == ErrClosed }

// DuplicateNameError reports two tools with one name where that is not
// allowed (within one native toolset).
type DuplicateNameError struct {
	Name string
}

func (e *DuplicateNameError) Error() string { return fmt.Sprintf("duplicate tool name %q", e.Name) }
