package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/tool"
)

// Model is the chat model the loop talks to; *llm.Client is one.
type Model interface {
	Chat(ctx context.Context, req *llm.ChatRequest) (*llm.ChatResponse, error)
}

// StreamModel is a Model that can stream its answers; Run streams when
// Options.Stream is set and the model is one.
type StreamModel interface {
	Model
	Stream(ctx context.Context, req *llm.ChatRequest, onDelta func(llm.Delta)) (*llm.ChatResponse, error)
}

// Defaults of Options.
const (
	// DefaultMaxSteps bounds the model requests of one Run.
	DefaultMaxSteps = 16
	// DefaultMaxToolOutput bounds the text of one tool result the model
	// reads, in bytes.
	DefaultMaxToolOutput = 64 << 10
)

// ErrMaxSteps is wrapped by the error of a Run that stopped because the
// model still asked for tools after Options.MaxSteps requests.
var ErrMaxSteps = errors.New("the model was still calling tools at the step limit")

// Options adjusts Run. The zero value is usable.
type Options struct {
	// System is the host's system prompt. The libraries' contributions
	// (SystemPrompts of the toolset, when it has them) follow it.
	System string
	// NoLibraryPrompts leaves the libraries' contributions out.
	NoLibraryPrompts bool
	// MaxSteps bounds the model requests of one Run (DefaultMaxSteps when
	// zero).
	MaxSteps int
	// MaxToolOutput bounds the text of one tool result the model reads
	// (DefaultMaxToolOutput when zero); longer text is cut with a note.
	MaxToolOutput int
	// MaxTokens and Temperature go into every request when set.
	MaxTokens   int
	Temperature *float64
	// Stream asks a StreamModel for a stream, reported as EventTextDelta.
	Stream bool
	// Respond answers the tools' confirmations and questions (typically a
	// hitl.Broker's Respond). When nil and the toolset has a Call method
	// like *lcp.Engine's, calls go through it, so the engine's own
	// responder answers; else confirmations are rejected and questions
	// declined.
	Respond func(ctx context.Context, r *tool.Request) tool.Response
	// Workspace and Context go into every call (the LCP tool_context);
	// empty means the toolset's defaults.
	Workspace string
	Context   map[string]any
	// OnEvent, when set, sees the loop's progress, for UIs. It is called
	// from Run's goroutine.
	OnEvent func(Event)
}

// EventKind says what an Event reports.
type EventKind string

// The kinds of events.
const (
	// EventTextDelta is a piece of the model's text as it streams.
	EventTextDelta EventKind = "text_delta"
	// EventText is the model's whole text of one step (also when it comes
	// with tool calls).
	EventText EventKind = "text"
	// EventToolCall is a tool call about to run.
	EventToolCall EventKind = "tool_call"
	// EventToolResult is a finished tool call, with its result.
	EventToolResult EventKind = "tool_result"
)

// Event is one step of the loop's progress.
type Event struct {
	Kind EventKind
	// Step is the model request the event belongs to, from 1.
	Step int
	// Text is the text of EventTextDelta and EventText.
	Text string
	// Call is the tool call of EventToolCall and EventToolResult, with
	// its arguments as the model wrote them.
	Call *llm.ToolCall
	// Result is the normalized result of EventToolResult; engine errors
	// and bad arguments are results too (tool.ErrorResult), with Err set.
	Result *tool.Result
	// Err is the engine error of EventToolResult, if any: unknown tool,
	// invalid arguments, timeout, cancelled...
	Err error
	// Elapsed is the duration of the call, for EventToolResult.
	Elapsed time.Duration
}

// Result sums up a Run.
type Result struct {
	// Text is the model's final answer (its last message without tool
	// calls); empty when the Run ended otherwise.
	Text string
	// FinishReason is the model's reason for ending its last message
	// ("stop", "length"...).
	FinishReason string
	// Steps counts the model requests, ToolCalls the tool calls run.
	Steps     int
	ToolCalls int
	// Usage sums the tokens the server reported.
	Usage llm.Usage
}

// caller is a toolset with a responder of its own (an *lcp.Engine): its
// Call answers requests with it when the options name none.
type caller interface {
	Call(ctx context.Context, name string, args json.RawMessage, opts *tool.CallOptions) (*tool.Result, error)
}

// prompter is a toolset with libraries' system prompts (an *lcp.Engine).
type prompter interface {
	SystemPrompts(ctx context.Context) []tool.SystemPrompt
}

