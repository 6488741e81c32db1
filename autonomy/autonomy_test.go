package autonomy_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lcptools/lcp/autonomy"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want autonomy.Level
		ok   bool
	}{
		{"", autonomy.Safe, true},
		{"strict", autonomy.Strict, true},
		{"safe", autonomy.Safe, true},
		{"full_access", autonomy.FullAccess, true},
		{"Safe", "", false},
		{"full-access", "", false},
		{"yolo", "", false},
		{" safe", "", false},
	}
	for _, tt := range tests {
		got, err := autonomy.Parse(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("Parse(%q) = %q, %v", tt.in, got, err)
		}
		if err != nil && !errors.Is(err, autonomy.ErrUnknown) {
			t.Errorf("Parse(%q) error %v does not wrap ErrUnknown", tt.in, err)
		}
	}
}

func TestFromConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  map[string]any
		want autonomy.Level
	}{
		{"no config", nil, autonomy.Safe},
		{"not set", map[string]any{"root": "/x"}, autonomy.Safe},
		{"null", map[string]any{"autonomy_level": nil}, autonomy.Safe},
		{"strict", map[string]any{"autonomy_level": "strict"}, autonomy.Strict},
		{"full_access", map[string]any{"autonomy_level": "full_access"}, autonomy.FullAccess},
		{"unknown fails closed", map[string]any{"autonomy_level": "yolo"}, autonomy.Strict},
		{"not a string fails closed", map[string]any{"autonomy_level": true}, autonomy.Strict},
	}
	for _, tt := range tests {
		if got := autonomy.FromConfig(tt.cfg); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestValidateHostConfigs(t *testing.T) {
	if err := autonomy.ValidateHostConfigs(map[string]map[string]any{
		"system_shell":    {"autonomy_level": "strict"},
		"execute_python":  {"autonomy_level": "full_access"},
		"workspace_tools": {"root_path": "/data"},
		"empty":           nil,
	}); err != nil {
		t.Fatalf("valid configs: %v", err)
	}
	err := autonomy.ValidateHostConfigs(map[string]map[string]any{
		"system_shell":   {"autonomy_level": "yolo"},
		"execute_python": {"autonomy_level": 3},
		"ok":             {"autonomy_level": "safe"},
	})
	want := `host_tool_configs["execute_python"].autonomy_level: unknown autonomy level: 3 is a int, not a string` + "\n" +
		`host_tool_configs["system_shell"].autonomy_level: unknown autonomy level "yolo" (want strict, safe or full_access)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	var ce *autonomy.ConfigError
	if !errors.As(err, &ce) || ce.Library != "execute_python" || !errors.Is(err, autonomy.ErrUnknown) {
		t.Errorf("error %v is not a *ConfigError wrapping ErrUnknown", err)
	}
}

// The seeds' matrix: strict asks every time, safe only for risky work,
// full_access never.
func TestNeedsApproval(t *testing.T) {
	for _, tt := range []struct {
		l            autonomy.Level
		benign, risk bool
	}{
		{autonomy.Strict, true, true},
		{autonomy.Safe, false, true},
		{autonomy.FullAccess, false, false},
		{"bogus", true, true},
	} {
		if got := tt.l.NeedsApproval(false); got != tt.benign {
			t.Errorf("%s benign: %v", tt.l, got)
		}
		if got := tt.l.NeedsApproval(true); got != tt.risk {
			t.Errorf("%s risky: %v", tt.l, got)
		}
	}
}

// A host validates its configuration when it loads it.
func ExampleValidateHostConfigs() {
	err := autonomy.ValidateHostConfigs(map[string]map[string]any{
		"system_shell":   {"autonomy_level": "strict"},
		"execute_python": {"autonomy_level": "unsafe"},
	})
	fmt.Println(err)
	// Output:
	// host_tool_configs["execute_python"].autonomy_level: unknown autonomy level "unsafe" (want strict, safe or full_access)
}

// A tool reads its level from its library's configuration.
func ExampleFromConfig() {
	level := autonomy.FromConfig(map[string]any{"autonomy_level": "safe"})
	fmt.Println(level, level.NeedsApproval(false), level.NeedsApproval(true))
	// Output: safe false true
}
