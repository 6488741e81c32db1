// Package native serves Go functions as tools: with an explicit JSON schema
// (Func, Raw) or typed (Typed), whose input and output schemas come from
// the Go types. Arguments are validated against the input schema before
// the function runs; a failure lists every violation with its JSON pointer.
// Structured output of typed tools is validated against the output schema.
//
// A function's plain error is a tool failure the LLM reads (status 500,
// like a Python exception); the engine errors of package tool
// (*tool.CancelledError, *tool.InteractionDeclinedError, ...) end the call
// as engine errors. Interactive tools declare what they may ask
// (Tool.Interactive) and ask through their context with tool.Confirm,
// tool.AskText, tool.AskSecret, tool.AskSelect and tool.AskForm.
//
//	type In struct {
//		A int `json:"a" jsonschema:"the first addend"`
//		B int `json:"b" jsonschema:"the second addend"`
//	}
//	type Out struct {
//		Sum int `json:"sum"`
//	}
//	add, _ := native.Typed("add", "Adds two integers.", func(ctx context.Context, in In) (Out, error) {
//		return Out{Sum: in.A + in.B}, nil
//	})
//	ts, _ := native.New(nil, add)
//	res, _ := tool.Call(ctx, ts, "add", json.RawMessage(`{"a":2,"b":3}`), nil)
package native

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/lcptools/lcp/tool"
)

// Tool is one native tool: its description and its function.
type Tool struct {
	info     tool.Info
	in, out  *tool.Schema
	run      func(ctx context.Context, args json.RawMessage) (any, error)
	describe func(cfg map[string]any) string
}

// Info returns the tool's static description.
func (t *Tool) Info() tool.Info { return t.info }

// Interactive declares the kinds of request the tool may make.
func (t *Tool) Interactive(c tool.Capabilities) *Tool {
	t.info.Interactions = c
	return t
}

// InLibrary puts the tool in a library: it then gets that library's host
// configuration (host_tool_configs[lib.ID]) in its calls.
func (t *Tool) InLibrary(lib tool.Library) *Tool {
	t.info.Library = lib
	return t
}

// Annotate gives the tool MCP's hints about its behaviour (read-only,
// destructive, idempotent, open world) and, when the tool has no title
// yet, the annotations' title as its title. MCP clients show them and
// may decide what to confirm from them; lcp's own approvals never depend
// on them.
func (t *Tool) Annotate(a *tool.Annotations) *Tool {
	t.info.Annotations = a
	if a != nil && t.info.Title == "" {
		t.info.Title = a.Title
	}
	return t
}

// DescribeWith makes the description dynamic: when the tools are listed,
// describe is called with the library's host configuration and its result
// replaces the description (the Go form of tool_<name>_prompt).
func (t *Tool) DescribeWith(describe func(cfg map[string]any) string) *Tool {
	t.describe = describe
	return t
}

// Func returns a tool that calls fn with the decoded arguments object
// (numbers as json.Number) after validating them against info.InputSchema.
func Func(info tool.Info, fn func(ctx context.Context, args map[string]any) (any, error)) (*Tool, error) {
	t, err := Raw(info, func(ctx context.Context, raw json.RawMessage) (any, error) {
		v, err := tool.DecodeJSON(raw)
		if err != nil {
			return nil, err
		}
		m, _ := v.(map[string]any)
		return fn(ctx, m)
	})
	return t, err
}

