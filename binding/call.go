package binding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/lcptools/lcp/discover"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/internal/jsonscan"
	"github.com/lcptools/lcp/pysrc"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
)

// stateResetNote is added to the first result served by a fresh worker
// after its predecessor died.
const stateResetNote = "The tool library's worker was restarted after it died: its module state was reset."

// run executes one call with the LCP execution contract (SPEC §7).
func (b *Binding) run(ctx context.Context, e *entry, c *tool.CallRequest) (*tool.Result, error) {
	name := e.info.Name
	args, err := b.prepareArgs(e, c.Arguments)
	if err != nil {
		return nil, err
	}
	cfg, err := b.config(e.file.Stem)
	if err != nil {
		return nil, &tool.InvalidArgumentsError{Tool: name, Message: err.Error()}
	}
	ws, err := b.workspace(c.Workspace)
	if err != nil {
		return nil, &tool.InvalidArgumentsError{Tool: name, Message: err.Error()}
	}
	callCtx := []byte(`{}`)
	if c.Context != nil {
		if callCtx, err = json.Marshal(c.Context); err != nil {
			return nil, &tool.InvalidArgumentsError{Tool: name, Message: "tool_context cannot be sent to Python: " + err.Error()}
		}
	}
	lib := e.library()
	req := &worker.Request{
		CallID:    c.CallID,
		Workspace: ws,
		Library:   lib,
		Function:  name,
		Args:      args,
		Context:   callCtx,
		Config:    cfg,
		Handlers:  b.handlers(),
		Timeout:   b.opts.CallTimeout,
		// The handler may run the call in its caller's goroutine
		// (HandlerOptions.ReturnsOnCancel): a cancelled call returns at
		// once and stops in the background.
		ReturnOnCancel: true,
	}
	if b.opts.Host != nil {
		req.HasLLM = b.opts.Host.HasLLM()
	}
	req.HasLLM = req.HasLLM || c.Generator != nil
	req.HasDiscussion = c.Conversation != nil
	host := &callHost{b: b, ctx: ctx, call: c, stem: e.file.Stem, ws: ws}
	if b.ownPool {
		b.live.Store(c.CallID, host)
		defer b.live.Delete(c.CallID)
	}
	gen, reloaded := b.begin(lib, true)
	reply, err := b.pool.Call(ctx, req, host)
	if cut := b.end(lib, gen); cut && err != nil && ctx.Err() == nil {
		return nil, &tool.TransportError{Tool: name, Err: fmt.Errorf("the library %s was reloaded from disk while the call ran, which stopped it: %w", e.file.Stem, err)}
	}
	if err != nil {
		return b.callError(ctx, name, err)
	}
	if reply.NotModuleLevel && fileChanged(e.file.Path, e.file.Sum) {
		// The binding read the function in the file, the worker did not
		// find it: the file changed on disk (it is being rewritten) after
		// the binding read it. The worker restarts before the next call,
		// which reads the file again.
		st := b.state(lib.Path)
		st.mu.Lock()
		st.pending = true
		st.mu.Unlock()
		return failure(fmt.Sprintf("The library '%s' is being reloaded: its file changed on disk while it was loaded, and '%s' was not in it at that moment. Call the tool again shortly.", e.file.Stem, name), ""), nil
	}
	res, err := b.result(name, e.file.Stem, reply)
	if err == nil && reloaded {
		if res.Payload == nil {
			res.Payload = map[string]json.RawMessage{}
		}
		res.Payload["_reloaded"] = reloadedPayload()
	}
	return res, err
}

// fileChanged reports whether the file at path no longer has the sum
// the binding read (or cannot be read).
func fileChanged(path string, sum discover.Sum) bool {
	b, err := os.ReadFile(path)
	return err != nil || discover.SumOf(b) != sum
}

