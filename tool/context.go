package tool

import (
	"context"
	"encoding/json"
)

// CallInfo describes the call a context belongs to. Backends put it in the
// context of every call they run; native tools read it with
// CallFromContext.
type CallInfo struct {
	// Tool and CallID identify the call.
	Tool   string
	CallID string
	// Library is the tool's library (Library.ID).
	Library string
	// Workspace is the directory the call works in.
	Workspace string
	// Context is the host's context for the call (LCP tool_context).
	Context map[string]any
	// Config is the host's configuration of the tool's library
	// (host_tool_configs[library]); never nil inside a call made by an
	// engine, possibly nil elsewhere.
	Config map[string]any
	// Depth counts calls made from inside other calls (a Python tool
	// calling the host's execute_tool), to bound recursion.
	Depth int
}

type callKey struct{}

// callContext is the context of a call: it carries the CallInfo and the
// asker of the call's handler in one allocation.
type callContext struct {
	context.Context
	call  CallInfo
	asker asker
}

func newCallContext(parent context.Context, info *Info, inv Invocation) *callContext {
	c := &callContext{Context: parent, call: CallInfo{Tool: info.Name, CallID: inv.CallID, Library: info.Library.ID, Workspace: inv.Workspace, Context: inv.Context}}
	if p := CallFromContext(parent); p != nil {
		c.call.Depth = p.Depth
	}
	return c
}

func (c *callContext) Value(key any) any {
	switch key.(type) {
	case callKey:
		return &c.call
	case askerKey:
		return &c.asker
	}
	return c.Context.Value(key)
}

// WithCall returns a context carrying c.
func WithCall(ctx context.Context, c *CallInfo) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFromContext returns the CallInfo of the call ctx belongs to, or nil.
func CallFromContext(ctx context.Context) *CallInfo {
	c, _ := ctx.Value(callKey{}).(*CallInfo)
	return c
}

// ConfigString returns the string value of a key of the call's library
// configuration, or "" when absent.
func (c *CallInfo) ConfigString(key string) string {
	if c == nil {
		return ""
	}
	s, _ := c.Config[key].(string)
	return s
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
		return &InteractionDeclinedError{Tool: nameOf(ctx), Reason: resp.Reason}
	case Cancel:
		return &CancelledError{Tool: nameOf(ctx), Reason: resp.Reason}
	}
	return nil
}

func nameOf(ctx context.Context) string {
	if c := CallFromContext(ctx); c != nil {
		return c.Tool
	}
	return ""
}
