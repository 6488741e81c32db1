package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/sandbox"
)

func TestSandboxConfig(t *testing.T) {
	tests := []struct {
		name, entry string
		want        *SandboxConfig // nil: absent
		err         string
	}{
		{"absent", `{"command": "x"}`, nil, ""},
		{"false", `{"command": "x", "sandbox": false}`, &SandboxConfig{Off: true}, ""},
		{"true", `{"command": "x", "sandbox": true}`, &SandboxConfig{}, ""},
		{"object", `{"command": "x", "sandbox": {"read": ["~/.config/x"], "write": ["/srv"], "network": ["api.example.org", "*.example.net:443"], "workspace": "read-only", "env": ["EXTRA"]}}`,
			&SandboxConfig{Read: []string{"~/.config/x"}, Write: []string{"/srv"}, Network: []string{"api.example.org", "*.example.net:443"}, Workspace: "read-only", Env: []string{"EXTRA"}}, ""},
		{"host network", `{"command": "x", "sandbox": {"network": true}}`, &SandboxConfig{HostNetwork: true}, ""},
		{"unknown key", `{"command": "x", "sandbox": {"netwrok": ["a.org"]}}`, nil, `unknown field "netwrok"`},
		{"bad network entry", `{"command": "x", "sandbox": {"network": ["https://api.example.org"]}}`, nil, `server "s": "sandbox": network entry "https://api.example.org": write the host, not a URL`},
		{"bare star", `{"command": "x", "sandbox": {"network": ["*"]}}`, nil, `"network": true`},
		{"network not a list", `{"command": "x", "sandbox": {"network": "a.org"}}`, nil, `"network" must be true or a list`},
		{"relative path", `{"command": "x", "sandbox": {"read": ["data"]}}`, nil, `path "data" must be absolute`},
		{"bad workspace", `{"command": "x", "sandbox": {"workspace": "rw"}}`, nil, `"workspace" is "rw"`},
		{"secret by name", `{"command": "x", "sandbox": {"env": ["GITHUB_TOKEN"]}}`, nil, `GITHUB_TOKEN, which looks like a secret`},
		{"on an http server", `{"url": "http://127.0.0.1:1/mcp", "sandbox": {"read": ["/srv"]}}`, nil, `applies to stdio servers only`},
		{"false on an http server", `{"url": "http://127.0.0.1:1/mcp", "sandbox": false}`, &SandboxConfig{Off: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers, err := ParseConfig([]byte(`{"mcpServers": {"s": ` + tt.entry + `}}`))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				if !strings.Contains(err.Error(), `"s"`) {
					t.Errorf("the error does not name the entry: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := servers[0].Sandbox
			if got != nil {
				got.rules = nil
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(SandboxConfig{})); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if got == nil {
				return
			}
			// What MarshalJSON writes reads back the same.
			raw, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var back SandboxConfig
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*got, back, cmp.AllowUnexported(SandboxConfig{})); diff != "" {
				t.Errorf("round trip of %s: mismatch (-want +got):\n%s", raw, diff)
			}
		})
	}
}

// TestNoSandboxNoServer: where the box cannot be made, a stdio server
// does not start, unless its entry says "sandbox": false.
func TestNoSandboxNoServer(t *testing.T) {
	restore := sandbox.ForceOff("switched off by the test")
	defer restore()
	boxed := selfServer(t, "boxed")
	open := selfServer(t, "open")
	open.Sandbox = &SandboxConfig{Off: true}
	c := newClient(t, []ServerConfig{boxed, open}, nil)
	var be *BoxError
	if err := c.Err("boxed"); !errors.As(err, &be) || !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), `"sandbox": false`) {
		t.Fatalf("boxed: %v", err)
	}
	if err := c.Err("open"); err != nil {
		t.Fatalf("the opted-out server did not start: %v", err)
	}
}
