package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/lcptools/lcp/autonomy"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

// The library IDs of the built-in tools: the keys of host_tool_configs.
const (
	WorkspaceTools = "workspace_tools"
	SystemShell    = "system_shell"
	ExecutePython  = "execute_python"
)

// Defaults of the limits a host can change per library in
// host_tool_configs (keys in parentheses).
const (
	DefaultTimeout    = 60 * time.Second  // timeout, in seconds
	DefaultMaxTimeout = 600 * time.Second // max_timeout, in seconds
	DefaultMaxOutput  = 32 << 10          // max_output_bytes, per stream
	DefaultMaxRead    = 256 << 10         // max_read_bytes
)

// Options configure the built-in library.
type Options struct {
	// Workspace is the directory of calls that name none; "" means the
	// current directory.
	Workspace string
	// Configs is the host configuration per library (host_tool_configs),
	// keyed by WorkspaceTools, SystemShell and ExecutePython. Keys read:
	// autonomy_level (all), root_path (workspace_tools: the directory its
	// tools work in instead of the call's workspace), timeout and
	// max_timeout in seconds, max_output_bytes (system_shell,
	// execute_python), max_read_bytes (workspace_tools), python
	// (execute_python: the interpreter), and the sandbox's keys
	// (system_shell, execute_python: sandbox.KeySandbox and the others).
	Configs map[string]map[string]any
	// Python is the interpreter of execute_python when its configuration
	// names none; "" means python3 on PATH.
	Python string
	// Libraries picks the libraries of the toolset by ID, in the order
	// given (an unknown ID is an error); nil means all three.
	Libraries []string
}

// Libraries returns the metadata of the built-in libraries, for host UIs.
func Libraries() []tool.Library {
	return []tool.Library{workspaceLib, shellLib, pythonLib}
}

var (
	workspaceLib = tool.Library{ID: WorkspaceTools, Name: "Workspace Tools", Icon: "📁",
		Description: "Reads, writes, lists, finds and searches files inside the workspace; no path can leave it."}
	shellLib = tool.Library{ID: SystemShell, Name: "System Shell", Icon: "🖥️",
		Description: "Runs shell commands in the workspace with a time limit and output caps, under the operator's autonomy level."}
	pythonLib = tool.Library{ID: ExecutePython, Name: "Python Execution", Icon: "🐍",
		Description: "Runs Python code or scripts of the workspace with the configured interpreter, a time limit and output caps."}
)

// New returns the built-in default library as one toolset: workspace_tools,
// system_shell and execute_python, in that order. It needs no Python
// installed; execute_python's tools then fail with a clear error.
func New(opts *Options) (tool.Toolset, error) {
	if opts == nil {
		opts = &Options{}
	}
	o := *opts
	if o.Workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("builtin: %w", err)
		}
		o.Workspace = wd
	}
	b := &lib{opts: o, ledger: &sandbox.Ledger{}}
	makers := map[string]func() ([]*native.Tool, error){WorkspaceTools: b.workspaceTools, SystemShell: b.shellTools, ExecutePython: b.pythonTools}
	ids := o.Libraries
	if ids == nil {
		ids = []string{WorkspaceTools, SystemShell, ExecutePython}
	}
	var tools []*native.Tool
	for _, id := range ids {
		mk, ok := makers[id]
		if !ok {
			return nil, fmt.Errorf("builtin: no built-in library %q (there are %s, %s and %s)", id, WorkspaceTools, SystemShell, ExecutePython)
		}
		ts, err := mk()
		if err != nil {
			return nil, fmt.Errorf("builtin: %w", err)
		}
		tools = append(tools, ts...)
	}
	ts, err := native.New(&native.Options{Configs: o.Configs, Workspace: o.Workspace}, tools...)
	if err != nil {
		return nil, fmt.Errorf("builtin: %w", err)
	}
	c := &coercing{Toolset: ts, props: map[string]tool.PropertyTypes{}}
	for _, t := range tools {
		info := t.Info()
		c.props[info.Name] = tool.PropertyTypesOf(info.InputSchema)
	}
	return c, nil
}

type lib struct {
	opts Options
	// ledger remembers the files this session's sandboxed runs created.
	ledger *sandbox.Ledger
}

// newTool builds one native tool of a library from a hand-written schema (kept
// byte for byte, so specs list properties in a stable order) and a
// function that decodes its arguments into In.
func newTool[In any](lib tool.Library, name, description, schema string, caps tool.Capabilities, ann *tool.Annotations, fn func(ctx context.Context, in In) (map[string]any, error)) (*native.Tool, error) {
	info := tool.Info{Name: name, Description: description, InputSchema: json.RawMessage(schema), Library: lib, Interactions: caps}
	t, err := native.Raw(info, func(ctx context.Context, args json.RawMessage) (any, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, &tool.InvalidArgumentsError{Tool: name, Message: err.Error()}
		}
		return fn(ctx, in)
	})
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", name, err)
	}
	return t.InLibrary(lib).Interactive(caps).Annotate(ann), nil
}

