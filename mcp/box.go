package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/lcptools/lcp/autonomy"
	"github.com/lcptools/lcp/egress"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

// The workspace settings of SandboxConfig.
const (
	// WorkspaceNone: the server does not see the workspace (the default).
	WorkspaceNone = "none"
	// WorkspaceReadOnly shows the workspace read-only at its own path.
	WorkspaceReadOnly = "read-only"
	// WorkspaceReadWrite shows the workspace writable at its own path
	// (its .git and other version control folders read-only).
	WorkspaceReadWrite = "read-write"
)

// SandboxConfig is how a stdio server is contained: the "sandbox" of its
// entry. A stdio server runs in lcp's kernel sandbox unless the entry says
// "sandbox": false: the system read-only, the home folder hidden except
// its toolchain folders, a private /tmp, a private writable state folder
// that persists between starts (its HOME inside), the workspace as
// Workspace says, no network except the hosts Network names (through lcp's
// egress proxy), the environment the entry lists plus a small allow-list,
// and every process of the server ending with it.
//
// In JSON, "sandbox" is false (Off), true (the defaults) or an object:
//
//	"sandbox": {"read": ["~/.config/tool"], "write": ["/srv/data"],
//	            "network": ["registry.npmjs.org", "*.example.org:443"],
//	            "workspace": "read-write", "env": ["LANG_EXTRA"]}
//
// "network": true keeps the host's network, unfiltered.
type SandboxConfig struct {
	// Off runs the server unconfined, with lcp's environment ("sandbox":
	// false): lcp doctor and lcp list --libraries say so.
	Off bool `json:"-"`
	// Read and Write are host paths shown read-only or read-write at
	// their own paths ("~/" is the home folder).
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Network is the allow-list: host, host:port, *.domain and
	// *.domain:port (see package egress).
	Network []string `json:"-"`
	// HostNetwork keeps the host's network ("network": true).
	HostNetwork bool `json:"-"`
	// Workspace is WorkspaceNone (the default), WorkspaceReadOnly or
	// WorkspaceReadWrite.
	Workspace string `json:"workspace,omitempty"`
	// Env names variables of lcp's environment passed to the server
	// (never one that looks like a secret: give those by value in the
	// entry's "env").
	Env []string `json:"env,omitempty"`
	// State is the server's state folder; empty means
	// ClientOptions.StateDir/<alias>.
	State string `json:"state,omitempty"`

	rules egress.List
}

// sandboxFields are the keys of a "sandbox" object.
type sandboxFields struct {
	Read      []string        `json:"read"`
	Write     []string        `json:"write"`
	Network   json.RawMessage `json:"network"`
	Workspace string          `json:"workspace"`
	Env       []string        `json:"env"`
	State     string          `json:"state"`
}

// UnmarshalJSON reads false, true or an object; an unknown key is an
// error, so that a typo cannot weaken the sandbox.
func (s *SandboxConfig) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch string(data) {
	case "false":
		*s = SandboxConfig{Off: true}
		return nil
	case "true", "null":
		*s = SandboxConfig{}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f sandboxFields
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf(`"sandbox" must be false, true or an object of read, write, network, workspace, env and state: %w`, err)
	}
	*s = SandboxConfig{Read: f.Read, Write: f.Write, Workspace: f.Workspace, Env: f.Env, State: f.State}
	switch n := bytes.TrimSpace(f.Network); {
	case len(n) == 0 || string(n) == "null" || string(n) == "false":
	case string(n) == "true":
		s.HostNetwork = true
	default:
		if err := json.Unmarshal(n, &s.Network); err != nil {
			return fmt.Errorf(`"sandbox": "network" must be true or a list of host patterns: %w`, err)
		}
	}
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (s SandboxConfig) MarshalJSON() ([]byte, error) {
	if s.Off {
		return []byte("false"), nil
	}
	f := sandboxFields{Read: s.Read, Write: s.Write, Workspace: s.Workspace, Env: s.Env, State: s.State}
	switch {
	case s.HostNetwork:
		f.Network = json.RawMessage("true")
	case s.Network != nil:
		f.Network, _ = json.Marshal(s.Network)
	}
	type plain sandboxFields
	return json.Marshal(plain(f))
}

