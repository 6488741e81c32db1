// Package binding is the LCP binding: Python tool folders as a
// tool.Toolset. It discovers tool files (package discover, no Python
// runs), serves their tools with the schemas read from source, and runs
// calls in persistent Python worker processes (package worker) with the
// LCP execution contract (§7): 404 for unknown names, hidden
// parameters removed, defaults filled, values coerced, the library loaded
// lazily with its host configuration, unknown parameters filtered, host
// objects injected, exceptions and crashes contained, and the result
// normalized like every other backend's.
//
// Libraries can be mounted at run time (MountToolLibrary and its family,
// contract §9) and registered from code; Reload reads the files again (hot
// reload: a file that stops parsing keeps its last good tools, and the
// workers of changed libraries restart before their next call). The
// results of prompt functions are cached per library until its files
// change or RefreshPrompts.
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
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	// Optional returns the folders of built-in libraries that are never
	// part of the default inventory: they are mounted by name
	// (MountToolLibrary), looked up after the Default folders.
	Optional func() ([]string, error)
	// HostConfigs is host_tool_configs: per library stem, the config its
	// init_tools_library receives.
	HostConfigs map[string]map[string]any
	// Workspace is the default workspace of calls that name none; empty
	// means the current directory.
	Workspace string
	// Pool runs the Python workers. Nil: the binding starts its own from
	// PoolOptions and closes it on Close; the output its workers print is
	// then routed to the events of the call that printed it, and output
	// that belongs to no call to OnOutput.
	Pool        *worker.Pool
	PoolOptions *worker.Options
	// OnOutput receives what the binding's own workers print outside any
	// call (Kind EventOutput, no Tool or CallID). Nil discards it.
	OnOutput func(tool.Event)
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
	// PreciseTypes reads the annotations of every library with the
	// reader's precise mapping (Literal -> enum, list[int] -> array of
	// integers, Optional -> not required, unions -> anyOf) instead of
	// SPEC §5's substring rule; a library opts in alone with
	// host_tool_configs[<stem>]["precise_types"] = true. Never the
	// default: the LCP rule is what other LCP hosts produce.
	PreciseTypes bool
	// ValidateArguments checks the arguments of every call against the
	// tool's input schema after coercion: a bad call is an
	// *tool.InvalidArgumentsError (400) listing each violation, instead of
	// whatever the Python function makes of it (SPEC §16: no validation by
	// default). A library opts in alone with
	// host_tool_configs[<stem>]["validate_arguments"] = true.
	ValidateArguments bool
	// NoHandlers tells tools that the host has no confirmation or
	// interaction handler: their proxies are None, as in a host without
	// them. By default every call can ask, and the caller of the handler
	// answers (tool.Call rejects and declines when it has no callbacks).
	NoHandlers bool
	// Host gives Python tools the host's services (execute_tool into the
	// whole inventory, the LLM). Nil: none. (The conversation of
	// discussion_instance is the call's: tool.CallRequest.Conversation.)
	Host Host
	// Services are the named host services that Python code reaches
	// through the worker's generic host request (worker.ServiceHost): the
	// proxies of the worker that need no protocol frame of their own (the
	// MCP client behind lollms_client.tools_bindings.mcp, the image and
	// audio models of lollms_client_instance) ask them by name. A name
	// that is not here is an error the Python code gets as a
	// RuntimeError.
	Services map[string]Service
	// ConfirmNote, when set, returns a note for every confirmation that a
	// call of the library asks in the workspace (the engine's: what the
	// sandbox of a workspace-write library keeps read-only); "" adds
	// nothing. The note goes into the request's Prompt and, as comment
	// lines, before its Source, which terminals show.
	ConfirmNote func(library, workspace string) string
}

// Service answers one request of Python code to a host service. Its
// result is JSON (nil means null); an error reaches the Python code as a
// RuntimeError with the error's text. ctx ends with the call that asked.
type Service func(ctx context.Context, r *ServiceRequest) (json.RawMessage, error)