// Raw returns a tool that calls fn with the arguments as JSON, after
// validating them against info.InputSchema (an empty schema accepts any
// object). The name must be valid (tool.CheckName). With an output
// schema, a value fn returns is validated against it and kept as the
// structured result.
func Raw(info tool.Info, fn func(ctx context.Context, args json.RawMessage) (any, error)) (*Tool, error) {
	if err := tool.CheckName(info.Name); err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	if len(info.InputSchema) == 0 {
		info.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	in, err := tool.CompileSchema(info.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("native: tool %s: input %w", info.Name, err)
	}
	t := &Tool{info: info, in: in, run: fn}
	if len(info.OutputSchema) > 0 {
		if t.out, err = tool.CompileSchema(info.OutputSchema); err != nil {
			return nil, fmt.Errorf("native: tool %s: output %w", info.Name, err)
		}
	}
	return t, nil
}

// Typed returns a tool whose input schema is derived from In (a struct,
// or a map with string keys: its JSON field names, "jsonschema" tags as
// descriptions, omitempty fields optional) and output schema from Out. The
// validated arguments are decoded into an In; the Out the function returns
// is the structured result and, normalized, what the LLM reads.
//
// An In that does not encode as a JSON object (a scalar such as int64 or
// string, a slice: tools-kit's `typed("double", |value: i64| ...)`) is
// given as the one argument ScalarArg, since tool arguments are a JSON
// object: func(ctx, x int64) has the input schema
// {"type":"object","properties":{"value":{"type":"integer"}},"required":["value"],"additionalProperties":false}
// and is called, over MCP too, with {"value": 21}.
func Typed[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) (*Tool, error) {
	scalar := objectKind(reflect.TypeFor[In]()) != ""
	inSchema, err := schemaFor[In]()
	if err != nil {
		return nil, fmt.Errorf("native: tool %s: input type: %w", name, err)
	}
	if scalar {
		inSchema, err = json.Marshal(map[string]any{"type": "object", "properties": map[string]json.RawMessage{ScalarArg: inSchema},
			"required": []string{ScalarArg}, "additionalProperties": false})
		if err != nil {
			return nil, fmt.Errorf("native: tool %s: input type: %w", name, err)
		}
	}
	outSchema, err := schemaFor[Out]()
	if err != nil {
		return nil, fmt.Errorf("native: tool %s: output type: %w", name, err)
	}
	info := tool.Info{Name: name, Description: description, InputSchema: inSchema, OutputSchema: outSchema}
	return Raw(info, func(ctx context.Context, raw json.RawMessage) (any, error) {
		var in In
		if scalar {
			var wrapped struct {
				Value *In `json:"value"`
			}
			if err := json.Unmarshal(raw, &wrapped); err != nil || wrapped.Value == nil {
				return nil, &tool.InvalidArgumentsError{Tool: name, Message: fmt.Sprintf("the argument %q must be a %s", ScalarArg, reflect.TypeFor[In]())}
			}
			in = *wrapped.Value
		} else if err := json.Unmarshal(raw, &in); err != nil {
			return nil, &tool.InvalidArgumentsError{Tool: name, Message: err.Error()}
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return typedOutput{out}, nil
	})
}

// objectKind returns "" when values of t encode as JSON objects, else
// the kind that does not.
func objectKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return ""
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return ""
		}
	}
	return t.String()
}

// ScalarArg is the name of the one argument of a Typed tool whose input
// type is not an object (a number, a string, a slice...).
const ScalarArg = "value"

// typedOutput marks a value returned by a typed function: it is validated
// against the output schema and kept as the structured result.
type typedOutput struct{ v any }

var schemaCache sync.Map // reflect.Type -> json.RawMessage

func schemaFor[T any]() (json.RawMessage, error) {
	rt := reflect.TypeFor[T]()
	if s, ok := schemaCache.Load(rt); ok {
		return s.(json.RawMessage), nil
	}
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	schemaCache.Store(rt, json.RawMessage(raw))
	return raw, nil
}

// Options configures a Toolset.
type Options struct {
	// Configs is the host configuration per library (host_tool_configs):
	// a call of a tool in library L sees Configs[L] as
	// tool.CallRequest.Config.
	Configs map[string]map[string]any
	// Workspace is the default workspace of calls that name none.
	Workspace string
	// Timeout limits each call; zero means no limit.
	Timeout time.Duration
}

// Toolset serves native tools. It is safe for concurrent use; tools may be
// added and removed while it serves.
type Toolset struct {
	opts   Options
	mu     sync.RWMutex
	tools  map[string]*Tool
	order  []string
	closed bool
	// defaults are the calls' defaults per library ID, made once.
	defaults map[string]*tool.HandlerOptions
}

// New returns a toolset of the given tools; nil opts means defaults. Two
// tools with one name are a *tool.DuplicateNameError.
func New(opts *Options, tools ...*Tool) (*Toolset, error) {
	ts := &Toolset{tools: make(map[string]*Tool), defaults: make(map[string]*tool.HandlerOptions)}
	if opts != nil {
		ts.opts = *opts
	}
	for _, t := range tools {
		if err := ts.Add(t); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// Add adds a tool; a name already served is a *tool.DuplicateNameError.
func (ts *Toolset) Add(t *Tool) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if _, dup := ts.tools[t.info.Name]; dup {
		return &tool.DuplicateNameError{Name: t.info.Name}
	}
	ts.tools[t.info.Name] = t
	ts.order = append(ts.order, t.info.Name)
	if lib := t.info.Library.ID; ts.defaults[lib] == nil {
		ts.defaults[lib] = &tool.HandlerOptions{Workspace: ts.opts.Workspace, Config: ts.config(lib)}
	}
	return nil
}

// Remove removes the named tool and reports whether it was there.
func (ts *Toolset) Remove(name string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if _, ok := ts.tools[name]; !ok {
		return false
	}
	delete(ts.tools, name)
	ts.order = slices.DeleteFunc(ts.order, func(n string) bool { return n == name })
	return true
}

// Tools lists the tools in the order they were added, with dynamic
// descriptions applied.
func (ts *Toolset) Tools(context.Context) ([]tool.Info, error) {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	if ts.closed {
		return nil, &tool.ClosedError{What: "native toolset"}
	}
	out := make([]tool.Info, 0, len(ts.order))
	for _, n := range ts.order {
		t := ts.tools[n]
		info := t.info
		if t.describe != nil {
			info.Description = t.describe(ts.config(info.Library.ID))
		}
		out = append(out, info)
	}
	return out, nil
}

func (ts *Toolset) config(lib string) map[string]any {
	if c, ok := ts.opts.Configs[lib]; ok && c != nil {
		return c
	}
	return map[string]any{}
}

// Handler returns a handler for one call of the named tool.
func (ts *Toolset) Handler(_ context.Context, name string) (tool.Handler, error) {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	if ts.closed {
		return nil, &tool.ClosedError{What: "native toolset"}
	}
	t, ok := ts.tools[name]
	if !ok {
		return nil, &tool.UnknownToolError{Name: name}
	}
	return tool.NewHandler(&t.info, func(ctx context.Context, c *tool.CallRequest) (*tool.Result, error) {
		return ts.run(ctx, t, c)
	}, ts.defaults[t.info.Library.ID]), nil
}

// Close stops serving; calls in flight finish.
func (ts *Toolset) Close() error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.closed = true
	return nil
}

