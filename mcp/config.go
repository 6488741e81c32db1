package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/lcptools/lcp/mcp/oauth"
)

// Transport types of a ServerConfig.
const (
	// TypeStdio runs Command as a subprocess and speaks MCP over its
	// standard input and output.
	TypeStdio = "stdio"
	// TypeHTTP connects to a streamable HTTP endpoint at URL.
	TypeHTTP = "http"
	// TypeSSE connects to a legacy HTTP+SSE endpoint (protocol 2024-11-05)
	// at URL, for servers that predate the streamable transport.
	TypeSSE = "sse"
)

// Separator joins a server's alias and its tool's name in the name lcp
// gives the tool: "<alias>::<tool>".
const Separator = "::"

// ServerConfig describes one MCP server whose tools become part of an
// inventory. The JSON form is the one of the LCP host configuration:
//
//	{"alias": "fs", "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"], "env": {"K": "v"}}
//	{"alias": "search", "type": "http", "url": "http://localhost:8000/mcp", "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"}}
type ServerConfig struct {
	// Alias names the server; its tools are called "<alias>::<tool>".
	Alias string `json:"alias"`
	// Type is TypeStdio, TypeHTTP or TypeSSE. When empty it is inferred:
	// stdio with a Command, http with a URL.
	Type string `json:"type,omitempty"`

	// Command, Args, Env and Dir start a stdio server. In its sandbox
	// the server gets Env plus a small allow-list of lcp's environment
	// (PATH, the locale...); with "sandbox": false it inherits lcp's
	// environment plus Env.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"cwd,omitempty"`
	// Sandbox contains a stdio server (see SandboxConfig): nil means the
	// defaults, a box with no network and no workspace.
	Sandbox *SandboxConfig `json:"sandbox,omitempty"`

	// URL and Headers reach an HTTP server; Headers go with every request
	// (typically Authorization).
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`

	// OAuth configures signing in to an HTTP server protected by OAuth
	// (see package oauth): a pre-registered client, scopes, the client
	// credentials grant. Without it, lcp discovers everything and
	// registers itself when the server answers 401. A server given an
	// Authorization header is not signed in to.
	OAuth *oauth.Config `json:"oauth,omitempty"`

	// Disabled servers are skipped (desktop configurations use it).
	Disabled bool `json:"disabled,omitempty"`
}

// ConfigError reports a configuration that cannot be used: not JSON, an
// unknown shape, or a server entry that is incomplete.
type ConfigError struct {
	// File is the configuration file, when the configuration came from one.
	File string
	// Alias is the server entry at fault, if any.
	Alias   string
	Message string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("mcp config")
	if e.File != "" {
		b.WriteString(" " + e.File)
	}
	if e.Alias != "" {
		fmt.Fprintf(&b, ": server %q", e.Alias)
	}
	b.WriteString(": " + e.Message)
	return b.String()
}

// LoadConfig reads a file of MCP server configurations; see ParseConfig
// for the shapes it accepts.
func LoadConfig(path string) ([]ServerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcp config: %w", err)
	}
	servers, err := ParseConfig(data)
	var ce *ConfigError
	if errors.As(err, &ce) {
		ce.File = path
	}
	return servers, err
}

// ParseConfig reads MCP server configurations in any of the shapes in
// common use:
//
//   - a JSON array of ServerConfig objects (the LCP host configuration);
//   - {"servers": [...]}, the same list under a key;
//   - {"mcpServers": {"name": {...}}}, the shape of desktop assistants
//     and IDEs, where each entry has "command"/"args"/"env" or
//     "url"/"headers" and the key is the alias;
//   - {"servers": {"name": {...}}}, the same map under "servers".
//
// Entries keep the order of the file. "${NAME}" and "${NAME:-default}" in
// args, env values, URL and header values are replaced from lcp's
// environment, so tokens need not be written into the file. The type
// "streamable-http" (and "streamableHttp") is read as "http".
func ParseConfig(data []byte) ([]ServerConfig, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, &ConfigError{Message: "empty configuration"}
	}
	var entries []ServerConfig
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &entries); err != nil {
			return nil, &ConfigError{Message: "not a list of servers: " + err.Error()}
		}
	case '{':
		fields, err := objectFields(data)
		if err != nil {
			return nil, &ConfigError{Message: err.Error()}
		}
		found := false
		for _, f := range fields {
			if f.key != "mcpServers" && f.key != "servers" {
				continue
			}
			found = true
			v := bytes.TrimSpace(f.value)
			switch {
			case len(v) > 0 && v[0] == '[':
				var list []ServerConfig
				if err := json.Unmarshal(v, &list); err != nil {
					return nil, &ConfigError{Message: fmt.Sprintf("%q: %v", f.key, err)}
				}
				entries = append(entries, list...)
			case len(v) > 0 && v[0] == '{':
				named, err := objectFields(v)
				if err != nil {
					return nil, &ConfigError{Message: fmt.Sprintf("%q: %v", f.key, err)}
				}
				for _, n := range named {
					var sc ServerConfig
					if err := json.Unmarshal(n.value, &sc); err != nil {
						return nil, &ConfigError{Alias: n.key, Message: err.Error()}
					}
					if sc.Alias == "" {
						sc.Alias = n.key
					}
					entries = append(entries, sc)
				}
			case string(v) == "null":
			default:
				return nil, &ConfigError{Message: fmt.Sprintf("%q must be an object or a list", f.key)}
			}
		}
		if !found {
			return nil, &ConfigError{Message: `expected a list of servers, or an object with "mcpServers" or "servers"`}
		}
	default:
		return nil, &ConfigError{Message: "expected a JSON list or object"}
	}

	out := make([]ServerConfig, 0, len(entries))
	seen := make(map[string]bool)
	for _, sc := range entries {
		if sc.Disabled {
			continue
		}
		if err := sc.normalize(os.Getenv); err != nil {
			return nil, err
		}
		if seen[sc.Alias] {
			return nil, &ConfigError{Alias: sc.Alias, Message: "the alias is used twice"}
		}
		seen[sc.Alias] = true
		out = append(out, sc)
	}
	return out, nil
}

// Validate reports whether c can be used as it is: an alias without
// "::", a known type, a command for stdio, an http(s) URL for HTTP.
func (c *ServerConfig) Validate() error {
	cp := *c
	cp.Args = append([]string(nil), c.Args...)
	cp.Env = maps.Clone(c.Env)
	cp.Headers = maps.Clone(c.Headers)
	cp.Sandbox = c.Sandbox.clone()
	return cp.normalize(os.Getenv)
}

// normalize infers the type, expands variables and checks the entry.
func (c *ServerConfig) normalize(getenv func(string) string) error {
	c.Alias = strings.TrimSpace(c.Alias)
	if c.Alias == "" {
		return &ConfigError{Message: "a server has no alias"}
	}
	if strings.Contains(c.Alias, Separator) {
		return &ConfigError{Alias: c.Alias, Message: fmt.Sprintf("an alias cannot contain %q", Separator)}
	}
	switch strings.ToLower(c.Type) {
	case "":
		switch {
		case c.Command != "" && c.URL == "":
			c.Type = TypeStdio
		case c.URL != "" && c.Command == "":
			c.Type = TypeHTTP
		default:
			return &ConfigError{Alias: c.Alias, Message: `give either "command" (stdio) or "url" (http)`}
		}
	case "stdio":
		c.Type = TypeStdio
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		c.Type = TypeHTTP
	case "sse":
		c.Type = TypeSSE
	default:
		return &ConfigError{Alias: c.Alias, Message: fmt.Sprintf("unknown type %q (want stdio, http or sse)", c.Type)}
	}
	for i, a := range c.Args {
		c.Args[i] = expandVars(a, getenv)
	}
	for k, v := range c.Env {
		c.Env[k] = expandVars(v, getenv)
	}
	for k, v := range c.Headers {
		c.Headers[k] = expandVars(v, getenv)
	}
	c.URL = expandVars(c.URL, getenv)
	if c.OAuth != nil {
		o := *c.OAuth
		o.ClientID, o.ClientSecret = expandVars(o.ClientID, getenv), expandVars(o.ClientSecret, getenv)
		o.PrivateKey, o.PrivateKeyFile = expandVars(o.PrivateKey, getenv), expandVars(o.PrivateKeyFile, getenv)
		if c.Type != TypeHTTP {
			return &ConfigError{Alias: c.Alias, Message: `"oauth" applies to streamable HTTP servers only`}
		}
		if err := o.Validate(); err != nil {
			return &ConfigError{Alias: c.Alias, Message: "oauth: " + err.Error()}
		}
		c.OAuth = &o
	}
	if err := c.checkSandbox(getenv); err != nil {
		return err
	}
	switch c.Type {
	case TypeStdio:
		if c.Command == "" {
			return &ConfigError{Alias: c.Alias, Message: `a stdio server needs a "command"`}
		}
	default:
		u, err := url.Parse(c.URL)
		if c.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &ConfigError{Alias: c.Alias, Message: fmt.Sprintf("%q is not an http(s) URL", c.URL)}
		}
	}
	return nil
}

var varPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)
})

// expandVars replaces ${NAME} and ${NAME:-default}; a lone $ and $NAME
// are left alone so that arguments meant for a shell survive.
func expandVars(s string, getenv func(string) string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return varPattern().ReplaceAllStringFunc(s, func(m string) string {
		sub := varPattern().FindStringSubmatch(m)
		if v := getenv(sub[1]); v != "" {
			return v
		}
		return sub[3]
	})
}

type field struct {
	key   string
	value json.RawMessage
}

// objectFields decodes a JSON object's members in the order they appear.
func objectFields(data []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("expected a JSON object")
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("expected an object key")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, field{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the object")
	}
	return out, nil
}