// ServiceRequest is a request of Python code to a named host service.
type ServiceRequest struct {
	// Name is the service's name and Params its parameters (JSON).
	Name   string
	Params json.RawMessage
	// Library is the stem of the library whose code asks.
	Library string
	// Call is the tool call that asks, nil for the functions the binding
	// runs itself (prompt functions, registration from code). Nested calls
	// made for the request run inside it (tool.CallOptions.Parent), so
	// that their questions reach its caller.
	Call *tool.CallRequest
}

// Host is what the engine offers Python tools through
// lollms_client_instance.
type Host interface {
	// ExecuteTool runs a tool of the host's whole inventory as a call
	// inside parent (the Python tool's call) and returns its result;
	// engine errors are results too (tool.ErrorResult).
	ExecuteTool(ctx context.Context, parent *tool.CallRequest, name string, params json.RawMessage) *tool.Result
	// HasLLM reports whether Generate can work.
	HasLLM() bool
	// Generate asks the host's LLM for text.
	Generate(ctx context.Context, r GenerateRequest) (string, error)
}

// GenerateRequest is a Python tool asking the host's LLM for text through
// lollms_client_instance.generate_text.
type GenerateRequest struct {
	// Prompt is the prompt text.
	Prompt string
	// Options is a JSON object of the other keyword arguments (n_predict,
	// temperature...).
	Options json.RawMessage
	// Library is the stem of the asking library.
	Library string
}

// Binding serves LCP Python tools. It is safe for concurrent use.
type Binding struct {
	opts    Options
	pool    *worker.Pool
	ownPool bool
	ws      string

	// reloadMu serializes what rebuilds the table: Reload and mounting.
	reloadMu sync.Mutex
	// cache keeps the files read, for Reload.
	cache discover.Cache

	mu     sync.RWMutex
	tools  map[string]*entry
	order  []string
	files  []*discover.File
	diags  diagList
	closed bool
	// mounts are the libraries mounted at run time, by name, in order
	// (Reload reads them again); unregistered are the prefixes given to
	// UnregisterToolsByPrefix (Reload leaves their file tools out).
	mounts       []string
	unregistered []string
	// states tracks, per library file, the calls in flight and the
	// restarts a reload asks for.
	states map[string]*libState
	// dynamic holds the libraries registered from code, by pseudo path.
	dynamic map[string]worker.Library
	// defaults are the calls' defaults per library stem.
	defaultsMu sync.Mutex
	defaults   map[string]*tool.HandlerOptions

	// prompts caches what the prompt functions returned.
	prompts promptCache

	// live maps the id of each call in flight to its host, so that what
	// its worker prints reaches the call's events.
	live sync.Map // string -> *callHost

	// wsSeen is the workspace last found to be a directory, and when:
	// calls in quick succession skip the stat (see workspace).
	wsSeen atomic.Pointer[workspaceCheck]
	// now is the clock of wsSeen (tests replace it).
	now func() time.Time
}

// workspaceCheck records that a workspace was a directory at a time.
type workspaceCheck struct {
	path string
	at   time.Time
}

// workspaceRecheck is how long a workspace found to be a directory is
// taken to be one without a new stat(2). A call is checked against the
// workspace at most this long before it starts, as it could always be
// removed the moment after the check: the window is not new, it is wider.
// On a server, a stat per call was a tenth of the engine's CPU of a warm
// call.
const workspaceRecheck = 50 * time.Millisecond

// entry is one registered tool.
type entry struct {
	src  *pysrc.Tool
	file *discover.File
	code string // the module source of a tool registered from code
	info tool.Info
	// defaults are the defaults of its calls: the default workspace and
	// the library's host configuration.
	defaults *tool.HandlerOptions
	// schema validates the arguments of its calls, when validation is on.
	schema *tool.Schema
}

// New discovers the tools and returns a binding serving them. Discovery
// problems are diagnostics (Diagnostics), never errors.
func New(opts *Options) (*Binding, error) {
	b := &Binding{tools: make(map[string]*entry), defaults: make(map[string]*tool.HandlerOptions), now: time.Now}
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
		var po worker.Options
		if b.opts.PoolOptions != nil {
			po = *b.opts.PoolOptions
		}
		po.OnOutput = b.routeOutput
		if po.StartTimeout == 0 {
			po.StartTimeout = startTimeout
		}
		b.pool = worker.NewPool(&po)
		b.ownPool = true
	}
	t := b.read(nil)
	b.tools, b.order, b.files, b.diags = t.tools, t.order, t.files, t.diags
	return b, nil
}

