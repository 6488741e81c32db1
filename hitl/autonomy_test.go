package hitl_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

func TestParseAutonomy(t *testing.T) {
	tests := []struct {
		in   string
		want hitl.Autonomy
		ok   bool
	}{
		{"", hitl.Safe, true},
		{"strict", hitl.Strict, true},
		{"safe", hitl.Safe, true},
		{"full_access", hitl.FullAccess, true},
		{"Safe", "", false},
		{"full-access", "", false},
		{"yolo", "", false},
		{" safe", "", false},
	}
	for _, tt := range tests {
		got, err := hitl.ParseAutonomy(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseAutonomy(%q) = %q, %v", tt.in, got, err)
		}
		if err != nil && !errors.Is(err, hitl.ErrUnknownAutonomy) {
			t.Errorf("ParseAutonomy(%q) error %v does not wrap ErrUnknownAutonomy", tt.in, err)
		}
	}
}

func TestAutonomyFromContext(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		want hitl.Autonomy
	}{
		{"outside a call", context.Background(), hitl.Safe},
		{"no config", tool.WithCall(context.Background(), &tool.CallInfo{}), hitl.Safe},
		{"not set", tool.WithCall(context.Background(), &tool.CallInfo{Config: map[string]any{"root": "/x"}}), hitl.Safe},
		{"strict", tool.WithCall(context.Background(), &tool.CallInfo{Config: map[string]any{"autonomy_level": "strict"}}), hitl.Strict},
		{"full_access", tool.WithCall(context.Background(), &tool.CallInfo{Config: map[string]any{"autonomy_level": "full_access"}}), hitl.FullAccess},
		{"unknown fails closed", tool.WithCall(context.Background(), &tool.CallInfo{Config: map[string]any{"autonomy_level": "yolo"}}), hitl.Strict},
		{"not a string fails closed", tool.WithCall(context.Background(), &tool.CallInfo{Config: map[string]any{"autonomy_level": true}}), hitl.Strict},
	}
	for _, tt := range tests {
		if got := hitl.AutonomyFromContext(tt.ctx); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestValidateHostConfigs(t *testing.T) {
	if err := hitl.ValidateHostConfigs(map[string]map[string]any{
		"system_shell":    {"autonomy_level": "strict"},
		"execute_python":  {"autonomy_level": "full_access"},
		"workspace_tools": {"root_path": "/data"},
		"empty":           nil,
	}); err != nil {
		t.Fatalf("valid configs: %v", err)
	}
	err := hitl.ValidateHostConfigs(map[string]map[string]any{
		"system_shell":   {"autonomy_level": "yolo"},
		"execute_python": {"autonomy_level": 3},
		"ok":             {"autonomy_level": "safe"},
	})
	want := `host_tool_configs["execute_python"].autonomy_level: unknown autonomy level: 3 is a int, not a string` + "\n" +
		`host_tool_configs["system_shell"].autonomy_level: unknown autonomy level "yolo" (want strict, safe or full_access)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	var ce *hitl.ConfigError
	if !errors.As(err, &ce) || ce.Library != "execute_python" || !errors.Is(err, hitl.ErrUnknownAutonomy) {
		t.Errorf("error %v is not a *ConfigError wrapping ErrUnknownAutonomy", err)
	}
}

// The seeds' matrix: strict asks every time, safe only for risky work,
// full_access never.
func TestNeedsApproval(t *testing.T) {
	for _, tt := range []struct {
		a            hitl.Autonomy
		benign, risk bool
	}{
		{hitl.Strict, true, true},
		{hitl.Safe, false, true},
		{hitl.FullAccess, false, false},
		{"bogus", true, true},
	} {
		if got := tt.a.NeedsApproval(false); got != tt.benign {
			t.Errorf("%s benign: %v", tt.a, got)
		}
		if got := tt.a.NeedsApproval(true); got != tt.risk {
			t.Errorf("%s risky: %v", tt.a, got)
		}
	}
}

func TestParseApproval(t *testing.T) {
	for in, want := range map[string]hitl.Approval{"": hitl.ApproveAsk, "ask": hitl.ApproveAsk, "allow": hitl.ApproveAllow, "reject": hitl.ApproveReject} {
		if got, err := hitl.ParseApproval(in); got != want || err != nil {
			t.Errorf("ParseApproval(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := hitl.ParseApproval("yes"); err == nil {
		t.Error("ParseApproval(yes) should fail")
	}
}
