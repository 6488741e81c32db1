package lcp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/tool"
)

func TestParseBridgeEntry(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    mcp.ServerConfig
		connect time.Duration
		err     string
	}{
		{in: `{"alias": "fs", "type": "stdio", "command": "npx", "args": ["-y", "pkg", "/data"], "env": {"K": "v"}}`,
			want:    mcp.ServerConfig{Alias: "fs", Type: mcp.TypeStdio, Command: "npx", Args: []string{"-y", "pkg", "/data"}, Env: map[string]string{"K": "v"}},
			connect: bridgeConnectTimeout},
		{in: `{"alias": "fs", "command": ["npx", "-y", "pkg"], "args": ["/data"], "cwd": "/w", "timeout": 2.5}`,
			want:    mcp.ServerConfig{Alias: "fs", Type: mcp.TypeStdio, Command: "npx", Args: []string{"-y", "pkg", "/data"}, Dir: "/w"},
			connect: 2500 * time.Millisecond},
		{in: `{"alias": "web", "type": "http", "url": "http://localhost:8000/mcp", "auth_config": {"type": "bearer", "token": "t0k"}}`,
			want:    mcp.ServerConfig{Alias: "web", Type: mcp.TypeHTTP, URL: "http://localhost:8000/mcp", Headers: map[string]string{"Authorization": "Bearer t0k"}},
			connect: bridgeConnectTimeout},
		{in: `{"alias": "web", "url": "https://x/mcp", "headers": {"X-API-Key": "mine"}, "auth_config": {"type": "api_key", "key": "k"}}`,
			want:    mcp.ServerConfig{Alias: "web", Type: mcp.TypeHTTP, URL: "https://x/mcp", Headers: map[string]string{"X-API-Key": "mine"}},
			connect: bridgeConnectTimeout},
		{in: `{"alias": "web", "type": "streamable-http", "url": "https://x/mcp", "auth_config": {"type": "api_key", "key": "k", "header_name": "Api-Key"}, "timeout": null}`,
			want:    mcp.ServerConfig{Alias: "web", Type: mcp.TypeHTTP, URL: "https://x/mcp", Headers: map[string]string{"Api-Key": "k"}},
			connect: bridgeConnectTimeout},
		{in: `[]`, err: "must be a JSON object"},
		{in: `null`, err: "must be a JSON object"},
		{in: `{"command": "x"}`, err: "no alias"},
		{in: `{"alias": "a::b", "command": "x"}`, err: `cannot contain "::"`},
		{in: `{"alias": "a", "type": "carrier-pigeon", "command": "x"}`, err: "unknown type"},
		{in: `{"alias": "a", "command": []}`, err: `server "a": "command" must be a program name or a non-empty list`},
		{in: `{"alias": "a", "command": [3]}`, err: `"command" must be`},
		{in: `{"alias": "a", "command": ["x"], "args": "y"}`, err: `"args" must be a list`},
		{in: `{"alias": "a", "command": "x", "timeout": -1}`, err: "out of range"},
		{in: `{"alias": "a", "command": "x", "timeout": "soon"}`, err: "number of seconds"},
		{in: `{"alias": "a", "command": "x", "timeout": 1e9}`, err: "out of range"},
		{in: `{"alias": "a", "url": "http://x", "auth_config": {"type": "magic"}}`, err: "unknown type"},
		{in: `{"alias": "a", "url": "http://x", "auth_config": {"type": "bearer"}}`, err: `needs a "token"`},
		{in: `{"alias": "a", "url": "ftp://x"}`, err: "not an http(s) URL"},
		{in: `{"alias": "a", "command": "x", "disabled": true}`, err: "disabled"},
	} {
		got, err := parseBridgeEntry(json.RawMessage(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %v, want an error with %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got.cfg); diff != "" || got.connect != tt.connect {
			t.Errorf("%s: mismatch (-want +got):\n%s connect %v", tt.in, diff, got.connect)
		}
	}
}

func TestBridgeKeys(t *testing.T) {
	a, _ := parseBridgeEntry(json.RawMessage(`{"alias": "fs", "command": "npx", "args": ["a"]}`))
	b, _ := parseBridgeEntry(json.RawMessage(`{"alias": "fs", "type": "stdio", "command": ["npx", "a"]}`))
	c, _ := parseBridgeEntry(json.RawMessage(`{"alias": "fs", "command": "npx", "args": ["a"], "timeout": 5}`))
	if a.key() != b.key() {
		t.Errorf("the same server in two forms has two keys:\n%s\n%s", a.key(), b.key())
	}
	if a.key() == c.key() {
		t.Error("another connection limit shares the session")
	}
}

func TestResolveBridgeTool(t *testing.T) {
	infos := []tool.Info{{Name: "fs::read_file"}, {Name: "fs::tool_kept"}}
	for _, tt := range []struct {
		name, want string
		ok         bool
	}{
		{"read_file", "fs::read_file", true},
		{"tool_read_file", "fs::read_file", true},
		{"tool_kept", "fs::tool_kept", true},
		{"kept", "", false},
		{"tool_", "", false},
		{"write_file", "", false},
	} {
		got, ok := resolveBridgeTool(infos, "fs", tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: %q %v, want %q %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzParseBridgeEntry feeds the reader of server entries (written by
// Python code) anything: it must never panic, and what it accepts must be
// a usable configuration.
func FuzzParseBridgeEntry(f *testing.F) {
	for _, s := range []string{
		`{"alias": "fs", "command": ["npx", "-y", "pkg"], "args": ["/d"], "timeout": 3}`,
		`{"alias": "w", "url": "http://x/mcp", "auth_config": {"type": "bearer", "token": "t"}, "headers": {"A": "b"}}`,
		`{"alias": "w", "url": "http://x/mcp", "auth_config": {"type": "api_key", "key": "k"}}`,
		`{"alias": "a", "command": "x", "env": {"K": "${HOME}"}}`,
		`{}`, `[]`, `"x"`, `{"alias": 3}`, `{"alias": "a", "command": [null]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := parseBridgeEntry(data)
		if err != nil {
			return
		}
		if err := e.cfg.Validate(); err != nil {
			t.Fatalf("accepted an unusable entry %s: %v", data, err)
		}
		if e.connect <= 0 || e.connect > maxBridgeTimeout {
			t.Fatalf("connection limit %v", e.connect)
		}
	})
}
