package fulltest

import (
	"strings"
	"testing"
)

func TestOnly(t *testing.T) {
	for _, tt := range []struct {
		value string
		runs  bool
	}{
		{"", false},
		{"0", false},
		{"1", true},
		{"yes", true},
	} {
		t.Run("LCP_TEST_FULL="+tt.value, func(t *testing.T) {
			t.Setenv(Env, tt.value)
			if Enabled() != tt.runs {
				t.Errorf("Enabled() = %v, want %v", !tt.runs, tt.runs)
			}
			var ran, skipped bool
			t.Run("slow", func(t *testing.T) {
				defer func() { skipped = t.Skipped() }()
				Only(t, "a minute of load")
				ran = true
			})
			if ran != tt.runs || skipped == tt.runs {
				t.Errorf("ran %v, skipped %v; want ran %v", ran, skipped, tt.runs)
			}
		})
	}
	if !strings.Contains(skipMessage("x"), "LCP_TEST_FULL=1") {
		t.Errorf("the skip message does not say how to run the test: %q", skipMessage("x"))
	}
}
