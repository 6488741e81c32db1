// Package binding is the LCP binding: Python tool folders as a
// tool.Toolset. It discovers tool files (package discover, no Python
// runs), serves their tools with the schemas read from source, and runs
// calls in persistent Python worker processes (package worker) with the
// LCP execution contract of SPEC §7: 404 for unknown names, hidden
// parameters removed, defaults filled, values coerced, the library loaded
// lazily with its host configuration, unknown parameters filtered, host
// objects injected, exceptions and crashes contained, and the result
// normalized like every other backend's.
//
//	b, err := binding.New(&binding.Options{Folders: []string{"./my_tools"}})
//	if err != nil {
//		return err
//	}
//	defer b.Close()
//	res, err := tool.Call(ctx, b, "tool_greet", json.RawMessage(`{"name":"Ada"}`), nil)
package binding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/lcptools/lcp/discover"
	"github.com/lcptools/lcp/pysrc"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
)

// Options configures a Binding.
type Options struct {
	// Folders, Files and Default say where the tools are (SPEC §4).
	Folders []string
	Files   []string
	Default func() ([]string, error)
	// HostConfigs is host_tool_configs: per library stem, the config its
	// init_tools_library receives.
	HostConfigs map[string]map[string]any
	// Workspace is the default workspace of calls that name none; empty
	// means the current directory.
	Workspace string
	// Pool runs the Python workers. Nil: the binding starts its own from
	// PoolOptions and closes it on Close.
	Pool        *worker.Pool
	PoolOptions *worker.Options
	// CallTimeout limits each call; zero means no limit.
	CallTimeout time.Duration
	// PromptTimeout limits each dynamic prompt function (default 5s).
	PromptTimeout time.Duration
	// DynamicPrompts makes Tools apply tool_<name>_prompt functions to the
	// descriptions (this loads the libraries that have them). Listing the
	// static specs, as `lcp list` does, runs no Python.
	DynamicPrompts bool
	// NoCoercion turns off the coercion of string arguments (SPEC §7 step 4).
	NoCoercion bool
	// NoHandlers tells tools that the host has no confirmation or
	// interaction handler: their proxies are None, as in a host without
	// them. By default every call can ask, and the caller of the handler
	// answers (tool.Call rejects and declines when it has no callbacks).
	NoHandlers bool
	// Host gives Python tools the host's services (execute_tool into the
	// whole inventory, the LLM, the conversation). Nil: none.
	Host Host
}

// Host is what the engine offers Python tools through
// lollms_client_instance and discussion_instance.
type Host interface {
	// ExecuteTool runs a tool of the host's whole inventory and returns
	// its LCP result object.
	ExecuteTool(ctx context.Context, name string, params json.RawMessage) json.RawMessage
	// HasLLM reports whether Generate can work.
	HasLLM() bool
	// Generate asks the host's LLM for text.
	Generate(ctx context.Context, r worker.GenerateRequest) (string, error)
	// Discussion returns the conversation as JSON, or nil when there is none.
	Discussion(ctx context.Context) json.RawMessage
}

// Binding serves LCP Python tools. It is safe for concurrent use.
type Binding struct {
	opts    Options
	pool    *worker.Pool
	ownPool bool
	ws      string

	mu     sync.RWMutex
	tools  map[string]*entry
	order  []string
	files  []*discover.File
	diags  []tool.Diagnostic
	closed bool
	// dynamic holds the libraries registered from code, by pseudo path.
	dynamic map[string]worker.Library
}

// entry is one registered tool.
type entry struct {
	src  *pysrc.Tool
	file *discover.File
	code string // the module source of a tool registered from code
	info tool.Info
}

