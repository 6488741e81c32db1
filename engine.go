// Package lcp is the tool engine: one inventory of LLM tools from LCP
// Python tool folders, the built-in library and MCP servers, with every
// call run safely — the operator's approval where a tool asks for it,
// questions to the user, per-workspace Python workers, and crashes, hangs
// and bad input contained. docs/embedding.md is the guide to embedding it;
// docs/writing-tools.md tells the LCP contract, which the package docs
// cite by section (contract §7).
//
//	eng, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{"./my_tools"}})
//	if err != nil {
//		return err
//	}
//	defer eng.Close()
//	specs, _ := eng.Specs(ctx, tool.FormatOpenAI) // for the LLM
//	res := eng.ExecuteTool(ctx, "tool_greet", json.RawMessage(`{"name":"Ada"}`))
//	fmt.Println(res.Text())
//
// Libraries mount beside the tools folders — those of the folders and
// of the built-in default library, Go built-ins included (Config.Mount,
// Config.Builtins, MountToolLibrary) — and Config.Watch re-reads the tool
// files when they change (hot reload; Config.OnChange is told).
//
// The Engine is itself a tool.Toolset, so it composes with native Go tools
// and can be served over MCP. Confirmations and questions of the tools go
// to Config.Respond (typically a hitl.Broker's Respond with a terminal or
// web front end); without one, nothing is approved. What the tools print,
// their progress and their log records are events of their calls:
// Config.OnEvent sees those of every call, tool.CallOptions.OnEvent those
// of one.
//
// Python tools reach the host through lollms_client_instance: its whole
// inventory, the language model (Config.LLM) and the image, speech and
// transcription models (Config.TTI, TTS, STT). Through
// lollms_client.tools_bindings.mcp.MCPBinding they call MCP servers on the
// engine's MCP client, whose sessions the engine keeps and closes.
package lcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/lcptools/lcp/autonomy"
	"github.com/lcptools/lcp/binding"
	"github.com/lcptools/lcp/discover"
	"github.com/lcptools/lcp/internal/watch"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/mcp/oauth"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
)

