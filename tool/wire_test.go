package tool

import (
	"strings"
	"testing"
)

func TestWireNames(t *testing.T) {
	long := "server::" + strings.Repeat("x", 80)
	names := []string{"tool_read_file", "everything::echo", "everything__echo", "a.b c", "ünï", long, long + "y", ""}
	wire, back := WireNames(names)
	seen := map[string]bool{}
	for i, w := range wire {
		if !validWireName(w) {
			t.Errorf("%q -> %q is not a valid wire name", names[i], w)
		}
		if seen[w] {
			t.Errorf("%q -> %q clashes", names[i], w)
		}
		seen[w] = true
		if back[w] != names[i] {
			t.Errorf("back[%q] = %q, want %q", w, back[w], names[i])
		}
	}
	if wire[0] != "tool_read_file" || wire[2] != "everything__echo" {
		t.Errorf("valid names changed: %v", wire)
	}
	if !strings.HasPrefix(wire[1], "everything__echo_") {
		t.Errorf("a clash with a valid name is not suffixed: %q", wire[1])
	}
	if wire[3] != "a_b_c" {
		t.Errorf("sanitized: %q", wire[3])
	}
	again, _ := WireNames(names)
	for i := range wire {
		if again[i] != wire[i] {
			t.Fatalf("not deterministic: %q vs %q", again[i], wire[i])
		}
	}
}
