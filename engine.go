// Package lcp is the tool engine: one inventory of LLM tools from LCP
// Python tool folders, the built-in library and MCP servers, with every
// call run safely — the operator's approval where a tool asks for it,
// questions to the user, per-workspace Python workers, and crashes, hangs
// and bad input contained.
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
// The Engine is itself a tool.Toolset, so it composes with native Go tools
// and can be served over MCP. Confirmations and questions of the tools go
// to Config.Respond (typically a hitl.Broker's Respond with a terminal or
// web front end); without one, nothing is approved.
package lcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/lcptools/lcp/agent"
	"github.com/lcptools/lcp/binding"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/mcp"
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
	// MemoryLimit caps each Python worker's address space in bytes; zero
	// means no limit.
	MemoryLimit int64
	// Sandbox runs every Python tool library's worker inside the kernel
	// sandbox (its workspace writable, .git read-only), as if each had
	// host_tool_configs[lib]["sandbox"] = "workspace-write"; a library's
	// own setting wins. The built-in shell and Python tools are sandboxed
	// in strict and safe regardless.
	Sandbox bool
	// NoCoercion turns off the coercion of string arguments (SPEC §7).
	NoCoercion bool
	// DynamicPrompts applies tool_<name>_prompt functions when listing
	// tools (on for hosts that feed an LLM; `lcp list` lists static specs).
	DynamicPrompts bool
	// MCPServers are MCP servers whose tools join the inventory, named
	// "<alias>::<tool>" (see mcp.LoadConfig for the configuration file).
	// A server that fails to start is a diagnostic; the rest works.
	MCPServers []mcp.ServerConfig
	// MCPStderr receives the standard error of stdio MCP servers; nil
	// discards it.
	MCPStderr io.Writer
	// Toolsets are more toolsets for the inventory (native Go tools of
	// the host, MCP servers...), after the LCP tools; first name wins.
	Toolsets []tool.Toolset
	// LLM is the host's language model: Python tools reach it through
	// lollms_client_instance.generate_text. Nil: they see llm as None.
	LLM *llm.Client
	// Respond answers the confirmations and questions of calls made with
	// Engine.Call and ExecuteTool. Nil: confirmations are rejected and
	// questions declined, with a reason that says so.
	Respond func(ctx context.Context, r *tool.Request) tool.Response
	// MaxDepth bounds nested calls (a Python tool calling
	// lollms_client_instance.tools.execute_tool); default 8.
	MaxDepth int
	// Logger receives the engine's diagnostics; nil discards them.
	Logger *slog.Logger
	// OnOutput receives what Python tools print (never added to results).
	OnOutput func(worker.Output)
}

// Engine is a running inventory. It is safe for concurrent use.
type Engine struct {
	cfg    Config
	pool   *worker.Pool
	lcp    *binding.Binding
	remote *mcp.ClientToolset
	inv    *tool.Inventory
}

// New builds the engine's inventory. Problems with individual tool files
// are diagnostics (Diagnostics), not errors; an invalid configuration (an
// unknown autonomy level, say) is an error.
func New(ctx context.Context, cfg *Config) (*Engine, error) {
	e := &Engine{}
	if cfg != nil {
		e.cfg = *cfg
	}
	if err := hitl.ValidateHostConfigs(e.cfg.HostToolConfigs); err != nil {
		return nil, fmt.Errorf("host tool configs: %w", err)
	}
	if e.cfg.MaxDepth <= 0 {
		e.cfg.MaxDepth = 8
	}
	e.pool = worker.NewPool(&worker.Options{
		Python:      e.cfg.Python,
		MemoryLimit: e.cfg.MemoryLimit,
		OnOutput:    e.cfg.OnOutput,
		Logger:      e.cfg.Logger,
		Wrap:        e.wrapWorker,
	})
	var sets []tool.Toolset
	useDefault := len(e.cfg.ToolsFolders) == 0 && len(e.cfg.ToolFiles) == 0
	if useDefault {
		natives, err := defaultNative(&e.cfg)
		if err != nil {
			e.pool.Close()
			return nil, err
		}
		if natives != nil {
			sets = append(sets, natives)
		}
	}
	b, err := binding.New(&binding.Options{
		Folders:        e.cfg.ToolsFolders,
		Files:          e.cfg.ToolFiles,
		Default:        defaultPythonFolders,
		HostConfigs:    e.cfg.HostToolConfigs,
		Workspace:      e.cfg.Workspace,
		Pool:           e.pool,
		CallTimeout:    e.cfg.CallTimeout,
		DynamicPrompts: e.cfg.DynamicPrompts,
		NoCoercion:     e.cfg.NoCoercion,
		Host:           engineHost{e},
	})
	if err != nil {
		e.pool.Close()
		return nil, err
	}
	e.lcp = b
	// The Go built-ins (when serving the default library) come first, then
	// the LCP tools, then MCP servers and the host's own toolsets.
	sets = append(sets, b)
	if len(e.cfg.MCPServers) > 0 {
		remote, err := mcp.NewClientToolset(ctx, e.cfg.MCPServers, &mcp.ClientOptions{
			Respond: e.cfg.Respond, Stderr: e.cfg.MCPStderr, Logger: e.cfg.Logger,
		})
		if err != nil {
			b.Close()
			e.pool.Close()
			return nil, fmt.Errorf("mcp servers: %w", err)
		}
		e.remote = remote
		sets = append(sets, remote)
	}
	sets = append(sets, e.cfg.Toolsets...)
	e.inv = tool.Compose(sets...)
	return e, nil
}