// Config says where an engine's tools come from and how calls run. The
// zero value serves the built-in default library in the current directory.
type Config struct {
	// ToolsFolders and ToolFiles are LCP tool folders and single files
	// (SPEC §4). With neither, the built-in default library is used.
	ToolsFolders []string
	ToolFiles    []string
	// HostToolConfigs is host_tool_configs: per library stem, the config
	// its tools receive ("autonomy_level": "strict" | "safe" |
	// "full_access", and anything the library reads).
	HostToolConfigs map[string]map[string]any
	// Workspace is the default working directory of calls; empty means
	// the current directory.
	Workspace string
	// Python is the interpreter for Python tools; empty means python3 on
	// PATH.
	Python string
	// CallTimeout limits each call; zero means no limit.
	CallTimeout time.Duration
	// StoppedLimit is how long a Python worker with calls in flight may
	// stay stopped (SIGSTOP, SIGTSTP, a debugger; Linux only) before it is
	// killed, its calls failing with an error that says so (see
	// worker.Options.StoppedLimit). Zero means the default (10s),
	// negative never.
	StoppedLimit time.Duration
	// MemoryLimit caps each Python worker's address space in bytes; zero
	// means no limit.
	MemoryLimit int64
	// Sandbox runs every Python tool library's worker inside the kernel
	// sandbox (its workspace writable, .git read-only), as if each had
	// host_tool_configs[lib]["sandbox"] = "workspace-write"; a library's
	// own setting wins. The built-in shell and Python tools are sandboxed
	// in strict and safe regardless.
	Sandbox bool
	// SandboxBudget is the budget of every sandboxed run (the built-in
	// shell and Python tools', and sandboxed workers') whose library's host
	// configuration does not set its own (sandbox_run_memory_mb,
	// sandbox_disk_mb, sandbox_processes, sandbox_time_seconds). Only
	// TotalMemory, Disk, Processes and WallTime are read; zero fields keep
	// the sandbox's defaults (sandbox.DefaultTotalMemory, ...).
	SandboxBudget sandbox.Limits
	// NoCoercion turns off the coercion of string arguments (SPEC §7).
	NoCoercion bool
	// DynamicPrompts applies tool_<name>_prompt functions when listing
	// tools (on for hosts that feed an LLM; `lcp list` lists static specs).
	// Their results are cached per library until its files change (Watch,
	// Reload) or RefreshPrompts.
	DynamicPrompts bool
	// PromptTimeout limits each dynamic prompt function's run, the
	// worker's start included (default 5s).
	PromptTimeout time.Duration
	// Mount names libraries to mount beside the tools folders and files:
	// a library of a tools folder, else of the built-in default library —
	// the Go libraries workspace_tools, system_shell and execute_python,
	// and the Python ones (user_interactive_tools, user_interaction_demo)
	// — else an optional built-in library (mcp_bridge). An unknown name is
	// an error of New.
	Mount []string
	// Builtins adds the whole built-in default library after the tools
	// folders and files (without them, it is the inventory anyway). The
	// optional built-in libraries that HostToolConfigs configures
	// (mcp_bridge) join the built-in default library.
	Builtins bool
	// PreciseTypes reads Python annotations by their meaning (Literal ->
	// enum, list[int] -> array of integers, Optional -> not required,
	// unions -> anyOf) instead of SPEC §5's substring rule, for listing,
	// MCP and chat alike; host_tool_configs[<stem>]["precise_types"] =
	// true does it for one library. Off by default: the LCP rule is what
	// other LCP hosts produce.
	PreciseTypes bool
	// ValidateArguments checks the arguments of Python tool calls against
	// the tool's input schema after coercion, as native tools always are: a
	// bad call is an *tool.InvalidArgumentsError (status 400) listing each
	// violation with its JSON pointer. Off by default, as in the LCP
	// reference (a missing argument is Python's TypeError, status 500);
	// host_tool_configs[<stem>]["validate_arguments"] = true does it for
	// one library.
	ValidateArguments bool
	// Watch re-reads the tool files when they change on disk (hot
	// reload): changed, added and removed files of the tools folders, the
	// tool files and the mounted libraries are read again after a burst
	// of changes settles (WatchQuiet), the workers of the libraries
	// concerned restart before their next call (whose result carries
	// "_reloaded"), and OnChange is told. A file that no longer parses
	// keeps its last good tools, with a diagnostic.
	Watch bool
	// WatchQuiet is the quiet period that ends a burst of file changes
	// (default 100 ms).
	WatchQuiet time.Duration
	// OnChange is called after each reload (Watch, Reload) that changed
	// the tools or the diagnostics, from the goroutine that reloaded.
	OnChange func(Change)
	// MCPServers are MCP servers whose tools join the inventory, named
	// "<alias>::<tool>" (see mcp.LoadConfig for the configuration file).
	// A server that fails to start is a diagnostic; the rest works.
	MCPServers []mcp.ServerConfig
	// MCPStateDir holds the private state folders of the boxed stdio MCP
	// servers, one per alias; empty means mcp.DefaultStateDir().
	MCPStateDir string
	// MCPStderr receives the standard error of stdio MCP servers; nil
	// discards it.
	MCPStderr io.Writer
	// OnMCPStart, when set, follows the start of each MCP server of
	// MCPServers while New waits for them (see mcp.ClientOptions.OnStart):
	// a front end shows "starting MCP server X…" instead of silence.
	OnMCPStart func(alias string, started bool, tools int, err error)
	// MCPOAuth configures signing in to MCP servers that ask for OAuth
	// (token store, browser, time limit); nil means the defaults of
	// package mcp/oauth.
	MCPOAuth *oauth.Options
	// Toolsets are more toolsets for the inventory (native Go tools of
	// the host, MCP servers...), after the LCP tools; first name wins.
	Toolsets []tool.Toolset
	// Prompts are the host's own prompts (tool.NewPrompts), offered with
	// the libraries' system prompts and the MCP servers' prompts (see
	// Engine.Prompts); lcp mcp serves them all as MCP prompts.
	Prompts tool.PromptSet
	// LLM is the host's language model (an *llm.Client, say): Python tools
	// reach it through lollms_client_instance.generate_text, native tools
	// through tool.Generate. It is the model of every call; without it, a
	// call uses the model its caller gave (tool.CallOptions.Generator: lcp
	// mcp gives the client's, through MCP sampling), and a call with none
	// sees llm as None.
	LLM Generator
	// TTI, TTS and STT are the host's image, speech and transcription
	// models (an *llm.Client of an OpenAI-compatible server, or an
	// *llm.Router of several): Python tools reach them through
	// lollms_client_instance.generate_image, generate_audio and
	// transcribe_audio, and see client.tti, client.tts and client.stt as
	// None without them. Models that list their names (ModelLister) serve
	// list_models; switch_tti, switch_tts and switch_stt name the model of
	// the rest of the call (a Router's alias, or a model of the endpoint).
	TTI ImageGenerator
	TTS SpeechGenerator
	STT Transcriber
	// TTM, TTV and RAG are the host's music and video models and its
	// retrieval store, which the embedder implements (package
	// hostservices has HTTP examples): client.generate_music /
	// generate_song / generate_song_from_lyrics, generate_video,
	// query_rag and add_document_to_rag; client.ttm, client.ttv and
	// client.rag are None without them, and the calls raise the seed's
	// RuntimeError.
	TTM MusicGenerator
	TTV VideoGenerator
	RAG Retriever
	// Respond answers the confirmations and questions of calls made with
	// Engine.Call and ExecuteTool. Nil: confirmations are rejected and
	// questions declined, with a reason that says so.
	Respond func(ctx context.Context, r *tool.Request) tool.Response
	// MaxDepth bounds nested calls (a Python tool calling
	// lollms_client_instance.tools.execute_tool); default 8.
	MaxDepth int
	// Logger receives the engine's diagnostics; nil discards them.
	Logger *slog.Logger
	// OnEvent receives the events of every call (what the tools print,
	// their progress, their log records — never added to results), and the
	// output of Python workers that belongs to no call (without Tool and
	// CallID). It is called from the goroutine that reports the event, so
	// it must return quickly.
	OnEvent func(tool.Event)
	// OnCall is told when each call of the inventory starts and ends
	// (nested calls included), for metrics and logs; it must return
	// quickly.
	OnCall func(CallReport)
	// OnWorker is told when a Python worker process starts and ends (a
	// crash, a restart after one); it must return quickly.
	OnWorker func(WorkerEvent)
	// MaxResultBytes caps the JSON size of a Python tool's return value;
	// a larger one is refused with an engine error, without being read.
	// Zero means the worker's default (128 MiB).
	MaxResultBytes int
}