// Boxed reports whether a server of this configuration runs in the
// sandbox: a stdio server whose entry does not say "sandbox": false.
func (c *ServerConfig) Boxed() bool {
	return c.Type == TypeStdio && (c.Sandbox == nil || !c.Sandbox.Off)
}

// Containment says in one line how the server runs, for lcp doctor and
// lcp list --libraries.
func (c *ServerConfig) Containment() string {
	switch {
	case c.Type != TypeStdio:
		return "remote (" + c.Type + "): not a process of lcp's"
	case !c.Boxed():
		return `outside a box ("sandbox": false): the server runs as you, with lcp's environment`
	}
	s := c.Sandbox
	if s == nil {
		s = &SandboxConfig{}
	}
	ws := s.Workspace
	if ws == "" {
		ws = WorkspaceNone
	}
	net := "no network"
	switch {
	case s.HostNetwork:
		net = "the host's network"
	case len(s.Network) > 0:
		net = "network to " + strings.Join(s.Network, ", ")
	}
	return fmt.Sprintf("in a box (workspace: %s, %s)", ws, net)
}

// checkSandbox checks the sandbox settings of a normalized entry.
func (c *ServerConfig) checkSandbox(getenv func(string) string) error {
	s := c.Sandbox
	if s == nil {
		return nil
	}
	if c.Type != TypeStdio {
		if s.Off || (len(s.Read)+len(s.Write)+len(s.Network)+len(s.Env) == 0 && s.Workspace == "" && s.State == "" && !s.HostNetwork) {
			return nil
		}
		return &ConfigError{Alias: c.Alias, Message: `"sandbox" applies to stdio servers only`}
	}
	if s.Off {
		return nil
	}
	switch s.Workspace {
	case "", WorkspaceNone, WorkspaceReadOnly, WorkspaceReadWrite:
	default:
		return &ConfigError{Alias: c.Alias, Message: fmt.Sprintf(`"sandbox": "workspace" is %q; want "none", "read-only" or "read-write"`, s.Workspace)}
	}
	rules, err := egress.ParseRules(s.Network)
	if err != nil {
		return &ConfigError{Alias: c.Alias, Message: `"sandbox": ` + err.Error()}
	}
	s.rules = rules
	for _, name := range s.Env {
		if sandbox.IsSecretName(name) {
			return &ConfigError{Alias: c.Alias, Message: fmt.Sprintf(`"sandbox": "env" names %s, which looks like a secret and never passes by name; give it by value in the entry's "env"`, name)}
		}
	}
	for _, list := range [][]string{s.Read, s.Write} {
		for i, p := range list {
			list[i] = expandVars(p, getenv)
			if q := list[i]; q != "~" && !strings.HasPrefix(q, "~/") && !filepath.IsAbs(q) {
				return &ConfigError{Alias: c.Alias, Message: fmt.Sprintf(`"sandbox": path %q must be absolute or start with "~/"`, q)}
			}
		}
	}
	s.State = expandVars(s.State, getenv)
	return nil
}

// BoxError reports a stdio server that could not be started in its box:
// it did not run, and it does not run unconfined unless its entry says
// "sandbox": false.
type BoxError struct {
	Alias string
	Err   error
}

func (e *BoxError) Error() string {
	return fmt.Sprintf(`MCP server %q cannot run in its sandbox, so it was not started: %v (fix the entry's "sandbox" settings, or set "sandbox": false to run it unconfined)`, e.Alias, e.Err)
}

func (e *BoxError) Unwrap() error { return e.Err }