// hostFlag reports whether host_tool_configs[stem][key] is true.
func (b *Binding) hostFlag(stem, key string) bool {
	v, _ := b.opts.HostConfigs[stem][key].(bool)
	return v
}

// precise says whether a library's schemas use the precise mapping.
func (b *Binding) precise(stem string) bool {
	return b.opts.PreciseTypes || b.hostFlag(stem, "precise_types")
}

// validates says whether a library's calls are validated.
func (b *Binding) validates(stem string) bool {
	return b.opts.ValidateArguments || b.hostFlag(stem, "validate_arguments")
}

// discoverOptions are the options of the binding's discoveries.
func (b *Binding) discoverOptions() discover.Options {
	return discover.Options{Folders: b.opts.Folders, Files: b.opts.Files, Default: b.opts.Default, PreciseTypes: b.precise, Cache: &b.cache}
}

// table is a binding's registry of tools, built by read.
type table struct {
	tools map[string]*entry
	order []string
	files []*discover.File
	diags diagList
}

// diagList is a binding's diagnostics, in order: discoveries' (made only
// when asked, see discover.Result.Diagnostics) and the binding's own.
type diagList struct{ parts []diagPart }

// diagPart is a discovery's diagnostics (res set) or diagnostics made now.
type diagPart struct {
	res  *discover.Result
	made []tool.Diagnostic
}

// add appends diagnostics made now.
func (l *diagList) add(ds ...tool.Diagnostic) { l.parts = append(l.parts, diagPart{made: ds}) }

// addResult appends a discovery's diagnostics.
func (l *diagList) addResult(res *discover.Result) { l.parts = append(l.parts, diagPart{res: res}) }

// all returns the diagnostics in a new slice.
func (l *diagList) all() []tool.Diagnostic {
	var out []tool.Diagnostic
	for _, p := range l.parts {
		if p.res != nil {
			out = append(out, p.res.Diagnostics()...)
		} else {
			out = append(out, p.made...)
		}
	}
	return out
}

// add registers e, replacing a tool of the same name in place.
func (b *Binding) addTo(t *table, e *entry) {
	stem := e.file.Stem
	b.defaultsMu.Lock()
	if b.defaults[stem] == nil {
		// run returns as soon as its context ends (the worker stops the
		// call in the background), so that Drive runs calls inline.
		b.defaults[stem] = &tool.HandlerOptions{Workspace: b.ws, Config: b.opts.HostConfigs[stem], ReturnsOnCancel: true}
	}
	e.defaults = b.defaults[stem]
	b.defaultsMu.Unlock()
	if _, ok := t.tools[e.info.Name]; !ok {
		t.order = append(t.order, e.info.Name)
	}
	t.tools[e.info.Name] = e
}

// add registers e in the binding's table. The caller holds b.mu.
func (b *Binding) add(e *entry) {
	t := &table{tools: b.tools, order: b.order}
	b.addTo(t, e)
	b.order = t.order
}

// newEntry makes the entry of a discovered tool.
func (b *Binding) newEntry(dt *discover.Tool) *entry {
	e := &entry{src: dt.Tool, file: dt.File, info: dt.Info()}
	if b.validates(dt.File.Stem) {
		// A schema the reader wrote always compiles; if one did not, the
		// calls would go unvalidated rather than fail.
		e.schema, _ = tool.CompileSchema(e.info.InputSchema)
	}
	return e
}

