package cli

import (
	"strings"
	"testing"
	"time"
)

// LCP_PROMPT_TIMEOUT sets the prompt functions' budget; nonsense is a
// usage error naming the variable.
func TestPromptTimeoutFromEnvironment(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  time.Duration
		err   string
	}{
		{"", 0, ""},
		{"2m", 2 * time.Minute, ""},
		{"soon", 0, `LCP_PROMPT_TIMEOUT="soon": want a positive duration`},
		{"-1s", 0, `LCP_PROMPT_TIMEOUT="-1s": want a positive duration`},
		{"0", 0, `LCP_PROMPT_TIMEOUT="0": want a positive duration`},
	} {
		f := inventoryFlags{pathsAsFindings: true, getenv: func(k string) string {
			if k == "LCP_PROMPT_TIMEOUT" {
				return tt.value
			}
			return ""
		}}
		cfg, err := f.config()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || ExitCode(err) != ExitUsage {
				t.Errorf("%q: %v, want a usage error with %q", tt.value, err, tt.err)
			}
			continue
		}
		if err != nil || cfg.PromptTimeout != tt.want {
			t.Errorf("%q: %v, %v; want %v", tt.value, cfg, err, tt.want)
		}
	}
}