// serverBox is the sandbox of one start of a stdio server.
type serverBox struct {
	box   *sandbox.Box
	proxy *egress.Proxy
}

func (b *serverBox) close() {
	if b == nil {
		return
	}
	if b.proxy != nil {
		b.proxy.Close()
	}
	if b.box != nil {
		b.box.Close()
	}
}

// boxHooks are what a server's box needs from its remote: who is asked
// for a host not on the list, where denials go.
type boxHooks struct {
	opts *ClientOptions
	ask  func(ctx context.Context, host string, port int) bool
	deny func(egress.Denial)
}

// wrapServer prepares cmd to run the server in its box.
func wrapServer(cmd *exec.Cmd, cfg *ServerConfig, h boxHooks) (*serverBox, error) {
	s := cfg.Sandbox
	if s == nil {
		s = &SandboxConfig{}
	}
	if st := sandbox.Probe(); !st.Available {
		return nil, &BoxError{Alias: cfg.Alias, Err: fmt.Errorf("%w: %s", sandbox.ErrUnsupported, st.Reason)}
	}
	home, _ := os.UserHomeDir()
	expand := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		if p == "~" {
			return home
		}
		return p
	}
	state := s.State
	if state == "" {
		state = filepath.Join(h.opts.StateDir, cfg.Alias)
	}
	state = expand(state)
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, &BoxError{Alias: cfg.Alias, Err: fmt.Errorf("its state folder: %w", err)}
	}
	pol := &sandbox.Policy{Home: home, Workspace: state, Mode: sandbox.Write}
	ws := h.opts.Workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	shown := ""
	switch s.Workspace {
	case WorkspaceReadOnly, WorkspaceReadWrite:
		abs, err := filepath.Abs(ws)
		if err != nil {
			return nil, &BoxError{Alias: cfg.Alias, Err: fmt.Errorf("the workspace: %w", err)}
		}
		pol.Workspace, pol.Mode, shown = abs, sandbox.ReadOnly, abs
		if s.Workspace == WorkspaceReadWrite {
			pol.Mode = sandbox.Write
		}
		pol.WritePaths = append(pol.WritePaths, state)
	}
	pol.ReadPaths = sandbox.ToolPaths(home)
	// The program the entry names is shown, wherever it is: the person
	// chose to run it.
	program, err := exec.LookPath(cfg.Command)
	if err != nil {
		return nil, &BoxError{Alias: cfg.Alias, Err: fmt.Errorf("its command %q was not found (%w)", cfg.Command, err)}
	}
	if abs, err := filepath.Abs(program); err == nil {
		pol.ReadPaths = append(pol.ReadPaths, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			pol.ReadPaths = append(pol.ReadPaths, real)
		}
	}
	for _, r := range s.Read {
		pol.ReadPaths = append(pol.ReadPaths, expand(r))
	}
	for _, w := range s.Write {
		pol.WritePaths = append(pol.WritePaths, expand(w))
	}
	dir := cfg.Dir
	switch {
	case dir != "":
		abs, err := filepath.Abs(expand(dir))
		if err != nil {
			return nil, &BoxError{Alias: cfg.Alias, Err: fmt.Errorf("its cwd: %w", err)}
		}
		dir = abs
		if !slices.Contains(pol.WritePaths, dir) && dir != pol.Workspace {
			pol.ReadPaths = append(pol.ReadPaths, dir)
		}
	case shown != "":
		dir = shown
	default:
		dir = state
	}
	cmd.Dir = dir
	// HOME is the state folder: what the server (and npx) keeps there
	// persists between starts.
	pol.Env = sandbox.Env(os.Environ(), state, s.Env...)
	keys := make([]string, 0, len(cfg.Env))
	for k := range cfg.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		pol.GivenEnv = append(pol.GivenEnv, k+"="+cfg.Env[k])
	}
	sb := &serverBox{}
	if s.HostNetwork {
		pol.Network = true
	} else {
		sb.proxy = egress.New(&egress.Options{Allow: s.rules, Ask: h.ask, OnDeny: h.deny, Logger: h.opts.Logger})
		pol.Egress = sb.proxy.ServeConn
	}
	box, err := sandbox.Wrap(cmd, pol)
	if err != nil {
		sb.close()
		return nil, &BoxError{Alias: cfg.Alias, Err: err}
	}
	sb.box = box
	return sb, nil
}

