package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	t.Setenv("LCP_TEST_TOKEN", "tok123")
	cases := []struct {
		name string
		in   string
		want []ServerConfig
		err  string
	}{
		{
			name: "LCP list",
			in: `[{"alias":"fs","type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/data"]},
			      {"alias":"web","type":"http","url":"http://localhost:8000/mcp"}]`,
			want: []ServerConfig{
				{Alias: "fs", Type: TypeStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/data"}},
				{Alias: "web", Type: TypeHTTP, URL: "http://localhost:8000/mcp"},
			},
		},
		{
			name: "desktop mcpServers in file order, types inferred, variables expanded",
			in: `{"mcpServers": {
				"zeta": {"command": "node", "args": ["server.js"], "env": {"KEY": "${LCP_TEST_TOKEN}", "N": "${LCP_TEST_UNSET:-7}"}},
				"alpha": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${LCP_TEST_TOKEN}"}},
				"off": {"command": "x", "disabled": true},
				"remote": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"}
			}}`,
			want: []ServerConfig{
				{Alias: "zeta", Type: TypeStdio, Command: "node", Args: []string{"server.js"}, Env: map[string]string{"KEY": "tok123", "N": "7"}},
				{Alias: "alpha", Type: TypeHTTP, URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer tok123"}},
				{Alias: "remote", Type: TypeHTTP, URL: "http://127.0.0.1:9/mcp"},
			},
		},
		{
			name: "servers map (IDE shape)",
			in:   `{"servers": {"a": {"type": "stdio", "command": "a-server"}, "b": {"type": "sse", "url": "http://localhost:1/sse"}}}`,
			want: []ServerConfig{{Alias: "a", Type: TypeStdio, Command: "a-server"}, {Alias: "b", Type: TypeSSE, URL: "http://localhost:1/sse"}},
		},
		{
			name: "servers list (host configuration)",
			in:   `{"servers": [{"alias": "a", "command": "a-server", "args": ["$HOME", "${}"]}]}`,
			want: []ServerConfig{{Alias: "a", Type: TypeStdio, Command: "a-server", Args: []string{"$HOME", "${}"}}},
		},
		{name: "empty", in: ``, err: "empty configuration"},
		{name: "not JSON", in: `{nope`, err: "invalid character"},
		{name: "scalar", in: `42`, err: "expected a JSON list or object"},
		{name: "other object", in: `{"tools": []}`, err: `"mcpServers" or "servers"`},
		{name: "no alias", in: `[{"command": "x"}]`, err: "no alias"},
		{name: "separator in alias", in: `[{"alias": "a::b", "command": "x"}]`, err: `cannot contain "::"`},
		{name: "both command and url", in: `[{"alias": "a", "command": "x", "url": "http://h/"}]`, err: "either"},
		{name: "stdio without command", in: `[{"alias": "a", "type": "stdio"}]`, err: `needs a "command"`},
		{name: "bad url", in: `[{"alias": "a", "type": "http", "url": "ftp://h/x"}]`, err: "not an http(s) URL"},
		{name: "unknown type", in: `[{"alias": "a", "type": "ws", "url": "http://h/"}]`, err: `unknown type "ws"`},
		{name: "duplicate alias", in: `[{"alias": "a", "command": "x"}, {"alias": "a", "command": "y"}]`, err: "used twice"},
		{name: "trailing data", in: `{"mcpServers": {}} {}`, err: "trailing data"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tc.in))
			if tc.err != "" {
				var ce *ConfigError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ce) {
					t.Fatalf("err = %v, want a *ConfigError containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadConfigNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`[{"alias":"x"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `server "x"`) {
		t.Errorf("err = %v", err)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("no error for a missing file")
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`[{"alias":"a","command":"x","args":["${A:-b}"]}]`,
		`{"mcpServers":{"a":{"url":"http://h/mcp","headers":{"K":"${K}"}}}}`,
		`{"servers":{"b":{"type":"sse","url":"https://h/"}}}`,
		`{"servers":null}`, `[]`, `{}`, `[{"alias":"a::"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, err := ParseConfig(data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, s := range servers {
			if err := s.Validate(); err != nil {
				t.Errorf("ParseConfig accepted an invalid entry %+v: %v", s, err)
			}
			if seen[s.Alias] || strings.Contains(s.Alias, Separator) {
				t.Errorf("alias %q", s.Alias)
			}
			seen[s.Alias] = true
		}
	})
}