// prepareArgs applies steps 2-4 of the contract: hidden names removed,
// defaults filled, values coerced. It returns the arguments as a JSON
// object, its keys sorted so that requests are deterministic (the last of
// duplicate keys wins, as in a decoded object). The object is walked, not
// decoded: values pass through as the caller wrote them.
func (b *Binding) prepareArgs(e *entry, raw json.RawMessage) (json.RawMessage, error) {
	name := e.info.Name
	var stack [12]arg
	args := stack[:0]
	if t := bytes.TrimSpace(raw); len(t) > 0 && string(t) != "null" {
		if t[0] != '{' {
			return nil, &tool.InvalidArgumentsError{Tool: name, Message: "arguments must be a JSON object"}
		}
		if !json.Valid(t) {
			var m map[string]json.RawMessage
			err := json.Unmarshal(t, &m) // for its words
			if err == nil {
				err = errors.New("invalid JSON")
			}
			return nil, &tool.InvalidArgumentsError{Tool: name, Message: "arguments are not valid JSON: " + err.Error()}
		}
		var kerr error
		_ = jsonscan.WalkObject(t, func(k, v []byte) bool {
			key, err := jsonscan.UnquoteKey(k)
			if err != nil {
				kerr = err
				return false
			}
			if pysrc.IsHiddenParam(key) {
				return true
			}
			if i := argIndex(args, key); i >= 0 {
				args[i].val = v
			} else {
				args = append(args, arg{key: key, val: v})
			}
			return true
		})
		if kerr != nil {
			return nil, &tool.InvalidArgumentsError{Tool: name, Message: "arguments are not valid JSON: " + kerr.Error()}
		}
	}
	filled := false // defaults the call left out are not validated
	for _, p := range e.src.Params {
		i := argIndex(args, p.Name)
		if i < 0 {
			var v json.RawMessage
			switch {
			case p.Default != nil:
				v = p.Default
			case p.NoneIfOmitted:
				v = json.RawMessage("null")
			default:
				continue
			}
			args = append(args, arg{key: p.Name, val: v, filled: true})
			i, filled = len(args)-1, true
		}
		if !b.opts.NoCoercion {
			args[i].val = tool.Coerce(p.Type, args[i].val)
		}
	}
	slices.SortFunc(args, func(a, b arg) int { return strings.Compare(a.key, b.key) })
	if e.schema != nil {
		given := appendArgs(nil, args, false)
		if vs := e.schema.ValidateValidJSON(given); len(vs) > 0 {
			return nil, &tool.InvalidArgumentsError{Tool: name, Message: "arguments do not match the input schema", Violations: vs}
		}
		if !filled {
			return given, nil
		}
	}
	return appendArgs(nil, args, true), nil
}

// arg is one member of a call's arguments.
type arg struct {
	key    string
	val    json.RawMessage
	filled bool // a default the call left out
}

func argIndex(args []arg, key string) int {
	for i := range args {
		if args[i].key == key {
			return i
		}
	}
	return -1
}