// DefaultStateDir is where the state folders of boxed servers live
// (ClientOptions.StateDir): $XDG_STATE_HOME/lcp/mcp, else
// ~/.local/state/lcp/mcp.
func DefaultStateDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "lcp", "mcp")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "lcp-mcp-state")
	}
	return filepath.Join(home, ".local", "state", "lcp", "mcp")
}

// boxHooks returns the hooks of the server's box: a host not on its
// allow-list is put to the only call in flight, else to
// ClientOptions.Respond, as an elicitation is; in full_access nobody is
// asked and the list alone decides. Denials become log events of that
// call and of ClientOptions.OnEvent.
func (r *remote) boxHooks() boxHooks {
	var mu sync.Mutex
	perCall := map[*callEntry]*egress.Confirmer{} // "once": for the call
	return boxHooks{
		opts: &r.ts.opts,
		ask: func(ctx context.Context, host string, port int) bool {
			if r.ts.opts.Autonomy != nil && r.ts.opts.Autonomy(r.cfg.Alias) == autonomy.FullAccess {
				return false
			}
			if e := r.onlyCall(); e != nil {
				mu.Lock()
				c := perCall[e]
				if c == nil {
					c = &egress.Confirmer{}
					perCall[e] = c
					context.AfterFunc(e.runCtx, func() { mu.Lock(); delete(perCall, e); mu.Unlock() })
				}
				mu.Unlock()
				e.askMu.Lock()
				defer e.askMu.Unlock()
				return c.Ask(e.runCtx, fmt.Sprintf("%s (MCP server %q, in its sandbox)", e.call.Tool, r.cfg.Alias), host, port)
			}
			if r.ts.opts.Respond == nil {
				return false
			}
			label := egress.ConfirmLabel(host, port)
			req := &tool.Request{ID: tool.NewID(), Tool: r.cfg.Alias, Library: r.cfg.Alias, Kind: tool.KindConfirm, Label: label, Title: label,
				Source: fmt.Sprintf("MCP server %q (in its sandbox, with no call of its tools running) wants to reach %s:%d, which its network list does not name.", r.cfg.Alias, host, port)}
			resp := r.ts.opts.Respond(ctx, req)
			if resp.Action != tool.Submit {
				return false
			}
			v, _ := resp.Value.(tool.Decision)
			if s, ok := resp.Value.(string); ok {
				v = tool.Decision(s)
			}
			return v == tool.Allow || v == tool.Always
		},
		deny: func(d egress.Denial) {
			ev := d.Event()
			if e := r.onlyCall(); e != nil {
				e.call.Emit(ev)
				ev.Tool, ev.CallID, ev.Library = e.call.Tool, e.call.CallID, e.call.Info.Library.ID
			} else {
				ev.Library = r.cfg.Alias
			}
			if r.ts.opts.OnEvent != nil {
				r.ts.opts.OnEvent(ev)
			}
		},
	}
}

// onlyCall returns the only call in flight on the server, nil when none
// or several are.
func (r *remote) onlyCall() *callEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.active) != 1 {
		return nil
	}
	for e := range r.active {
		return e
	}
	return nil
}

func (s *SandboxConfig) clone() *SandboxConfig {
	if s == nil {
		return nil
	}
	c := *s
	c.Read, c.Write = slices.Clone(s.Read), slices.Clone(s.Write)
	c.Network, c.Env = slices.Clone(s.Network), slices.Clone(s.Env)
	return &c
}