// reads returns the annotations of a tool that only reads the workspace.
func reads(title string) *tool.Annotations {
	yes, no := true, false
	return &tool.Annotations{Title: title, ReadOnlyHint: &yes, OpenWorldHint: &no}
}

// changes returns the annotations of a tool that changes things: whether
// it may destroy or overwrite, whether repeating it changes nothing more,
// and whether it reaches beyond the workspace (commands and code may use
// the network when allowed).
func changes(title string, destructive, idempotent, openWorld bool) *tool.Annotations {
	no := false
	return &tool.Annotations{Title: title, ReadOnlyHint: &no, DestructiveHint: &destructive, IdempotentHint: &idempotent, OpenWorldHint: &openWorld}
}

// call returns the call a tool runs in (read-only); native tools always
// run inside one.
func call(ctx context.Context) *tool.CallRequest {
	if c := tool.CallFromContext(ctx); c != nil {
		return c
	}
	return &tool.CallRequest{Autonomy: autonomy.Strict}
}

// workspaceDir is the directory a call works in.
func (b *lib) workspaceDir(ctx context.Context) string {
	c := call(ctx)
	if c.Workspace != "" {
		return c.Workspace
	}
	return b.opts.Workspace
}

func configNumber(cfg map[string]any, key string) (float64, bool) {
	switch v := cfg[key].(type) {
	case float64:
		return v, true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

func configDuration(cfg map[string]any, key string, def time.Duration) time.Duration {
	if f, ok := configNumber(cfg, key); ok && f > 0 {
		return time.Duration(f * float64(time.Second))
	}
	return def
}

func configInt(cfg map[string]any, key string, def int) int {
	if f, ok := configNumber(cfg, key); ok && f >= 1 {
		return int(f)
	}
	return def
}

// timeLimit is the time limit of a call: the tool's timeout argument when
// given (bounded by max_timeout), else the library's timeout.
func timeLimit(cfg map[string]any, requested *float64) time.Duration {
	limit := configDuration(cfg, "timeout", DefaultTimeout)
	if requested != nil && *requested > 0 {
		limit = time.Duration(*requested * float64(time.Second))
	}
	if max := configDuration(cfg, "max_timeout", DefaultMaxTimeout); limit > max {
		limit = max
	}
	return limit
}

// approve asks the operator when the autonomy level wants it. risky says
// whether safe mode must ask; why lists the reasons shown to the operator.
// It returns "" when the action may go ahead, else the text of the
// failure the LLM reads.
func approve(ctx context.Context, risky bool, label, source string, why []string) (string, error) {
	level := call(ctx).Autonomy
	if !level.NeedsApproval(risky) {
		return "", nil
	}
	var prompt string
	switch {
	case level == autonomy.Strict && len(why) > 0:
		prompt = "Strict mode asks before every such action. Note:\n- " + strings.Join(why, "\n- ")
	case level == autonomy.Strict:
		prompt = "Strict mode asks before every such action."
	case len(why) > 0:
		prompt = "Safe mode asks because:\n- " + strings.Join(why, "\n- ")
	default:
		prompt = "The autonomy level asks before this action."
	}
	// The terminal shows the source, not the prompt: the reasons go first,
	// as comments, so that truncation keeps them.
	shown := source
	if len(why) > 0 {
		shown = "# " + strings.ReplaceAll(prompt, "\n", "\n# ") + "\n" + source
	}
	resp, err := tool.Ask(ctx, &tool.Request{Kind: tool.KindConfirm, Title: label, Label: label, Source: shown, Prompt: prompt})
	if err != nil {
		return "", err
	}
	switch resp.Action {
	case tool.Submit:
		if d, _ := resp.Value.(tool.Decision); d == tool.Allow || d == tool.Always {
			return "", nil
		}
	case tool.Cancel:
		return "", &tool.CancelledError{Tool: call(ctx).Tool, Reason: resp.Reason}
	}
	reason := strings.TrimSpace(resp.Reason)
	if reason == "" {
		reason = "no reason given"
	}
	return "The operator rejected this action: " + reason, nil
}

func failure(msg string, payload map[string]any) map[string]any {
	out := map[string]any{"success": false, "error": msg}
	for k, v := range payload {
		out[k] = v
	}
	return out
}

// coercing applies SPEC §7's coercion (tool.Coerce) to arguments before
// the native toolset validates them: LLMs often send "50" for 50 and
// "true" for true.
type coercing struct {
	*native.Toolset
	props map[string]tool.PropertyTypes // by tool
}

func (c *coercing) Handler(ctx context.Context, name string) (tool.Handler, error) {
	h, err := c.Toolset.Handler(ctx, name)
	if err != nil {
		return nil, err
	}
	return &coercingHandler{Handler: h, props: c.props[name]}, nil
}

type coercingHandler struct {
	tool.Handler
	props tool.PropertyTypes
}

func (h *coercingHandler) Invoke(ctx context.Context, inv tool.Invocation) (tool.Step, error) {
	inv.Arguments = h.props.CoerceArguments(inv.Arguments)
	return h.Handler.Invoke(ctx, inv)
}