// Change says what a reload changed: tools added, removed or changed, the
// files concerned, and whether the diagnostics changed.
type Change = binding.Change

// Generator is the language model Python tools reach through
// lollms_client_instance.generate_text and native tools through
// tool.Generate; *llm.Client is one.
type Generator = tool.Generator

// Engine is a running inventory. It is safe for concurrent use.
type Engine struct {
	cfg      Config
	lcp      *binding.Binding
	builtins *builtinSet
	remote   *mcp.ClientToolset
	inv      *tool.Inventory
	watcher  *watch.Watcher
	prompts  tool.PromptSet
	bridge   *mcpBridge
	recovery *sandbox.Recovery
	handlers handlers
	// kept holds, per library and workspace ("stem\x00ws"), what the
	// sandbox of its newest workspace-write worker keeps read-only.
	kept sync.Map
	// callDefaults are the options of a call given none: the engine's
	// answers (made once; tool.Call does not change them).
	callDefaults *tool.CallOptions
}

// workerStartTimeout is the start budget of the engine's Python workers;
// zero is the worker package's default (30 s, a user's budget for a cold
// start). The tests set it to their two-minute hang detector, so that a
// machine busy enough to stretch python3's start past 30 s cannot fail a
// test that is not about the budget.
var workerStartTimeout time.Duration