// New discovers the tools and returns a binding serving them. Discovery
// problems are diagnostics (Diagnostics), never errors.
func New(opts *Options) (*Binding, error) {
	b := &Binding{tools: make(map[string]*entry)}
	if opts != nil {
		b.opts = *opts
	}
	ws := b.opts.Workspace
	if ws == "" {
		ws = "."
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return nil, fmt.Errorf("binding: workspace: %w", err)
	}
	b.ws = abs
	b.pool = b.opts.Pool
	if b.pool == nil {
		b.pool = worker.NewPool(b.opts.PoolOptions)
		b.ownPool = true
	}
	res := discover.Run(discover.Options{Folders: b.opts.Folders, Files: b.opts.Files, Default: b.opts.Default})
	b.files = res.Files
	b.diags = res.Diagnostics
	for _, t := range res.Tools {
		b.add(&entry{src: t.Tool, file: t.File, info: t.Info()})
	}
	return b, nil
}

// add registers e, replacing a tool of the same name in place. The caller
// holds b.mu or owns b exclusively.
func (b *Binding) add(e *entry) {
	if _, ok := b.tools[e.info.Name]; !ok {
		b.order = append(b.order, e.info.Name)
	}
	b.tools[e.info.Name] = e
}

// Files returns the tool files the binding has read (discovered and
// mounted), in order.
func (b *Binding) Files() []*discover.File {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return append([]*discover.File(nil), b.files...)
}

// Workspace returns the default workspace (absolute).
func (b *Binding) Workspace() string { return b.ws }

// Diagnostics returns what discovery, mounting and prompt functions
// reported.
func (b *Binding) Diagnostics() []tool.Diagnostic {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return append([]tool.Diagnostic(nil), b.diags...)
}

func (b *Binding) addDiag(d tool.Diagnostic) {
	b.mu.Lock()
	b.diags = append(b.diags, d)
	b.mu.Unlock()
}

// Tools lists the tools in discovery order. With Options.DynamicPrompts
// the descriptions come from the tools' prompt functions where they have
// one.
func (b *Binding) Tools(ctx context.Context) ([]tool.Info, error) {
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return nil, &tool.ClosedError{What: "LCP binding"}
	}
	infos := make([]tool.Info, 0, len(b.order))
	entries := make([]*entry, 0, len(b.order))
	for _, n := range b.order {
		e := b.tools[n]
		infos = append(infos, e.info)
		entries = append(entries, e)
	}
	b.mu.RUnlock()
	if b.opts.DynamicPrompts {
		b.applyPrompts(ctx, infos, entries)
	}
	return infos, nil
}

// Handler returns a handler for one call of the named tool.
func (b *Binding) Handler(_ context.Context, name string) (tool.Handler, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, &tool.ClosedError{What: "LCP binding"}
	}
	e, ok := b.tools[name]
	if !ok {
		return nil, &tool.UnknownToolError{Name: name}
	}
	return tool.NewHandler(&e.info, func(ctx context.Context, inv tool.Invocation) (*tool.Result, error) {
		return b.run(ctx, e, inv)
	}), nil
}

// Close stops the workers the binding started.
func (b *Binding) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	if b.ownPool {
		return b.pool.Close()
	}
	return nil
}

// library returns the worker library of an entry.
func (e *entry) library() worker.Library {
	return worker.Library{Path: e.file.Path, Stem: e.file.Stem, Code: e.code}
}

// config returns host_tool_configs[stem] as JSON.
func (b *Binding) config(stem string) (json.RawMessage, error) {
	c, ok := b.opts.HostConfigs[stem]
	if !ok || c == nil {
		return json.RawMessage(`{}`), nil
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("host_tool_configs[%q] cannot be sent to Python: %w", stem, err)
	}
	return raw, nil
}

// workspace resolves the workspace of a call.
func (b *Binding) workspace(ws string) (string, error) {
	if ws == "" {
		ws = b.ws
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", abs, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", abs)
	}
	return abs, nil
}

// handlers says which proxies Python tools get.
func (b *Binding) handlers() worker.Handlers {
	if b.opts.NoHandlers {
		return worker.Handlers{}
	}
	return worker.Handlers{Confirm: true, Interact: true}
}

var errNoHost = errors.New("this host offers no tool execution to Python tools")
