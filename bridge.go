package lcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/lcptools/lcp/autonomy"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/lcptools/lcp/binding"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/tool"
)

// The MCP bridge: lollms_client.tools_bindings.mcp.MCPBinding in the
// Python worker asks the engine's MCP client for its servers' tools, by
// way of the host services "mcp.list" and "mcp.call".

// Service names of the MCP bridge.
const (
	serviceMCPList = "mcp.list"
	serviceMCPCall = "mcp.call"
)

// Limits of the MCP bridge.
const (
	// bridgeConnectTimeout bounds starting and initializing a bridged
	// server unless its entry says otherwise ("timeout", in seconds).
	bridgeConnectTimeout = 30 * time.Second
	// bridgeCallTimeout bounds a bridged call unless execute_tool's
	// timeout says otherwise (as the LCP reference's 60 s).
	bridgeCallTimeout = 60 * time.Second
	// maxBridgeServers bounds the server configurations an engine keeps
	// sessions for: Python code cannot start processes without end.
	maxBridgeServers = 64
	// maxBridgeTimeout bounds the timeouts a bridge request may ask for.
	maxBridgeTimeout = time.Hour
)

// mcpBridge holds the MCP sessions that Python libraries open through
// MCPBinding. They belong to the engine, not to a call or a library: one
// session per server configuration, shared by every call and library that
// names the same server, kept while the engine runs (a stdio server that
// dies starts again on the next call) and closed with it.
type mcpBridge struct {
	e *Engine

	mu      sync.Mutex
	servers map[string]*bridgeServer // by bridgeKey
	closed  bool
}

// bridgeServer is the client toolset of one server configuration, made on
// first use.
type bridgeServer struct {
	cfg   mcp.ServerConfig
	ready chan struct{} // closed once ts or err is set
	ts    *mcp.ClientToolset
	err   error
}

// bridgeEntry is a server entry as the LCP host configuration and
// MCPBinding write it, read into the engine's terms.
type bridgeEntry struct {
	cfg     mcp.ServerConfig
	connect time.Duration
}

// key identifies the session an entry shares: the same configuration and
// the same connection limit.
func (b *bridgeEntry) key() string {
	cfg, _ := json.Marshal(b.cfg)
	return fmt.Sprintf("%s|%d", cfg, b.connect)
}

// parseBridgeEntry reads one server entry: the keys of mcp.ServerConfig
// (alias, type, command, args, env, cwd, url, headers, oauth), plus those
// of the LCP reference's MCPBinding: "command" as a list (the program and
// its arguments), "auth_config" ({"type": "bearer", "token"} or {"type":
// "api_key", "key", "header_name"}) and "timeout" (seconds to start and
// initialize the server).
func parseBridgeEntry(raw json.RawMessage) (*bridgeEntry, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errors.New("a server entry must be a JSON object")
	}
	alias := ""
	_ = json.Unmarshal(m["alias"], &alias)
	bad := func(format string, a ...any) error {
		return &mcp.ConfigError{Alias: alias, Message: fmt.Sprintf(format, a...)}
	}
	out := &bridgeEntry{connect: bridgeConnectTimeout}
	if v, ok := m["timeout"]; ok {
		d, err := seconds(v)
		if err != nil {
			return nil, bad(`"timeout": %v`, err)
		}
		if d > 0 {
			out.connect = d
		}
		delete(m, "timeout")
	}
	if v := bytes.TrimSpace(m["command"]); len(v) > 0 && v[0] == '[' {
		var argv []string
		if err := json.Unmarshal(v, &argv); err != nil || len(argv) == 0 || argv[0] == "" {
			return nil, bad(`"command" must be a program name or a non-empty list of strings`)
		}
		var more []string
		if a, ok := m["args"]; ok && string(bytes.TrimSpace(a)) != "null" {
			if err := json.Unmarshal(a, &more); err != nil {
				return nil, bad(`"args" must be a list of strings`)
			}
		}
		m["command"], _ = json.Marshal(argv[0])
		m["args"], _ = json.Marshal(append(argv[1:], more...))
	}
	if v, ok := m["auth_config"]; ok {
		name, value, err := authHeader(v)
		if err != nil {
			return nil, bad(`"auth_config": %v`, err)
		}
		if name != "" {
			headers := map[string]string{}
			if h, ok := m["headers"]; ok && string(bytes.TrimSpace(h)) != "null" {
				if err := json.Unmarshal(h, &headers); err != nil {
					return nil, bad(`"headers" must be an object of strings`)
				}
			}
			if _, set := headers[name]; !set {
				headers[name] = value
			}
			m["headers"], _ = json.Marshal(headers)
		}
		delete(m, "auth_config")
	}
	entry, err := json.Marshal(m)
	if err != nil {
		return nil, bad("%v", err)
	}
	servers, err := mcp.ParseConfig(append(append([]byte{'['}, entry...), ']'))
	if err != nil {
		return nil, err
	}
	if len(servers) != 1 {
		return nil, bad("the server is disabled")
	}
	out.cfg = servers[0]
	return out, nil
}