// New builds the engine's inventory. Problems with individual tool files
// are diagnostics (Diagnostics), not errors; an invalid configuration (an
// unknown autonomy level, say) is an error.
func New(ctx context.Context, cfg *Config) (*Engine, error) {
	e := &Engine{}
	e.callDefaults = &tool.CallOptions{Respond: e.respond}
	if cfg != nil {
		e.cfg = *cfg
	}
	e.bridge = &mcpBridge{e: e}
	if err := autonomy.ValidateHostConfigs(e.cfg.HostToolConfigs); err != nil {
		return nil, fmt.Errorf("host tool configs: %w", err)
	}
	if e.cfg.MaxDepth <= 0 {
		e.cfg.MaxDepth = 8
	}
	e.cfg.HostToolConfigs = sandbox.ApplyBudget(e.cfg.HostToolConfigs, builtinIDs, e.cfg.SandboxBudget)
	e.recoverWorkspace()
	var sets []tool.Toolset
	useDefault := len(e.cfg.ToolsFolders) == 0 && len(e.cfg.ToolFiles) == 0
	e.builtins = &builtinSet{cfg: &e.cfg}
	if useDefault || e.cfg.Builtins {
		for _, id := range builtinIDs {
			if err := e.builtins.mount(id); err != nil {
				return nil, err
			}
		}
	}
	if useDefault {
		sets = append(sets, e.builtins)
	}
	poolOpts := &worker.Options{
		StartTimeout:   workerStartTimeout,
		Python:         e.cfg.Python,
		MemoryLimit:    e.cfg.MemoryLimit,
		Logger:         e.cfg.Logger,
		Wrap:           e.wrapWorker,
		OnProcess:      e.cfg.OnWorker,
		MaxResultBytes: e.cfg.MaxResultBytes,
		StoppedLimit:   e.cfg.StoppedLimit,
	}
	if e.cfg.Watch {
		// Files change under the workers: no __pycache__ whose second-
		// granular timestamps could hide an edit.
		poolOpts.Env = []string{"PYTHONDONTWRITEBYTECODE=1"}
	}
	// The binding runs the Python workers: it routes what they print to
	// the calls that printed it.
	b, err := binding.New(&binding.Options{
		Folders:           e.cfg.ToolsFolders,
		Files:             e.cfg.ToolFiles,
		Default:           defaultPythonFolders,
		Optional:          optionalPythonFolders,
		HostConfigs:       e.cfg.HostToolConfigs,
		Workspace:         e.cfg.Workspace,
		PoolOptions:       poolOpts,
		OnOutput:          e.cfg.OnEvent,
		CallTimeout:       e.cfg.CallTimeout,
		DynamicPrompts:    e.cfg.DynamicPrompts,
		PromptTimeout:     e.cfg.PromptTimeout,
		NoCoercion:        e.cfg.NoCoercion,
		PreciseTypes:      e.cfg.PreciseTypes,
		ValidateArguments: e.cfg.ValidateArguments,
		Host:              engineHost{e},
		Services:          e.services(),
		ConfirmNote:       e.confirmNote,
	})
	if err != nil {
		return nil, err
	}
	e.lcp = b
	var builtinPy []string
	if e.cfg.Builtins && !useDefault {
		builtinPy = b.DefaultLibraries()
	}
	if e.cfg.Builtins || useDefault {
		builtinPy = append(builtinPy, configuredOptional(e.cfg.HostToolConfigs)...)
	}
	for _, name := range builtinPy {
		if b.HasLibraryInFolders(name) {
			continue // the folders' own library of that name is served
		}
		if _, err := b.MountToolLibrary(name); err != nil {
			b.Close()
			e.builtins.Close()
			return nil, fmt.Errorf("built-in library %s: %w", name, err)
		}
	}
	for _, name := range e.cfg.Mount {
		if _, err := e.mount(name); err != nil {
			b.Close()
			e.builtins.Close()
			return nil, fmt.Errorf("mount %s: %w", name, err)
		}
	}
	// The Go built-ins (when serving the default library) come first, then
	// the LCP tools, then the Go built-ins mounted beside them, then MCP
	// servers and the host's own toolsets.
	sets = append(sets, b)
	if !useDefault {
		sets = append(sets, e.builtins)
	}
	if len(e.cfg.MCPServers) > 0 {
		remote, err := mcp.NewClientToolset(ctx, e.cfg.MCPServers, &mcp.ClientOptions{
			Respond: e.respond, Stderr: e.cfg.MCPStderr, Logger: e.cfg.Logger, OAuth: e.cfg.MCPOAuth,
			Workspace: e.cfg.Workspace, StateDir: e.cfg.MCPStateDir, OnStart: e.cfg.OnMCPStart,
			Autonomy: func(alias string) autonomy.Level { return autonomy.FromConfig(e.cfg.HostToolConfigs[alias]) },
		})
		if err != nil {
			b.Close()
			e.builtins.Close()
			return nil, fmt.Errorf("mcp servers: %w", err)
		}
		e.remote = remote
		sets = append(sets, remote)
	}
	sets = append(sets, e.cfg.Toolsets...)
	e.inv = tool.Compose(sets...)
	var remotePrompts tool.PromptSet
	if e.remote != nil {
		remotePrompts = e.remote
	}
	e.prompts = tool.ComposePrompts(libraryPrompts{b}, remotePrompts, e.cfg.Prompts)
	if e.cfg.Watch {
		w, err := watch.New(e.watchReload, &watch.Options{Quiet: e.cfg.WatchQuiet, Logger: e.cfg.Logger})
		if err != nil {
			e.inv.Close()
			return nil, fmt.Errorf("watch: %w", err)
		}
		e.watcher = w
		w.Set(b.WatchPaths())
	}
	return e, nil
}

