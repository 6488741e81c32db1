package sandbox

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
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

// TestReadSettingsBudget: the budget's keys take positive numbers; any
// other value is an error that names the key, and sets no limit.
func TestReadSettingsBudget(t *testing.T) {
	tests := []struct {
		key  string
		v    any
		want Limits
		err  string
	}{
		{KeyRunMemoryMB, 512.0, Limits{TotalMemory: 512 << 20}, ""},
		{KeyDiskMB, 256, Limits{Disk: 256 << 20}, ""},
		{KeyTimeSeconds, 1.5, Limits{WallTime: 1500 * time.Millisecond}, ""},
		{KeyProcesses, 64.0, Limits{Processes: 64}, ""},
		{KeyRunMemoryMB, -1.0, Limits{}, "sandbox_run_memory_mb is -1 (float64), want a positive number"},
		{KeyRunMemoryMB, 0.0, Limits{}, "sandbox_run_memory_mb is 0 (float64), want a positive number"},
		{KeyDiskMB, "lots", Limits{}, "sandbox_disk_mb is lots (string), want a number"},
		{KeyDiskMB, "-1", Limits{}, "sandbox_disk_mb is -1 (string), want a number"},
		{KeyTimeSeconds, true, Limits{}, "sandbox_time_seconds is true (bool), want a number"},
		{KeyRunMemoryMB, 1e300, Limits{}, "want a number up to"},
		{KeyProcesses, math.NaN(), Limits{}, "want a positive number"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s=%v", tt.key, tt.v), func(t *testing.T) {
			s, err := ReadSettings(map[string]any{tt.key: tt.v})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if s.Limits != tt.want {
				t.Errorf("limits %+v, want %+v", s.Limits, tt.want)
			}
		})
	}
}

// TestApplyBudget: the host's budget fills the keys a library does not
// set, for the named libraries and every configured one, and leaves the
// caller's maps alone.
func TestApplyBudget(t *testing.T) {
	configs := map[string]map[string]any{"mine": {KeyRunMemoryMB: 100.0}}
	out := ApplyBudget(configs, []string{"system_shell"}, Limits{TotalMemory: 512 << 20, WallTime: time.Minute})
	for _, tc := range []struct {
		lib, key string
		want     any
	}{
		{"mine", KeyRunMemoryMB, 100.0},
		{"mine", KeyTimeSeconds, 60.0},
		{"system_shell", KeyRunMemoryMB, 512.0},
		{"system_shell", KeyDiskMB, nil},
	} {
		if got := out[tc.lib][tc.key]; got != tc.want {
			t.Errorf("%s %s = %v, want %v", tc.lib, tc.key, got, tc.want)
		}
	}
	if len(configs) != 1 || len(configs["mine"]) != 1 {
		t.Errorf("the caller's configs changed: %v", configs)
	}
	if s, err := ReadSettings(out["system_shell"]); err != nil || s.Limits.TotalMemory != 512<<20 {
		t.Errorf("settings %+v, %v", s.Limits, err)
	}
	if got := ApplyBudget(configs, nil, Limits{}); len(got) != 1 {
		t.Errorf("no budget: %v", got)
	}
}
