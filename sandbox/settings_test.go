package sandbox

import (
	"strings"
	"testing"
)

func TestReadSettingsNetwork(t *testing.T) {
	tests := []struct {
		name    string
		network any
		host    bool
		allow   string // the list, joined; "-" for none
		err     string
	}{
		{"absent", nil, false, "-", ""},
		{"true", true, true, "-", ""},
		{"false", false, false, "-", ""},
		{"list", []any{"pypi.org", "*.example.org:443"}, false, "pypi.org,*.example.org:443", ""},
		{"empty list", []any{}, false, "", ""},
		{"strings", []string{"127.0.0.1:8080"}, false, "127.0.0.1:8080", ""},
		{"bad entry", []any{"pypi.org/simple"}, false, "-", `network entry "pypi.org/simple"`},
		{"not a string", []any{443}, false, "-", "a host pattern"},
		{"a string", "pypi.org", false, "-", "true, false or a list of host patterns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := map[string]any{}
			if tt.network != nil {
				cfg[KeyNetwork] = tt.network
			}
			s, err := ReadSettings(cfg)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			allow := "-"
			if s.Allow != nil {
				allow = strings.Join(s.Allow.Strings(), ",")
			}
			if s.Network != tt.host || allow != tt.allow {
				t.Errorf("network %v, allow %q; want %v, %q", s.Network, allow, tt.host, tt.allow)
			}
		})
	}
}