// watchReload is the watcher's callback: read the files again, watch the
// directories that exist now, tell the host.
func (e *Engine) watchReload() {
	if _, err := e.Reload(context.Background()); err != nil && e.cfg.Logger != nil {
		e.cfg.Logger.Warn("reload", "err", err)
	}
	e.watcher.Set(e.lcp.WatchPaths())
}

// Reload reads the tool files again now, as the watcher of Config.Watch
// does after a change, and tells Config.OnChange what changed (when
// anything did). The prompt functions of the libraries whose files
// changed run again at the next listing.
func (e *Engine) Reload(ctx context.Context) (*Change, error) {
	c, err := e.lcp.Reload()
	if err != nil {
		return nil, err
	}
	if !c.Empty() && e.cfg.OnChange != nil {
		e.cfg.OnChange(*c)
	}
	return c, nil
}

// Tools lists the inventory.
func (e *Engine) Tools(ctx context.Context) ([]tool.Info, error) { return e.inv.Tools(ctx) }

// Handler returns a handler for one call. Config.OnEvent sees the
// events of the calls made through it, and Config.LLM, when set, is their
// language model.
func (e *Engine) Handler(ctx context.Context, name string) (tool.Handler, error) {
	h, err := e.inv.Handler(ctx, name)
	if err != nil {
		return h, err
	}
	if e.cfg.OnEvent != nil || e.cfg.LLM != nil {
		h = &engineHandler{Handler: h, sink: e.cfg.OnEvent, llm: e.cfg.LLM}
	}
	if e.cfg.OnCall != nil {
		h = &observed{Handler: h, name: name, report: e.cfg.OnCall}
	}
	return h, nil
}

// engineHandler adds the engine's subscriber and language model to the
// calls of a handler.
type engineHandler struct {
	tool.Handler
	sink func(tool.Event)
	llm  tool.Generator
}

func (h *engineHandler) Invoke(ctx context.Context, inv tool.Invocation) (tool.Step, error) {
	if inv.Parent == nil && h.sink != nil { // a nested call reaches the parent's subscribers
		inv.OnEvent = tool.JoinSinks(inv.OnEvent, h.sink)
	}
	if h.llm != nil {
		// The configured model is the model of every call; the caller's
		// (an MCP client's sampling) serves only where none is configured.
		inv.Generator = h.llm
	}
	return h.Handler.Invoke(ctx, inv)
}

// Close stops the watcher, every worker and every toolset, and ends the
// MCP sessions that Python tools opened.
func (e *Engine) Close() error {
	if e.watcher != nil {
		_ = e.watcher.Close()
	}
	err := e.inv.Close()
	e.bridge.close()
	return err
}

