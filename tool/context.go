package tool

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/lcptools/lcp/autonomy"
)

// CallRequest is one call as its backend serves it: what the caller sent
// (Invocation) and what the handler resolved from it once, when the call
// started — the tool, the workspace, the library's host configuration,
// the autonomy level, the nesting depth, the conversation — with the
// call's way to ask its caller (Ask) and to report output, progress and
// log records (Emit). A Handler made by NewHandler passes it to its
// RunFunc; native tools, which get only a context, read it with
// CallFromContext.
//
// A CallRequest is read-only for everybody but the handler that made it.
type CallRequest struct {
	// Info is the tool being called; Tool its name.
	Info *Info
	Tool string
	// CallID identifies the call in requests, events and logs.
	CallID string
	// Arguments is the JSON object the LLM sent, as given (nil means {}).
	Arguments json.RawMessage
	// Workspace is the directory the call works in: the invocation's, else
	// the backend's default (HandlerOptions.Workspace), made absolute; ""
	// when neither names one.
	Workspace string
	// Context is the host's context for the call (LCP tool_context).
	Context map[string]any
	// Config is the host's configuration of the tool's library
	// (host_tool_configs[library]); never nil.
	Config map[string]any
	// Autonomy is the level Config sets (autonomy.FromConfig): Safe when
	// unset, Strict when invalid.
	Autonomy autonomy.Level
	// Depth counts the calls this one runs inside (a Python tool calling
	// the host's execute_tool), to bound recursion; 0 for a call made by
	// the host.
	Depth int
	// Conversation is the dialogue the call runs in (the agent loop's),
	// nil when there is none.
	Conversation Conversation
	// Parent is the call this one runs inside, nil for a call made by the
	// host.
	Parent *CallRequest
	// Generator is the language model the call may ask (Generate): the
	// invocation's, else the parent's; nil when there is none.
	Generator Generator

	h       *handler    // the handler that asks; nil for a call that cannot ask
	onEvent func(Event) // the call's subscribers; nil when nobody listens
}

// Conversation is the dialogue a call runs in, as the agent loop keeps
// it (package agent implements it): what a Python tool's
// discussion_instance reads.
type Conversation interface {
	// JSON returns the messages as a JSON array in the chat-completions
	// layout ([{"role": "user", "content": "..."}, ...]).
	JSON() json.RawMessage
}

// HandlerOptions are a backend's defaults for the calls of a handler.
type HandlerOptions struct {
	// Workspace is the directory of a call whose invocation names none.
	Workspace string
	// Config is the tool's library configuration
	// (host_tool_configs[library]); nil means empty.
	Config map[string]any
	// ReturnsOnCancel promises that the RunFunc returns as soon as its
	// context ends (stopping its work in the background if it must), as
	// the Python binding's does. Drive then runs a call of a tool that may
	// ask in the caller's goroutine, answering its requests from the
	// goroutine that asks, instead of running it in a goroutine of its
	// own; a handler driven step by step (Invoke, Respond) is unchanged.
	ReturnsOnCancel bool
}

// emptyConfig is the Config of calls whose library has none. It is shared
// and must not be written to, like every Config.
var emptyConfig = map[string]any{}

// resolve fills c from the invocation and the backend's defaults.
func (c *CallRequest) resolve(info *Info, opts *HandlerOptions, inv *Invocation) {
	c.Info, c.Tool, c.CallID, c.Arguments, c.Context = info, info.Name, inv.CallID, inv.Arguments, inv.Context
	c.Workspace, c.Config = inv.Workspace, nil
	if opts != nil {
		if c.Workspace == "" {
			c.Workspace = opts.Workspace
		}
		c.Config = opts.Config
	}
	if c.Workspace != "" && !filepath.IsAbs(c.Workspace) {
		if abs, err := filepath.Abs(c.Workspace); err == nil {
			c.Workspace = abs
		}
	}
	if c.Config == nil {
		c.Config = emptyConfig
	}
	c.Autonomy = autonomy.FromConfig(c.Config)
	c.Conversation, c.onEvent, c.Parent, c.Generator = inv.Conversation, inv.OnEvent, inv.Parent, inv.Generator
	if p := inv.Parent; p != nil {
		c.Depth = p.Depth + 1
		if c.Conversation == nil {
			c.Conversation = p.Conversation
		}
		if c.Generator == nil {
			c.Generator = p.Generator
		}
		c.onEvent = joinSinks(c.onEvent, p.onEvent)
	}
}