// newEntries makes the entries of discovered tools; a long list is made
// on every CPU, as the files were read: the tools' schemas are made here,
// most of a big reading's time after the parsing.
func (b *Binding) newEntries(tools []*discover.Tool) []*entry {
	entries := make([]*entry, len(tools))
	const chunk = 256
	if len(tools) <= chunk || runtime.GOMAXPROCS(0) == 1 {
		for i, dt := range tools {
			entries[i] = b.newEntry(dt)
		}
		return entries
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), (len(tools)+chunk-1)/chunk) {
		wg.Go(func() {
			for {
				from := int(next.Add(chunk)) - chunk
				if from >= len(tools) {
					return
				}
				for i := from; i < min(from+chunk, len(tools)); i++ {
					entries[i] = b.newEntry(tools[i])
				}
			}
		})
	}
	wg.Wait()
	return entries
}

// read discovers the tools from disk: the configured folders and files,
// then the libraries mounted so far (mounts; nil: none).
func (b *Binding) read(mounts []string) *table {
	res := discover.Run(b.discoverOptions())
	t := &table{tools: make(map[string]*entry, len(res.Tools)), order: make([]string, 0, len(res.Tools)), files: res.Files}
	t.diags.addResult(res)
	b.mu.RLock()
	unregistered := append([]string(nil), b.unregistered...)
	b.mu.RUnlock()
	entries := b.newEntries(res.Tools)
	for i, dt := range res.Tools {
		if slices.ContainsFunc(unregistered, func(p string) bool { return matchesPrefix(dt.Name, p) }) {
			continue
		}
		b.addTo(t, entries[i])
	}
	for _, name := range mounts {
		files, ok := b.libraryFiles(name)
		if !ok {
			t.diags.add(tool.Diagnostic{Severity: "warning", Code: "missing-library", Message: fmt.Sprintf("the mounted library %s is gone", name)})
			continue
		}
		b.mountInto(t, name, files)
	}
	return t
}

func matchesPrefix(name, prefix string) bool {
	return name == prefix || strings.HasPrefix(name, "tool_"+prefix)
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
// reported; a prompt function's failure is reported once, until its
// library is reloaded or the prompts refreshed.
func (b *Binding) Diagnostics() []tool.Diagnostic {
	b.mu.RLock()
	out := b.diags.all()
	b.mu.RUnlock()
	return append(out, b.prompts.diagnostics()...)
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
	return tool.NewHandler(&e.info, func(ctx context.Context, c *tool.CallRequest) (*tool.Result, error) {
		return b.run(ctx, e, c)
	}, e.defaults), nil
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

// workspace checks the workspace of a call (absolute already): the
// worker runs in it. A workspace found to be a directory less than
// workspaceRecheck ago is not looked at again.
func (b *Binding) workspace(ws string) (string, error) {
	if ws == "" {
		ws = b.ws
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", err
	}
	now := b.now()
	if c := b.wsSeen.Load(); c != nil && c.path == abs && now.Sub(c.at) < workspaceRecheck {
		return abs, nil
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", abs, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", abs)
	}
	b.wsSeen.Store(&workspaceCheck{path: abs, at: now})
	return abs, nil
}

// handlers says which proxies Python tools get.
func (b *Binding) handlers() worker.Handlers {
	if b.opts.NoHandlers {
		return worker.Handlers{}
	}
	return worker.Handlers{Confirm: true, Interact: true}
}

// startTimeout is the start budget of the workers of a pool the binding
// starts itself when PoolOptions names none; zero is the worker package's
// default (30 s, a user's budget for a cold start). The tests set it to
// their two-minute hang detector, so that a machine busy enough to stretch
// python3's start past 30 s cannot fail a test that is not about it.
var startTimeout time.Duration

var errNoHost = errors.New("this host offers no tool execution to Python tools")

// routeOutput hands what a worker printed to the call that printed it,
// and output that belongs to no call (or to a call already over) to
// Options.OnOutput.
func (b *Binding) routeOutput(o worker.Output) {
	if o.CallID != "" {
		if h, ok := b.live.Load(o.CallID); ok {
			h.(*callHost).Output(o)
			return
		}
	}
	b.looseOutput(o)
}

func (b *Binding) looseOutput(o worker.Output) {
	if b.opts.OnOutput != nil {
		b.opts.OnOutput(tool.Event{Kind: tool.EventOutput, Stream: o.Stream, Text: o.Data, Dropped: o.Dropped})
	}
}