// services are the host services Python code reaches by name (see
// binding.Options.Services).
func (e *Engine) services() map[string]binding.Service {
	m := map[string]binding.Service{
		serviceMCPList: e.bridge.list,
		serviceMCPCall: e.bridge.call,
	}
	e.mediaServices(m)
	return m
}

// Workspace returns the default workspace.
func (e *Engine) Workspace() string { return e.lcp.Workspace() }

// Files returns the LCP tool files the engine has read (discovered and
// mounted), in order.
func (e *Engine) Files() []*discover.File { return e.lcp.Files() }

// MountToolLibrary registers the tools of the library named name (a
// directory name/ or a file name.py of a tools folder, or a library of the
// built-in default library: the Go workspace_tools, system_shell and
// execute_python, or a Python one), looked up in every tools folder and
// then in the built-in default library. Tools already registered are left
// alone; a clash with a tool of another file is a diagnostic. It is
// idempotent and reports whether the library is fully mounted afterwards;
// an unknown library is an error wrapping binding.ErrLibraryNotFound.
func (e *Engine) MountToolLibrary(name string) (bool, error) {
	ok, err := e.mount(name)
	if err == nil {
		_, _ = e.inv.Tools(context.Background())
	}
	return ok, err
}

func (e *Engine) mount(name string) (bool, error) {
	name = strings.TrimSuffix(name, ".py")
	if isBuiltin(name) && !e.lcp.HasLibraryInFolders(name) {
		if err := e.builtins.mount(name); err != nil {
			return false, err
		}
		return true, nil
	}
	return e.lcp.MountToolLibrary(name)
}

// MountIfAbsent mounts the library unless it is already fully mounted;
// it reports whether it is mounted afterwards.
func (e *Engine) MountIfAbsent(name string) (bool, error) {
	if e.IsLibraryMounted(name) {
		return true, nil
	}
	return e.MountToolLibrary(name)
}

// IsLibraryMounted reports whether every tool of the library named name
// is registered.
func (e *Engine) IsLibraryMounted(name string) bool {
	name = strings.TrimSuffix(name, ".py")
	if isBuiltin(name) && !e.lcp.HasLibraryInFolders(name) {
		return e.builtins.isMounted(name)
	}
	return e.lcp.IsLibraryMounted(name)
}

// FindLibraryForTool returns the name of the library that defines the
// tool ("" when none does): as binding.Binding.FindLibraryForTool in the
// tools folders and the built-in Python library, then among the Go
// built-in libraries.
func (e *Engine) FindLibraryForTool(name string) string {
	if lib := e.lcp.FindLibraryForTool(name); lib != "" {
		return lib
	}
	return e.builtins.libraryOf(name)
}

// IsToolAvailable reports whether the tool is in the inventory or can be
// mounted.
func (e *Engine) IsToolAvailable(ctx context.Context, name string) bool {
	if e.lcp.IsToolAvailable(name) || e.builtins.libraryOf(name) != "" {
		return true
	}
	infos, _ := e.inv.Tools(ctx)
	for i := range infos {
		if infos[i].Name == name {
			return true
		}
	}
	return false
}

// LoadToolByName returns the tool's info, mounting its library first if
// the tool is not registered yet.
func (e *Engine) LoadToolByName(ctx context.Context, name string) (tool.Info, error) {
	find := func() (tool.Info, bool) {
		infos, _ := e.inv.Tools(ctx)
		for i := range infos {
			if infos[i].Name == name {
				return infos[i], true
			}
		}
		return tool.Info{}, false
	}
	if info, ok := find(); ok {
		return info, nil
	}
	lib := e.FindLibraryForTool(name)
	if lib == "" {
		return tool.Info{}, &tool.UnknownToolError{Name: name}
	}
	if _, err := e.MountToolLibrary(lib); err != nil {
		return tool.Info{}, err
	}
	if info, ok := find(); ok {
		return info, nil
	}
	return tool.Info{}, &tool.UnknownToolError{Name: name}
}

// RegisterToolFromCode registers the tool_* functions of Python source
// code under prefix, as binding.Binding.RegisterToolFromCode does; it
// returns the registered names.
func (e *Engine) RegisterToolFromCode(ctx context.Context, prefix, code string) ([]string, error) {
	return e.lcp.RegisterToolFromCode(ctx, prefix, code)
}

