// Package mcpinstall writes lcp into the configuration files of MCP
// clients (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini
// CLI), for `lcp mcp install`. It knows where each client keeps its file
// and the shape of its entries, and edits the file as text: only the
// entry of the server changes; the other servers, the client's other
// settings, their order and the file's formatting stay as they were.
//
//	c, _ := mcpinstall.Lookup("cursor")
//	path, _ := c.Path(mcpinstall.User, mcpinstall.PathsFromEnv(os.Getenv, cwd))
//	entry := c.Stdio("/usr/local/bin/lcp", []string{"mcp", "--tools", "/home/ada/tools"})
//	res, err := mcpinstall.Install(path, c.Key, "lcp", entry, time.Now())
package mcpinstall

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Scope says which of a client's configuration files to write.
type Scope string

// The scopes.
const (
	// User is the user's own configuration, for every project.
	User Scope = "user"
	// Project is the configuration in the current project's folder,
	// meant to be shared with it.
	Project Scope = "project"
)

// Paths are what client configuration locations are made of.
type Paths struct {
	GOOS string
	// Home is the user's home directory.
	Home string
	// AppData is %APPDATA% on Windows.
	AppData string
	// ConfigHome is $XDG_CONFIG_HOME, "" for ~/.config.
	ConfigHome string
	// Dir is the current directory: the project of Project scope.
	Dir string
}

// Client is an MCP client whose configuration lcp can write.
type Client struct {
	// Name is the client's name on lcp's command line.
	Name string
	// Title is how people call it.
	Title string
	// Key is the member of the configuration's top-level object that holds
	// the servers.
	Key string
	// Scopes lists the scopes the client has, the default first.
	Scopes []Scope
	// Remote tells whether the file can hold a streamable HTTP server;
	// RemoteHint says what to do instead when it cannot.
	Remote     bool
	RemoteHint string
	// Projectless clients start servers outside any project folder (their
	// working directory is not the user's), so an entry should name the
	// workspace.
	Projectless bool
	// Restart tells how the client picks up the change.
	Restart string

	path   func(Scope, Paths) string
	stdio  func(command string, args []string) any
	remote func(url string, headers map[string]string) any
}

// Path returns the configuration file of the client for scope.
func (c *Client) Path(scope Scope, p Paths) (string, error) {
	if !slices.Contains(c.Scopes, scope) {
		var names []string
		for _, s := range c.Scopes {
			names = append(names, string(s))
		}
		return "", fmt.Errorf("%s has no %s configuration (its scopes: %s)", c.Title, scope, strings.Join(names, ", "))
	}
	if p.Home == "" && scope == User {
		return "", fmt.Errorf("no home directory: give the configuration file with --config")
	}
	return c.path(scope, p), nil
}

// Stdio returns the client's entry for a server it starts itself.
func (c *Client) Stdio(command string, args []string) json.RawMessage {
	return mustJSON(c.stdio(command, args))
}

// HTTP returns the client's entry for a streamable HTTP server (nil when
// the client's file cannot hold one).
func (c *Client) HTTP(url string, headers map[string]string) json.RawMessage {
	if c.remote == nil {
		return nil
	}
	return mustJSON(c.remote(url, headers))
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the entries are plain structs of strings
	}
	return b
}

// The entry shapes, fields in the order the clients' documentation
// shows them.
type (
	commandEntry struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	typedCommandEntry struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	urlEntry struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers,omitempty"`
	}
	typedURLEntry struct {
		Type    string            `json:"type"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers,omitempty"`
	}
	serverURLEntry struct {
		ServerURL string            `json:"serverUrl"`
		Headers   map[string]string `json:"headers,omitempty"`
	}
	httpURLEntry struct {
		HTTPURL string            `json:"httpUrl"`
		Headers map[string]string `json:"headers,omitempty"`
	}
)

func plainCommand(command string, args []string) any { return commandEntry{command, args} }
func stdioCommand(command string, args []string) any {
	return typedCommandEntry{"stdio", command, args}
}