// ConfigString returns the string value of a key of the call's library
// configuration, or "" when absent (or c is nil).
func (c *CallRequest) ConfigString(key string) string {
	if c == nil {
		return ""
	}
	s, _ := c.Config[key].(string)
	return s
}

// toolName returns the name of the called tool ("" for a nil c).
func (c *CallRequest) toolName() string {
	if c == nil {
		return ""
	}
	return c.Tool
}

type callKey struct{}

// callContext is the context of a call: it carries the CallRequest in the
// same allocation.
type callContext struct {
	context.Context
	call CallRequest
}

func (c *callContext) Value(key any) any {
	if _, ok := key.(callKey); ok {
		return &c.call
	}
	return c.Context.Value(key)
}

// CallFromContext returns the call ctx belongs to (read-only), or nil
// outside a call made through NewHandler.
func CallFromContext(ctx context.Context) *CallRequest {
	c, _ := ctx.Value(callKey{}).(*CallRequest)
	return c
}

// Confirm asks the operator to approve an action of the running tool:
// source is what would run, label a short name for it. It returns Allow or
// Always to go ahead, or Reject with the operator's reason. A declined
// request is a Reject; a cancelled one ends the call with an error.
func Confirm(ctx context.Context, source, label string, argv []string) (Decision, string, error) {
	resp, err := Ask(ctx, &Request{Kind: KindConfirm, Source: source, Label: label, Argv: argv, Title: label})
	if err != nil {
		return Reject, "", err
	}
	switch resp.Action {
	case Submit:
		d := resp.Value.(Decision)
		return d, resp.Reason, nil
	case Decline:
		return Reject, resp.Reason, nil
	}
	return Reject, resp.Reason, resolved(ctx, resp)
}

// AskText asks the caller for text. A declined request gives an
// *InteractionDeclinedError, a cancelled one a *CancelledError.
func AskText(ctx context.Context, title, prompt string, multiline bool) (string, error) {
	return askString(ctx, &Request{Kind: KindText, Title: title, Prompt: prompt, Multiline: multiline})
}

// AskSecret asks the caller for a secret (a key, a password). The answer
// is masked on screen and never logged by lcp; the tool must not echo it.
func AskSecret(ctx context.Context, title, prompt string) (string, error) {
	return askString(ctx, &Request{Kind: KindSecret, Title: title, Prompt: prompt})
}

// AskSelect asks the caller to choose one of options; def, when not
// empty, is preselected.
func AskSelect(ctx context.Context, title, prompt string, options []string, def string) (string, error) {
	r := &Request{Kind: KindSelect, Title: title, Prompt: prompt, Options: options}
	if def != "" {
		r.Default = &def
	}
	return askString(ctx, r)
}

// AskForm asks the caller for a JSON object described by schema; with
// validate, the answer is checked against the schema first.
func AskForm(ctx context.Context, title, prompt string, schema json.RawMessage, validate bool) (map[string]any, error) {
	resp, err := Ask(ctx, &Request{Kind: KindForm, Title: title, Prompt: prompt, Schema: schema, Validate: validate})
	if err != nil {
		return nil, err
	}
	if err := resolved(ctx, resp); err != nil {
		return nil, err
	}
	return resp.Value.(map[string]any), nil
}

func askString(ctx context.Context, r *Request) (string, error) {
	resp, err := Ask(ctx, r)
	if err != nil {
		return "", err
	}
	if err := resolved(ctx, resp); err != nil {
		return "", err
	}
	return resp.Value.(string), nil
}

func resolved(ctx context.Context, resp Response) error {
	switch resp.Action {
	case Decline:
		return &InteractionDeclinedError{Tool: CallFromContext(ctx).toolName(), Reason: resp.Reason}
	case Cancel:
		return &CancelledError{Tool: CallFromContext(ctx).toolName(), Reason: resp.Reason}
	}
	return nil
}