// Run is the agent loop for one turn of the conversation (whose last
// message is typically the user's). Until the model answers without tool
// calls, it sends the conversation, with the system prompt and the specs
// of the toolset's tools, to the model; appends the model's message; runs
// each tool call, in order, through the toolset; and appends each result
// as a tool message: the normalized output, or the error, followed by the
// result's prompt_injection. Arguments that are not a JSON object become
// an error message for the model, never a failed Run.
//
// Every call runs in the conversation (tool.CallRequest.Conversation), so
// that tools can read it (a Python tool's discussion_instance). Run returns the final answer; its error
// is the model's (an *llm.HTTPError...), the context's, or one wrapping
// ErrMaxSteps, and the Result then says how far it got. Every tool call
// the conversation holds is answered by a tool message, even when the turn
// is cancelled, so that the conversation can go on.
func Run(ctx context.Context, ts tool.Toolset, model Model, conv *Conversation, opts *Options) (*Result, error) {
	if ts == nil || model == nil || conv == nil {
		return &Result{}, errors.New("agent: Run needs a toolset, a model and a conversation")
	}
	if opts == nil {
		opts = &Options{}
	}
	r := &runner{ts: ts, model: model, conv: conv, opts: opts}
	return r.run(ctx)
}

type runner struct {
	ts    tool.Toolset
	model Model
	conv  *Conversation
	opts  *Options
	res   Result
	// back maps the names the model was given (tool.WireNames) to the
	// tools' names, from the last listing.
	back map[string]string
}

func (r *runner) emit(e Event) {
	if r.opts.OnEvent != nil {
		r.opts.OnEvent(e)
	}
}

func (r *runner) run(ctx context.Context) (*Result, error) {
	maxSteps := r.opts.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	system := r.systemPrompt(ctx)
	for step := 1; step <= maxSteps; step++ {
		if err := ctx.Err(); err != nil {
			return &r.res, fmt.Errorf("agent: %w", context.Cause(ctx))
		}
		specs, err := r.specs(ctx)
		if err != nil {
			return &r.res, fmt.Errorf("agent: listing the tools: %w", err)
		}
		req := &llm.ChatRequest{
			Messages:    r.messages(system),
			Tools:       specs,
			MaxTokens:   r.opts.MaxTokens,
			Temperature: r.opts.Temperature,
		}
		resp, err := r.ask(ctx, step, req)
		r.res.Steps = step
		if err != nil {
			return &r.res, fmt.Errorf("agent: step %d: %w", step, err)
		}
		r.res.Usage.Add(resp.Usage)
		r.res.FinishReason = resp.FinishReason()
		msg := resp.Message()
		calls := append([]llm.ToolCall(nil), msg.ToolCalls...) // as the model wrote them
		args := make([]json.RawMessage, len(msg.ToolCalls))
		argErrs := make([]string, len(msg.ToolCalls))
		for i := range msg.ToolCalls {
			args[i], argErrs[i] = checkCall(&msg.ToolCalls[i])
			if argErrs[i] != "" {
				// The history gets an arguments object servers accept
				// (some re-parse it); the tool message says what was
				// wrong with the original.
				msg.ToolCalls[i].Function.Arguments = "{}"
			}
		}
		r.conv.Append(msg)
		if msg.Content != "" {
			r.emit(Event{Kind: EventText, Step: step, Text: msg.Content})
		}
		if len(msg.ToolCalls) == 0 {
			r.res.Text = msg.Content
			return &r.res, nil
		}
		for i, call := range calls {
			if ctx.Err() != nil {
				r.conv.Append(llm.ToolResult(call.ID, "The call was not run: the user cancelled the turn."))
				continue
			}
			r.conv.Append(llm.ToolResult(call.ID, r.runCall(ctx, step, call, args[i], argErrs[i])))
		}
		if ctx.Err() != nil {
			return &r.res, fmt.Errorf("agent: %w", context.Cause(ctx))
		}
	}
	return &r.res, fmt.Errorf("agent: %w (%d requests)", ErrMaxSteps, maxSteps)
}