// configDir is the per-user configuration directory of desktop
// applications: Application Support on macOS, %APPDATA% on Windows,
// $XDG_CONFIG_HOME (~/.config) elsewhere.
func configDir(p Paths) string {
	switch p.GOOS {
	case "darwin":
		return filepath.Join(p.Home, "Library", "Application Support")
	case "windows":
		if p.AppData != "" {
			return p.AppData
		}
		return filepath.Join(p.Home, "AppData", "Roaming")
	}
	if p.ConfigHome != "" {
		return p.ConfigHome
	}
	return filepath.Join(p.Home, ".config")
}

// Clients are the clients lcp knows, by name.
var Clients = []*Client{
	{
		Name: "claude-desktop", Title: "Claude Desktop", Key: "mcpServers", Scopes: []Scope{User},
		RemoteHint:  "Claude Desktop's configuration file starts local servers only: add a remote server in its settings (Connectors), or install without --http",
		Projectless: true,
		Restart:     "Quit and reopen Claude Desktop to load it.",
		path: func(_ Scope, p Paths) string {
			return filepath.Join(configDir(p), "Claude", "claude_desktop_config.json")
		},
		stdio: plainCommand,
	},
	{
		Name: "claude-code", Title: "Claude Code", Key: "mcpServers", Scopes: []Scope{User, Project}, Remote: true,
		Restart: "Start a new Claude Code session to load it (/mcp lists the servers).",
		path: func(s Scope, p Paths) string {
			if s == Project {
				return filepath.Join(p.Dir, ".mcp.json")
			}
			return filepath.Join(p.Home, ".claude.json")
		},
		stdio: stdioCommand,
		remote: func(url string, h map[string]string) any {
			return typedURLEntry{"http", url, h}
		},
	},
	{
		Name: "cursor", Title: "Cursor", Key: "mcpServers", Scopes: []Scope{User, Project}, Remote: true,
		Restart: "Cursor reads the file again by itself; check the server in its MCP settings.",
		path: func(s Scope, p Paths) string {
			if s == Project {
				return filepath.Join(p.Dir, ".cursor", "mcp.json")
			}
			return filepath.Join(p.Home, ".cursor", "mcp.json")
		},
		stdio: plainCommand,
		remote: func(url string, h map[string]string) any {
			return urlEntry{url, h}
		},
	},
	{
		Name: "vscode", Title: "VS Code", Key: "servers", Scopes: []Scope{User, Project}, Remote: true,
		Restart: "VS Code picks the change up; start the server from the MCP view or the file's code lens.",
		path: func(s Scope, p Paths) string {
			if s == Project {
				return filepath.Join(p.Dir, ".vscode", "mcp.json")
			}
			return filepath.Join(configDir(p), "Code", "User", "mcp.json")
		},
		stdio: stdioCommand,
		remote: func(url string, h map[string]string) any {
			return typedURLEntry{"http", url, h}
		},
	},
	{
		Name: "windsurf", Title: "Windsurf", Key: "mcpServers", Scopes: []Scope{User}, Remote: true, Projectless: true,
		Restart: "Refresh the MCP servers in Windsurf's Cascade panel to load it.",
		path: func(_ Scope, p Paths) string {
			return filepath.Join(p.Home, ".codeium", "windsurf", "mcp_config.json")
		},
		stdio: plainCommand,
		remote: func(url string, h map[string]string) any {
			return serverURLEntry{url, h}
		},
	},
	{
		Name: "gemini", Title: "Gemini CLI", Key: "mcpServers", Scopes: []Scope{User, Project}, Remote: true,
		Restart: "Start Gemini CLI again to load it (/mcp lists the servers).",
		path: func(s Scope, p Paths) string {
			if s == Project {
				return filepath.Join(p.Dir, ".gemini", "settings.json")
			}
			return filepath.Join(p.Home, ".gemini", "settings.json")
		},
		stdio: plainCommand,
		remote: func(url string, h map[string]string) any {
			return httpURLEntry{url, h}
		},
	},
}

// Names lists the clients' names.
func Names() []string {
	names := make([]string, len(Clients))
	for i, c := range Clients {
		names[i] = c.Name
	}
	return names
}

// Lookup returns the client named name.
func Lookup(name string) (*Client, bool) {
	for _, c := range Clients {
		if c.Name == name {
			return c, true
		}
	}
	return nil, false
}