// Tools lists the inventory.
func (e *Engine) Tools(ctx context.Context) ([]tool.Info, error) { return e.inv.Tools(ctx) }

// Handler returns a handler for one call.
func (e *Engine) Handler(ctx context.Context, name string) (tool.Handler, error) {
	return e.inv.Handler(ctx, name)
}

// Close stops every worker and closes every toolset.
func (e *Engine) Close() error {
	err := e.inv.Close()
	return errors.Join(err, e.pool.Close())
}

// Binding returns the LCP binding, for mounting and dynamic registration.
func (e *Engine) Binding() *binding.Binding { return e.lcp }

// Workspace returns the default workspace.
func (e *Engine) Workspace() string { return e.lcp.Workspace() }

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

// SystemPrompts returns the libraries' contributions to the system prompt.
func (e *Engine) SystemPrompts(ctx context.Context) []binding.SystemPrompt {
	return e.lcp.SystemPrompts(ctx)
}

// CallOptions adjusts one call made with Engine.Call.
type CallOptions struct {
	// CallID, Workspace and Context go into the invocation (Context is the
	// LCP tool_context).
	CallID    string
	Workspace string
	Context   map[string]any
	// Respond overrides Config.Respond for this call.
	Respond func(ctx context.Context, r *tool.Request) tool.Response
}

// Call runs one call to completion and returns its result, or an engine
// error (unknown tool, invalid arguments, timeout, cancelled...).
func (e *Engine) Call(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*tool.Result, error) {
	co := &tool.CallOptions{Respond: e.cfg.Respond}
	if opts != nil {
		co.CallID, co.Workspace, co.Context = opts.CallID, opts.Workspace, opts.Context
		if opts.Respond != nil {
			co.Respond = opts.Respond
		}
	}
	if co.Respond == nil {
		co.Respond = func(_ context.Context, r *tool.Request) tool.Response {
			if r.Kind == tool.KindConfirm {
				return r.Declined(tool.NoApprover)
			}
			return r.Declined("This host cannot ask the user questions.")
		}
	}
	return tool.Call(ctx, e, name, args, co)
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

// ExecuteTool runs a nested call into the whole inventory. Its requests
// are put to the caller of the outer call, through the outer call's
// handler, so they reach the same person.
func (h engineHost) ExecuteTool(ctx context.Context, name string, params json.RawMessage) json.RawMessage {
	depth := 0
	if c := tool.CallFromContext(ctx); c != nil {
		depth = c.Depth
	}
	var res *tool.Result
	if depth+1 > h.e.cfg.MaxDepth {
		res = tool.Failure(fmt.Sprintf("Tool '%s' was not run: nested tool calls are limited to %d levels.", name, h.e.cfg.MaxDepth))
	} else {
		child := tool.WithCall(ctx, &tool.CallInfo{Depth: depth + 1})
		r, err := tool.Call(child, h.e, name, params, &tool.CallOptions{
			Respond: func(_ context.Context, r *tool.Request) tool.Response {
				fwd := *r
				fwd.ID = ""
				resp, err := tool.Ask(ctx, &fwd)
				if err != nil {
					return r.Cancelled(err.Error())
				}
				resp.ID = r.ID
				return resp
			},
		})
		if err != nil {
			r = tool.ErrorResult(err)
		}
		res = r
	}
	raw, err := json.Marshal(res)
	if err != nil {
		raw, _ = json.Marshal(tool.Failure("the nested result cannot be encoded: " + err.Error()))
	}
	return raw
}

func (h engineHost) HasLLM() bool { return h.e.cfg.LLM != nil }

// Generate runs the host's LLM for a Python tool's generate_text.
func (h engineHost) Generate(ctx context.Context, r worker.GenerateRequest) (string, error) {
	if h.e.cfg.LLM == nil {
		return "", errors.New("no LLM is configured in this host")
	}
	return h.e.cfg.LLM.GenerateJSON(ctx, r.Prompt, r.Options)
}

// Discussion returns the conversation of the agent loop the call belongs
// to, if any (discussion_instance).
func (h engineHost) Discussion(ctx context.Context) json.RawMessage {
	return agent.DiscussionFromContext(ctx)
}