// appendArgs appends args as a JSON object; withFilled says whether the
// defaults the call left out are written too.
func appendArgs(dst []byte, args []arg, withFilled bool) []byte {
	if dst == nil {
		n := 2
		for _, a := range args {
			n += len(a.key) + len(a.val) + 4
		}
		dst = make([]byte, 0, n)
	}
	dst = append(dst, '{')
	first := true
	for _, a := range args {
		if a.filled && !withFilled {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendKey(dst, a.key)
		dst = append(dst, ':')
		dst = append(dst, a.val...)
	}
	return append(dst, '}')
}

// appendKey appends a key as json.Marshal writes it.
func appendKey(dst []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			kb, _ := json.Marshal(k)
			return append(dst, kb...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, k...)
	return append(dst, '"')
}

// result turns the worker's reply into the normalized result.
func (b *Binding) result(name, stem string, reply *worker.Reply) (*tool.Result, error) {
	var res *tool.Result
	switch {
	case reply.LoadError != nil:
		res = failure(fmt.Sprintf("Error loading tool library '%s': %s: %s", stem, reply.LoadError.Type, reply.LoadError.Message), reply.LoadError.Traceback)
	case reply.NotModuleLevel:
		res = failure(fmt.Sprintf("Tool function '%s' is not defined at module level of '%s'.", name, stem), "")
	case reply.Exception != nil:
		res = failure(fmt.Sprintf("Error executing '%s': %s: %s", name, reply.Exception.Type, reply.Exception.Message), reply.Exception.Traceback)
	default:
		var err error
		res, err = tool.Normalize(reply.Value)
		if err != nil {
			return nil, &tool.ProtocolError{Tool: name, Message: err.Error()}
		}
		if conv := contentNotesDropped(reply.Converted); len(conv) > 0 {
			if res.Payload == nil {
				res.Payload = map[string]json.RawMessage{}
			}
			res.Payload["_converted"] = conv
		}
	}
	if reply.StateReset {
		if res.Payload == nil {
			res.Payload = map[string]json.RawMessage{}
		}
		note, _ := json.Marshal(stateResetNote)
		res.Payload["_state_reset"] = note
	}
	return res, nil
}

// contentNotesDropped removes from the worker's conversion notes those of
// bytes given as the data or blob of a content block (tool.ContentKey):
// base64 is what a block carries there, so a tool may put bytes in its
// blocks without a note about it.
func contentNotesDropped(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	var notes []struct {
		Path string `json:"path"`
		From string `json:"from"`
	}
	if json.Unmarshal(raw, &notes) != nil {
		return raw
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || len(items) != len(notes) {
		return raw
	}
	prefix := "/" + tool.ContentKey + "/"
	kept := items[:0]
	for i, n := range notes {
		if n.From == "bytes" && strings.HasPrefix(n.Path, prefix) &&
			(strings.HasSuffix(n.Path, "/data") || strings.HasSuffix(n.Path, "/resource/blob")) {
			continue
		}
		kept = append(kept, items[i])
	}
	if len(kept) == len(notes) {
		return raw
	}
	if len(kept) == 0 {
		return nil
	}
	out, _ := json.Marshal(kept)
	return out
}

func failure(msg, traceback string) *tool.Result {
	r := tool.Failure(msg)
	if traceback != "" {
		tb, _ := json.Marshal(traceback)
		r.Payload = map[string]json.RawMessage{"traceback": tb}
	}
	return r
}

// callError maps a worker error to an engine error or a failed result.
func (b *Binding) callError(ctx context.Context, name string, err error) (*tool.Result, error) {
	var (
		timeout *worker.TimeoutError
		crash   *worker.CrashError
		interp  *worker.InterpreterError
		start   *worker.StartError
		big     *worker.ResultTooLargeError
		proto   *worker.ProtocolError
	)
	switch {
	case errors.As(err, &timeout):
		if timeout.Timeout == 0 && ctx.Err() != nil {
			return nil, tool.ContextError(ctx, name)
		}
		return nil, &tool.TimeoutError{Tool: name, Limit: timeout.Timeout}
	case errors.Is(err, worker.ErrCancelled) || errors.Is(err, context.Canceled):
		return nil, tool.ContextError(ctx, name)
	case errors.As(err, &crash):
		return nil, &tool.TransportError{Tool: name, Err: fmt.Errorf("%w; the next call starts a fresh worker and the library's state is reset", err)}
	case errors.As(err, &interp):
		return nil, &tool.TransportError{Tool: name, Err: err}
	case errors.As(err, &start) && !errors.Is(err, worker.ErrClosed):
		return nil, &tool.TransportError{Tool: name, Err: fmt.Errorf("%w; the next call starts another worker", err)}
	case errors.As(err, &big):
		return tool.Failure(fmt.Sprintf("Error executing '%s': the return value is too large (%d bytes, limit %d)", name, big.Size, big.Limit)), nil
	case errors.As(err, &proto):
		return nil, &tool.ProtocolError{Tool: name, Message: err.Error()}
	case errors.Is(err, worker.ErrClosed):
		return nil, &tool.ClosedError{What: "LCP binding"}
	}
	return nil, &tool.TransportError{Tool: name, Err: err}
}

// callHost answers what a running Python tool asks the host, through its
// call (so that requests surface as tool.Requests to its caller and
// output as its events) and the binding's Host. call is nil for the
// functions the binding runs itself (prompt functions, registration).
type callHost struct {
	b    *Binding
	ctx  context.Context // the call's context
	call *tool.CallRequest
	stem string // the library's
	ws   string // the call's workspace
}

func (h *callHost) Confirm(_ context.Context, r worker.ConfirmRequest) (string, string) {
	req := &tool.Request{Kind: tool.KindConfirm, Source: r.Source, Label: r.Label, Argv: r.Argv, Title: r.Label}
	if h.b.opts.ConfirmNote != nil {
		if note := h.b.opts.ConfirmNote(h.stem, h.ws); note != "" {
			// Comment lines first, so that a terminal that cuts a long
			// source keeps them.
			req.Prompt = note
			req.Source = "# " + strings.ReplaceAll(note, "\n", "\n# ") + "\n" + r.Source
		}
	}
	resp, err := h.call.Ask(h.ctx, req)
	if err == nil && resp.Action == tool.Cancel {
		err = &tool.CancelledError{Tool: h.call.Tool, Reason: resp.Reason}
	}
	if err != nil {
		return string(tool.Reject), "Operation cancelled: " + err.Error()
	}
	d, reason := hitl.ConfirmReply(resp)
	if d == string(tool.Reject) && reason == "" {
		reason = "The operator declined."
	}
	return d, reason
}

// Interact asks the question of a user_interaction_handler dict. A dict
// that is not a valid request gets None, and a warning in the call's log.
func (h *callHost) Interact(_ context.Context, raw json.RawMessage) *string {
	r, err := hitl.ParseInteraction(raw)
	if err != nil {
		h.call.Emit(tool.Event{Kind: tool.EventLog, Level: "warning", Text: "user_interaction_handler: " + err.Error()})
		return nil
	}
	resp, err := h.call.Ask(h.ctx, r)
	if err != nil {
		return nil
	}
	return hitl.InteractionReply(resp)
}

func (h *callHost) ExecuteTool(_ context.Context, name string, params json.RawMessage) json.RawMessage {
	res := tool.Failure(errNoHost.Error())
	if h.b.opts.Host != nil {
		res = h.b.opts.Host.ExecuteTool(h.ctx, h.call, name, params)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		raw, _ = json.Marshal(tool.Failure("the nested result cannot be encoded: " + err.Error()))
	}
	return raw
}

// Generate runs generate_text: with the call's language model when it has
// one (the host's configured model, or the sampling of the MCP client
// that called), else with the Host's.
func (h *callHost) Generate(_ context.Context, r worker.GenerateRequest) (string, error) {
	if h.call != nil && h.call.Generator != nil {
		return h.call.Generator.GenerateJSON(h.ctx, r.Prompt, r.Options)
	}
	if h.b.opts.Host == nil || !h.b.opts.Host.HasLLM() {
		return "", errors.New("no LLM is configured in this host")
	}
	return h.b.opts.Host.Generate(h.ctx, GenerateRequest{Prompt: r.Prompt, Options: r.Options, Library: r.Library})
}

func (h *callHost) Discussion(context.Context) json.RawMessage {
	if h.call == nil || h.call.Conversation == nil {
		return nil
	}
	return h.call.Conversation.JSON()
}

// Output reports what the call's tool printed as an event of the call.
func (h *callHost) Output(o worker.Output) {
	if h.call == nil {
		h.b.looseOutput(o)
		return
	}
	h.call.Emit(tool.Event{Kind: tool.EventOutput, Stream: o.Stream, Text: o.Data, Dropped: o.Dropped})
}

// Progress reports a Python tool's progress_handler call as an event of
// the call (an MCP client's notifications/progress, a page's bar).
func (h *callHost) Progress(_ context.Context, p worker.Progress) {
	if h.call == nil {
		return
	}
	e := tool.Event{Kind: tool.EventProgress, Progress: p.Progress, Text: p.Message}
	if p.Total != nil {
		e.Total = *p.Total
	}
	h.call.Emit(e)
}

// Log reports a Python tool's log_handler call as an event of the call
// (an MCP client's notifications/message).
func (h *callHost) Log(_ context.Context, r worker.LogRecord) {
	if h.call == nil {
		return
	}
	h.call.Emit(tool.Event{Kind: tool.EventLog, Level: r.Level, Text: r.Message, Data: r.Data})
}

// Service answers a request of the worker's generic host service with
// the binding's Services.
func (h *callHost) Service(_ context.Context, name string, params json.RawMessage) (json.RawMessage, error) {
	svc := h.b.opts.Services[name]
	if svc == nil {
		return nil, fmt.Errorf("the host offers no service %q", name)
	}
	return svc(h.ctx, &ServiceRequest{Name: name, Params: params, Library: h.stem, Call: h.call})
}

// The per-call events a Python tool reports reach the call's subscribers,
// and its requests to named services the binding's Services.
var (
	_ worker.OutputHost   = (*callHost)(nil)
	_ worker.ProgressHost = (*callHost)(nil)
	_ worker.LogHost      = (*callHost)(nil)
	_ worker.ServiceHost  = (*callHost)(nil)
)