// systemPrompt composes the host's system prompt and the libraries'.
func (r *runner) systemPrompt(ctx context.Context) string {
	parts := []string{}
	if s := strings.TrimSpace(r.opts.System); s != "" {
		parts = append(parts, s)
	}
	if p, ok := r.ts.(prompter); ok && !r.opts.NoLibraryPrompts {
		for _, sp := range p.SystemPrompts(ctx) {
			if t := strings.TrimSpace(sp.Text); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// messages returns the request's messages: the system prompt, then the
// conversation. A conversation that starts with its own system message
// keeps it, with the composed prompt after its text.
func (r *runner) messages(system string) []llm.Message {
	msgs := r.conv.Messages()
	if system == "" {
		return msgs
	}
	if len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		first := msgs[0]
		first.Content = strings.TrimRight(first.Content, "\n") + "\n\n" + system
		msgs[0] = first
		return msgs
	}
	return append([]llm.Message{llm.System(system)}, msgs...)
}

// specs lists the tools' OpenAI specs. It runs at every step, since a
// tool may mount a library or register tools meanwhile.
func (r *runner) specs(ctx context.Context) ([]json.RawMessage, error) {
	infos, err := r.ts.Tools(ctx)
	if err != nil {
		return nil, err
	}
	// Function names are restricted ("alias::tool" of MCP servers is
	// not accepted): the model gets wire names, mapped back at the call.
	names := make([]string, len(infos))
	for i := range infos {
		names[i] = infos[i].Name
	}
	wire, back := tool.WireNames(names)
	r.back = back
	specs := make([]json.RawMessage, len(infos))
	for i := range infos {
		info := infos[i]
		info.Name = wire[i]
		specs[i] = info.Spec(tool.FormatOpenAI)
	}
	return specs, nil
}

// ask sends one request, streaming when asked to and able.
func (r *runner) ask(ctx context.Context, step int, req *llm.ChatRequest) (*llm.ChatResponse, error) {
	if sm, ok := r.model.(StreamModel); ok && r.opts.Stream {
		return sm.Stream(ctx, req, func(d llm.Delta) {
			if d.Content != "" {
				r.emit(Event{Kind: EventTextDelta, Step: step, Text: d.Content})
			}
		})
	}
	return r.model.Chat(ctx, req)
}

// checkCall returns a call's arguments as a JSON object, or what is wrong
// with them. Empty arguments are {} (models send nothing for tools without
// parameters).
func checkCall(c *llm.ToolCall) (json.RawMessage, string) {
	if c.Function.Name == "" {
		return nil, "The tool call has no function name. Call one of the tools by its name."
	}
	raw := bytes.TrimSpace([]byte(c.Function.Arguments))
	if len(raw) == 0 {
		return json.RawMessage(`{}`), ""
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		why := "not a JSON object"
		if err != nil {
			why = "not valid JSON (" + err.Error() + ")"
		}
		return nil, fmt.Sprintf("The arguments of the call to '%s' are %s: %s. Call the tool again with its arguments as one JSON object.",
			c.Function.Name, why, excerpt(c.Function.Arguments, 200))
	}
	return json.RawMessage(raw), ""
}

// runCall runs one tool call and returns the text of its tool message.
func (r *runner) runCall(ctx context.Context, step int, call llm.ToolCall, args json.RawMessage, argErr string) string {
	shown := call
	r.emit(Event{Kind: EventToolCall, Step: step, Call: &shown})
	start := time.Now()
	var res *tool.Result
	var err error
	if argErr != "" {
		err = &tool.InvalidArgumentsError{Tool: call.Function.Name, Message: argErr}
		res = tool.Failure(argErr)
		res.StatusCode = 400
	} else {
		r.res.ToolCalls++
		res, err = r.call(ctx, call.Function.Name, args)
		if err != nil {
			res = tool.ErrorResult(err)
		}
	}
	r.emit(Event{Kind: EventToolResult, Step: step, Call: &shown, Result: res, Err: err, Elapsed: time.Since(start)})
	return r.toolText(res)
}

// call runs a call through the toolset.
func (r *runner) call(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
	if real, ok := r.back[name]; ok {
		name = real
	}
	opts := &tool.CallOptions{Workspace: r.opts.Workspace, Context: r.opts.Context, Conversation: r.conv, Respond: r.opts.Respond}
	if c, ok := r.ts.(caller); ok && r.opts.Respond == nil {
		return c.Call(ctx, name, args, opts)
	}
	return tool.Call(ctx, r.ts, name, args, opts)
}

// toolText is what the model reads of a result: the output or the error,
// bounded, then the prompt_injection.
func (r *runner) toolText(res *tool.Result) string {
	limit := r.opts.MaxToolOutput
	if limit <= 0 {
		limit = DefaultMaxToolOutput
	}
	text := truncate(res.Text(), limit)
	if pi := res.PromptInjection(); pi != "" {
		pi = truncate(pi, limit)
		if !strings.HasPrefix(pi, "\n") && text != "" {
			text += "\n\n"
		}
		text += pi
	}
	return text
}

// truncate cuts s to at most limit bytes at a rune boundary, with a note
// saying how much was left out.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[... %d more bytes not shown]", len(s)-cut)
}

// excerpt returns the start of s for a message, quoted.
func excerpt(s string, n int) string {
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	b, _ := json.Marshal(s)
	return string(b)
}