func (ts *Toolset) run(ctx context.Context, t *Tool, c *tool.CallRequest) (*tool.Result, error) {
	args := c.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	if err := t.validate(args); err != nil {
		return nil, err
	}
	if ts.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, ts.opts.Timeout, &tool.TimeoutError{Tool: t.info.Name, Limit: ts.opts.Timeout})
		defer cancel()
	}
	v, err := t.run(ctx, args)
	if err != nil {
		if isEngineError(err) {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, tool.ContextError(ctx, t.info.Name)
		}
		return tool.Failure(err.Error()), nil
	}
	return t.result(v)
}

// validate checks args against the input schema.
func (t *Tool) validate(args json.RawMessage) error {
	if !json.Valid(args) {
		var v any
		err := json.Unmarshal(args, &v)
		return &tool.InvalidArgumentsError{Tool: t.info.Name, Message: fmt.Sprintf("arguments are not valid JSON: %v", err)}
	}
	if a := bytes.TrimSpace(args); len(a) == 0 || a[0] != '{' {
		return &tool.InvalidArgumentsError{Tool: t.info.Name, Message: "arguments must be a JSON object"}
	}
	if vs := t.in.ValidateValidJSON(args); len(vs) > 0 {
		return &tool.InvalidArgumentsError{Tool: t.info.Name, Message: "arguments do not match the input schema", Violations: vs}
	}
	return nil
}

func (t *Tool) result(v any) (*tool.Result, error) {
	typed, isTyped := v.(typedOutput)
	if !isTyped && t.out == nil {
		r, err := tool.NormalizeValue(v)
		if err != nil {
			return nil, &tool.ProtocolError{Tool: t.info.Name, Message: err.Error()}
		}
		if _, given := v.(*tool.Result); !given && r.Structured == nil {
			r.Structured = jsonOutput(r)
		}
		return r, nil
	}
	if isTyped {
		v = typed.v
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, &tool.ProtocolError{Tool: t.info.Name, Message: "cannot encode the output: " + err.Error()}
	}
	if t.out != nil {
		if vs := t.out.ValidateValidJSON(raw); len(vs) > 0 {
			return nil, &tool.ProtocolError{Tool: t.info.Name, Message: fmt.Sprintf("output does not match the output schema: %s %s", vs[0].Pointer, vs[0].Message)}
		}
	}
	r, err := tool.NormalizeValid(raw) // json.Marshal wrote valid JSON
	if err != nil {
		return nil, &tool.ProtocolError{Tool: t.info.Name, Message: err.Error()}
	}
	r.Structured = raw
	return r, nil
}

// jsonOutput is the structured value of a successful result without an
// output schema, as tools-kit's ToolResult::json gives one: its output
// when that is JSON data (an object, an array, a number, a boolean), nil
// for text, null and results made of content blocks.
func jsonOutput(r *tool.Result) json.RawMessage {
	out := bytes.TrimSpace(r.Output)
	if !r.Success || len(r.Content) > 0 || len(out) == 0 || out[0] == '"' || string(out) == "null" {
		return nil
	}
	return out
}

// isEngineError reports whether err is one of package tool's engine
// errors, which end a call as errors rather than as tool failures.
func isEngineError(err error) bool {
	var (
		e1 *tool.CancelledError
		e2 *tool.TimeoutError
		e3 *tool.InteractionDeclinedError
		e4 *tool.UndeclaredInteractionError
		e5 *tool.InvalidInteractionError
		e6 *tool.InvalidArgumentsError
		e7 *tool.ProtocolError
		e8 *tool.TransportError
		e9 *tool.ClosedError
	)
	return errors.As(err, &e1) || errors.As(err, &e2) || errors.As(err, &e3) || errors.As(err, &e4) ||
		errors.As(err, &e5) || errors.As(err, &e6) || errors.As(err, &e7) || errors.As(err, &e8) || errors.As(err, &e9)
}
