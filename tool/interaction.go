package tool

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// Kind is the kind of a Request.
type Kind string

// The kinds of request a tool may make while it runs.
const (
	// KindConfirm asks the operator to approve an action: allow once,
	// always (for the session), or reject with a reason.
	KindConfirm Kind = "confirm"
	// KindText asks for free text (Multiline for several lines).
	KindText Kind = "text"
	// KindSecret asks for a value that must never be shown or logged.
	KindSecret Kind = "secret"
	// KindSelect asks for one of Options.
	KindSelect Kind = "select"
	// KindForm asks for a JSON object described by Schema.
	KindForm Kind = "form"
	// KindHost is a request of the host's own, not a question for a
	// person: the front end that made the call answers it from what only
	// it has (the MCP client's model, the client's input requests).
	// Host carries it and the answer's Value is the host's answer, both
	// opaque to lcp's other parts. A tool needs no declared interaction
	// to make one, and a front end without such a host declines it.
	KindHost Kind = "host"
)

// Request is a question a running tool puts to its caller. The fields a
// kind does not use are empty.
type Request struct {
	// ID identifies the request; a Response must carry it back.
	ID string `json:"id"`
	// Tool and CallID say which call asks.
	Tool   string `json:"tool"`
	CallID string `json:"call_id,omitempty"`
	// Library is the asking tool's library (Library.ID).
	Library string `json:"library,omitempty"`
	Kind    Kind   `json:"kind"`
	// Title is a short headline; Prompt the question itself.
	Title  string `json:"title,omitempty"`
	Prompt string `json:"prompt,omitempty"`
	// Multiline marks a text request that expects several lines.
	Multiline bool `json:"multiline,omitempty"`
	// Options are the choices of a select request.
	Options []string `json:"options,omitempty"`
	// OptionTitles, when set, are what people read for Options, one each
	// (MCP's titled choices: the value "h1" shown as "Superman"); the
	// answer is still one of Options.
	OptionTitles []string `json:"option_titles,omitempty"`
	// Default is the preselected or fallback answer of a text or select
	// request, when it has one.
	Default *string `json:"default,omitempty"`
	// Schema describes the object a form request wants; Validate asks for
	// the reply to be checked against it.
	Schema   json.RawMessage `json:"schema,omitempty"`
	Validate bool            `json:"validate,omitempty"`
	// Source is what a confirmation would run or do (code, a command, a
	// description); Label a short human name for it; Argv its arguments.
	Source string   `json:"source,omitempty"`
	Label  string   `json:"label,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	// Host is the host's own request of a KindHost request, for the front
	// end that made the call; it does not cross a wire.
	Host any `json:"-"`
}

// Action is how a Response resolves its Request.
type Action string

// The three ways to resolve a request.
const (
	// Submit answers the request with Response.Value.
	Submit Action = "submit"
	// Decline is the person's refusal: a rejected confirmation, a question
	// left unanswered. The tool decides what to do next.
	Decline Action = "decline"
	// Cancel abandons the whole call.
	Cancel Action = "cancel"
)

// Decision is the answer to a confirmation.
type Decision string

// The decisions of a confirmation, as LCP tools expect them.
const (
	Allow  Decision = "allow"
	Always Decision = "always"
	Reject Decision = "reject"
)

// Response resolves one Request.
type Response struct {
	ID     string `json:"id"`
	Action Action `json:"action"`
	// Value is the answer of a Submit: a string for text, secret and
	// select; a JSON object (map[string]any or json.RawMessage) for a form;
	// Allow or Always (or their strings) for a confirmation.
	Value any `json:"value,omitempty"`
	// Reason is the person's feedback on a Decline or Cancel; for a rejected
	// confirmation it is fed back to the LLM.
	Reason string `json:"reason,omitempty"`
}

// Submitted returns a Submit response to r.
func (r *Request) Submitted(v any) Response { return Response{ID: r.ID, Action: Submit, Value: v} }

// Declined returns a Decline response to r.
func (r *Request) Declined(reason string) Response {
	return Response{ID: r.ID, Action: Decline, Reason: reason}
}

// Cancelled returns a Cancel response to r.
func (r *Request) Cancelled(reason string) Response {
	return Response{ID: r.ID, Action: Cancel, Reason: reason}
}

// callPrefix makes call ids unique across processes; the counter makes
// them unique within one. The prefix is drawn at the first call, not at
// start-up: reading the system's randomness is a system call and seeds
// crypto/rand's generator, which a command that calls nothing never needs.
var (
	callPrefix  = sync.OnceValue(func() string { return NewID()[:8] })
	callCounter atomic.Uint64
)

// newCallID returns an identifier for a call: unique, cheap, not secret
// (request ids, which answers carry, come from NewID).
func newCallID() string {
	var b [32]byte
	buf := append(b[:0], callPrefix()...)
	buf = append(buf, '-')
	buf = strconv.AppendUint(buf, callCounter.Add(1), 36)
	return string(buf)
}

// NewID returns a random identifier for requests and calls.
func NewID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// Check reports whether r is well formed: a known kind, options for a
// select, an object schema for a form.
func (r *Request) Check() error {
	switch r.Kind {
	case KindConfirm, KindText, KindSecret:
	case KindHost:
		if r.Host == nil {
			return &InvalidInteractionError{ID: r.ID, Message: "a host request needs the host's request (Host)"}
		}
	case KindSelect:
		if len(r.Options) == 0 {
			return &InvalidInteractionError{ID: r.ID, Message: "a select request needs options"}
		}
		if len(r.OptionTitles) > 0 && len(r.OptionTitles) != len(r.Options) {
			return &InvalidInteractionError{ID: r.ID, Message: "a select request needs one title per option, or none"}
		}
	case KindForm:
		var s map[string]any
		if len(r.Schema) == 0 || json.Unmarshal(r.Schema, &s) != nil {
			return &InvalidInteractionError{ID: r.ID, Message: "a form request needs a JSON object schema"}
		}
	default:
		return &InvalidInteractionError{ID: r.ID, Message: fmt.Sprintf("unknown request type %q (want text, secret, select or form)", r.Kind)}
	}
	return nil
}

// CheckResponse reports whether resp is a valid resolution of r: the same
// id, a known action, and for a Submit a value of the right shape. It
// returns the value normalized: a string, a Decision, or a form object as
// map[string]any.
func (r *Request) CheckResponse(resp Response) (any, error) {
	if resp.ID != r.ID {
		return nil, &InvalidInteractionError{ID: resp.ID, Message: fmt.Sprintf("no such pending request (waiting for %s)", r.ID)}
	}
	switch resp.Action {
	case Decline, Cancel:
		return nil, nil
	case Submit:
	default:
		return nil, &InvalidInteractionError{ID: resp.ID, Message: fmt.Sprintf("unknown action %q", resp.Action)}
	}
	switch r.Kind {
	case KindHost:
		return resp.Value, nil // the host's answer, for the host
	case KindConfirm:
		var d Decision
		switch v := resp.Value.(type) {
		case Decision:
			d = v
		case string:
			d = Decision(v)
		}
		if d != Allow && d != Always && d != Reject {
			return nil, &InvalidInteractionError{ID: r.ID, Message: "a confirmation answer must be allow, always or reject"}
		}
		return d, nil
	case KindText, KindSecret, KindSelect:
		s, ok := resp.Value.(string)
		if !ok {
			return nil, &InvalidInteractionError{ID: r.ID, Message: fmt.Sprintf("a %s answer must be a string", r.Kind)}
		}
		if r.Kind == KindSelect && !slices.Contains(r.Options, s) {
			return nil, &InvalidInteractionError{ID: r.ID, Message: "the answer is not one of the options"}
		}
		return s, nil
	case KindForm:
		var obj map[string]any
		switch v := resp.Value.(type) {
		case map[string]any:
			obj = v
		case json.RawMessage:
			if json.Unmarshal(v, &obj) != nil || obj == nil {
				return nil, &InvalidInteractionError{ID: r.ID, Message: "a form answer must be a JSON object"}
			}
		default:
			return nil, &InvalidInteractionError{ID: r.ID, Message: "a form answer must be a JSON object"}
		}
		if r.Validate {
			if err := validateForm(r, obj); err != nil {
				return nil, err
			}
		}
		return obj, nil
	}
	return nil, &InvalidInteractionError{ID: r.ID, Message: fmt.Sprintf("unknown request type %q", r.Kind)}
}

// Redacted returns a copy of resp safe to log or show: the value of a
// secret request is masked.
func (r *Request) Redacted(resp Response) Response {
	if r.Kind == KindSecret && resp.Value != nil {
		if s, ok := resp.Value.(string); ok {
			resp.Value = Mask(s)
		} else {
			resp.Value = "****"
		}
	}
	return resp
}

// Mask returns a form of a secret safe to show: its length class and never
// more than its last two characters, and only when it is long enough that
// they give nothing away.
func Mask(secret string) string {
	r := []rune(secret)
	if len(r) < 12 {
		return "****"
	}
	return "****" + string(r[len(r)-2:])
}