// authHeader reads the reference's auth_config: the header it sends, or
// none.
func authHeader(raw json.RawMessage) (name, value string, err error) {
	var a struct {
		Type       string `json:"type"`
		Token      string `json:"token"`
		Key        string `json:"key"`
		HeaderName string `json:"header_name"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", "", errors.New("must be an object")
	}
	switch strings.ToLower(a.Type) {
	case "", "none":
		return "", "", nil
	case "bearer":
		if a.Token == "" {
			return "", "", errors.New(`type "bearer" needs a "token"`)
		}
		return "Authorization", "Bearer " + a.Token, nil
	case "api_key":
		if a.Key == "" {
			return "", "", errors.New(`type "api_key" needs a "key"`)
		}
		if a.HeaderName == "" {
			a.HeaderName = "X-API-Key"
		}
		return a.HeaderName, a.Key, nil
	}
	return "", "", fmt.Errorf("unknown type %q (want bearer or api_key)", a.Type)
}

// seconds reads a duration given in seconds (a JSON number, or null for
// none).
func seconds(raw json.RawMessage) (time.Duration, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return 0, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, errors.New("want a number of seconds")
	}
	if math.IsNaN(f) || f < 0 || f > maxBridgeTimeout.Seconds() {
		return 0, fmt.Errorf("%v seconds is out of range (0 to %v)", f, maxBridgeTimeout.Seconds())
	}
	return time.Duration(f * float64(time.Second)), nil
}

// toolset returns the client toolset of an entry's server, connecting on
// first use. A Python library in the kernel sandbox reaches only the
// servers its host configuration lists: the engine runs outside the
// sandbox, so a server the library named itself would be an escape.
func (br *mcpBridge) toolset(ctx context.Context, lib string, entry *bridgeEntry) (*mcp.ClientToolset, error) {
	if sandboxed, err := br.e.sandboxed(lib); err != nil {
		return nil, err
	} else if sandboxed && !br.configured(lib, entry) {
		return nil, fmt.Errorf("the library %s runs in the sandbox: it may reach only the MCP servers of its host configuration (host_tool_configs[%q][\"servers\"]), and %q is not one of them", lib, lib, entry.cfg.Alias)
	}
	key := entry.key()
	br.mu.Lock()
	if br.closed {
		br.mu.Unlock()
		return nil, &tool.ClosedError{What: "MCP bridge"}
	}
	s := br.servers[key]
	if s == nil {
		if len(br.servers) >= maxBridgeServers {
			br.mu.Unlock()
			return nil, fmt.Errorf("too many MCP server configurations (%d) were opened through MCPBinding in this engine", maxBridgeServers)
		}
		if br.servers == nil {
			br.servers = map[string]*bridgeServer{}
		}
		s = &bridgeServer{cfg: entry.cfg, ready: make(chan struct{})}
		br.servers[key] = s
		br.mu.Unlock()
		// The connection outlives a caller that gives up: the next call
		// finds it made.
		go br.open(s, entry.connect)
	} else {
		br.mu.Unlock()
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	br.mu.Lock()
	defer br.mu.Unlock()
	if s.ts == nil && s.err == nil {
		return nil, &tool.ClosedError{What: "MCP bridge"}
	}
	return s.ts, s.err
}

// open makes the client toolset of s (which connects to its server).
func (br *mcpBridge) open(s *bridgeServer, connect time.Duration) {
	cfg := br.e.cfg
	ctx, cancel := context.WithTimeout(context.Background(), connect+time.Second)
	defer cancel()
	ts, err := mcp.NewClientToolset(ctx, []mcp.ServerConfig{s.cfg}, &mcp.ClientOptions{
		Respond: br.e.respond, Stderr: cfg.MCPStderr, Logger: cfg.Logger, OAuth: cfg.MCPOAuth,
		ConnectTimeout: connect, Workspace: cfg.Workspace, StateDir: cfg.MCPStateDir,
		Autonomy: func(alias string) autonomy.Level { return autonomy.FromConfig(cfg.HostToolConfigs[alias]) },
	})
	br.mu.Lock()
	if br.closed && ts != nil {
		_ = ts.Close()
		ts, err = nil, &tool.ClosedError{What: "MCP bridge"}
	}
	s.ts, s.err = ts, err
	br.mu.Unlock()
	close(s.ready)
}

// configured reports whether the library's host configuration lists the
// entry's server (its "servers" key, as MCPBinding gets it).
func (br *mcpBridge) configured(lib string, entry *bridgeEntry) bool {
	list, _ := json.Marshal(br.e.cfg.HostToolConfigs[lib]["servers"])
	var raws []json.RawMessage
	if json.Unmarshal(list, &raws) != nil {
		return false
	}
	want, _ := json.Marshal(entry.cfg)
	for _, raw := range raws {
		if e, err := parseBridgeEntry(raw); err == nil {
			if got, _ := json.Marshal(e.cfg); bytes.Equal(got, want) {
				return true
			}
		}
	}
	return false
}

// bridgeCloseWait bounds how long closing waits for a connection still
// being made; open closes what it makes after the bridge closed.
const bridgeCloseWait = 10 * time.Second

// close ends every session.
func (br *mcpBridge) close() {
	br.mu.Lock()
	br.closed = true
	servers := br.servers
	br.servers = nil
	br.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-s.ready:
			case <-time.After(bridgeCloseWait):
				return
			}
			br.mu.Lock()
			ts := s.ts
			s.ts = nil
			br.mu.Unlock()
			if ts != nil {
				_ = ts.Close()
			}
		}()
	}
	wg.Wait()
}

// bridgeListParams are the parameters of "mcp.list".
type bridgeListParams struct {
	Server json.RawMessage `json:"server"`
	// Timeout bounds the wait for the server, in seconds.
	Timeout json.RawMessage `json:"timeout"`
}

// bridgeTool is one tool of a server, as MCPBinding.discover_tools gives
// it (the name is the server's own; MCPBinding prefixes the alias).
type bridgeTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// list serves "mcp.list": the tools of one server.
func (br *mcpBridge) list(ctx context.Context, r *binding.ServiceRequest) (json.RawMessage, error) {
	var p bridgeListParams
	if err := json.Unmarshal(r.Params, &p); err != nil {
		return nil, fmt.Errorf("mcp.list: %w", err)
	}
	entry, err := parseBridgeEntry(p.Server)
	if err != nil {
		return nil, err
	}
	wait, err := seconds(p.Timeout)
	if err != nil {
		return nil, fmt.Errorf("timeout: %w", err)
	}
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	ts, err := br.toolset(ctx, r.Library, entry)
	if err != nil {
		return nil, br.waitError(ctx, entry, err)
	}
	infos, err := ts.Tools(ctx)
	if err != nil {
		return nil, br.waitError(ctx, entry, err)
	}
	if len(infos) == 0 {
		if err := ts.Err(entry.cfg.Alias); err != nil {
			return nil, err
		}
	}
	prefix := entry.cfg.Alias + mcp.Separator
	out := make([]bridgeTool, 0, len(infos))
	for _, in := range infos {
		out = append(out, bridgeTool{Name: strings.TrimPrefix(in.Name, prefix), Title: in.Title,
			Description: in.Description, InputSchema: in.InputSchema})
	}
	return json.Marshal(map[string]any{"tools": out})
}

// waitError says why waiting for a server failed: its own time limit
// (the server did not answer), else the error.
func (br *mcpBridge) waitError(ctx context.Context, entry *bridgeEntry, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("MCP server %q did not answer in time", entry.cfg.Alias)
	}
	return err
}

// bridgeCallParams are the parameters of "mcp.call".
type bridgeCallParams struct {
	Server    json.RawMessage `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Timeout bounds the call, in seconds (execute_tool's timeout).
	Timeout json.RawMessage `json:"timeout"`
}

// call serves "mcp.call": one call of a server's tool, inside the Python
// tool's call (its questions go to that call's caller). Every outcome is
// an LCP result: a server that does not start, answers garbage or hangs
// is a failure (500) that names it; a call over its time limit is a 504.
func (br *mcpBridge) call(ctx context.Context, r *binding.ServiceRequest) (json.RawMessage, error) {
	var p bridgeCallParams
	if err := json.Unmarshal(r.Params, &p); err != nil {
		return nil, fmt.Errorf("mcp.call: %w", err)
	}
	res := br.run(ctx, r, &p)
	return json.Marshal(res)
}

func (br *mcpBridge) run(ctx context.Context, r *binding.ServiceRequest, p *bridgeCallParams) *tool.Result {
	entry, err := parseBridgeEntry(p.Server)
	if err != nil {
		return tool.ErrorResult(&tool.InvalidArgumentsError{Tool: p.Tool, Message: err.Error()})
	}
	limit, err := seconds(p.Timeout)
	if err != nil {
		return tool.ErrorResult(&tool.InvalidArgumentsError{Tool: p.Tool, Message: "timeout: " + err.Error()})
	}
	if limit == 0 {
		limit = bridgeCallTimeout
	}
	alias := entry.cfg.Alias
	full := alias + mcp.Separator + p.Tool
	if p.Tool == "" {
		return tool.ErrorResult(&tool.InvalidArgumentsError{Tool: full, Message: "no tool name"})
	}
	if r.Call != nil && r.Call.Depth+1 > br.e.cfg.MaxDepth {
		return tool.Failure(fmt.Sprintf("Tool '%s' was not run: nested tool calls are limited to %d levels.", full, br.e.cfg.MaxDepth))
	}
	ts, err := br.toolset(ctx, r.Library, entry)
	if err != nil {
		if ctx.Err() != nil {
			return tool.ErrorResult(tool.ContextError(ctx, full))
		}
		return tool.Failure(fmt.Sprintf("MCP server %q cannot be used: %v", alias, err))
	}
	// Listing connects (or reconnects) and says which tools exist; a server
	// that failed recently is not started again before a short interval.
	infos, _ := ts.Tools(ctx)
	if ctx.Err() != nil {
		return tool.ErrorResult(tool.ContextError(ctx, full))
	}
	name, found := resolveBridgeTool(infos, alias, p.Tool)
	if !found {
		if err := ts.Err(alias); err != nil {
			return tool.Failure(err.Error())
		}
		res := tool.ErrorResult(&tool.UnknownToolError{Name: full})
		res.Error = fmt.Sprintf("Tool '%s' not found on MCP server %q.", p.Tool, alias)
		res.Output, _ = json.Marshal(res.Error)
		return res
	}
	callCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var opts tool.CallOptions
	if r.Call != nil {
		opts.Parent = r.Call
	}
	res, err := tool.Call(callCtx, ts, name, p.Arguments, &opts)
	if err != nil {
		if ctx.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) {
			return tool.ErrorResult(&tool.TimeoutError{Tool: name, Limit: limit})
		}
		return tool.ErrorResult(err)
	}
	return res
}

// resolveBridgeTool finds the tool a bridge call names among the server's
// tools: the name as given, else without the "tool_" prefix the LCP
// bridge adds to every name (it asks for "fs::tool_read_file" when the
// server's tool is "read_file"). With no listing, the name as given.
func resolveBridgeTool(infos []tool.Info, alias, name string) (string, bool) {
	prefix := alias + mcp.Separator
	has := func(n string) bool {
		for i := range infos {
			if infos[i].Name == prefix+n {
				return true
			}
		}
		return false
	}
	switch {
	case has(name):
		return prefix + name, true
	case strings.HasPrefix(name, "tool_") && has(strings.TrimPrefix(name, "tool_")):
		return prefix + strings.TrimPrefix(name, "tool_"), true
	}
	return "", false
}