// UnregisterToolsByPrefix removes the registered Python tools named
// prefix or starting with tool_<prefix>, and returns how many were
// removed.
func (e *Engine) UnregisterToolsByPrefix(prefix string) int {
	return e.lcp.UnregisterToolsByPrefix(prefix)
}

// Diagnostics returns what discovery, composition and prompt functions
// reported, for `lcp check` and host UIs.
func (e *Engine) Diagnostics(ctx context.Context) []tool.Diagnostic {
	_, _ = e.inv.Tools(ctx)
	d := e.lcp.Diagnostics()
	if e.remote != nil {
		d = append(d, e.remote.Diagnostics()...)
	}
	return append(d, e.inv.Diagnostics()...)
}

// Specs returns the tools' specs in format f.
func (e *Engine) Specs(ctx context.Context, f tool.Format) ([]json.RawMessage, error) {
	infos, err := e.Tools(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(infos))
	for i := range infos {
		out[i] = infos[i].Spec(f)
	}
	return out, nil
}

// RefreshPrompts forgets what the prompt functions returned: the next
// listing runs them again. Their results are otherwise kept until their
// library's file changes (see Config.Watch and Reload).
func (e *Engine) RefreshPrompts() { e.lcp.RefreshPrompts() }

// SystemPrompts returns the libraries' contributions to the system prompt.
func (e *Engine) SystemPrompts(ctx context.Context) []binding.SystemPrompt {
	return e.lcp.SystemPrompts(ctx)
}

// Call runs one call to completion and returns its result, or an engine
// error (unknown tool, invalid arguments, timeout, cancelled...). With no
// answering callback in opts (nil opts included), the engine's handlers
// (SetConfirmHandler, SetUserInteractionHandler) or else Config.Respond
// answer the call's confirmations and questions.
func (e *Engine) Call(ctx context.Context, name string, args json.RawMessage, opts *tool.CallOptions) (*tool.Result, error) {
	if opts == nil {
		return tool.Call(ctx, e, name, args, e.callDefaults)
	}
	if opts.Respond == nil && opts.Confirm == nil && opts.Interact == nil && opts.Parent == nil {
		co := *opts
		co.Respond = e.respond
		opts = &co
	}
	return tool.Call(ctx, e, name, args, opts)
}

// ExecuteTool runs one call the LCP way: it always returns the result
// object, engine errors included (404 unknown tool, 499 cancelled, 504
// timeout, 500 otherwise).
func (e *Engine) ExecuteTool(ctx context.Context, name string, args json.RawMessage) *tool.Result {
	res, err := e.Call(ctx, name, args, nil)
	if err != nil {
		return tool.ErrorResult(err)
	}
	return res
}

// engineHost gives Python tools the engine's services.
type engineHost struct{ e *Engine }

// ExecuteTool runs a nested call into the whole inventory, inside the
// Python tool's call: its requests go to the person the outer call asks,
// its events to the outer call's subscribers.
func (h engineHost) ExecuteTool(ctx context.Context, parent *tool.CallRequest, name string, params json.RawMessage) *tool.Result {
	depth := 0
	if parent != nil {
		depth = parent.Depth
	}
	if depth+1 > h.e.cfg.MaxDepth {
		return tool.Failure(fmt.Sprintf("Tool '%s' was not run: nested tool calls are limited to %d levels.", name, h.e.cfg.MaxDepth))
	}
	res, err := tool.Call(ctx, h.e, name, params, &tool.CallOptions{Parent: parent})
	if err != nil {
		return tool.ErrorResult(err)
	}
	return res
}

func (h engineHost) HasLLM() bool { return h.e.cfg.LLM != nil }

// Generate runs the host's LLM for a Python tool's generate_text.
func (h engineHost) Generate(ctx context.Context, r binding.GenerateRequest) (string, error) {
	if h.e.cfg.LLM == nil {
		return "", errors.New("no LLM is configured in this host")
	}
	return h.e.cfg.LLM.GenerateJSON(ctx, r.Prompt, r.Options)
}
