package discover

import "testing"

// TestSumOf checks that equal contents have equal sums and that the
// changes an editor makes to a file give another sum.
func TestSumOf(t *testing.T) {
	base := []byte("def tool_a(x: int):\n    return x\n")
	tests := []struct {
		name  string
		other []byte
		same  bool
	}{
		{"a copy", append([]byte(nil), base...), true},
		{"one byte changed", []byte("def tool_a(x: int):\n    return y\n"), false},
		{"a byte appended", append(append([]byte(nil), base...), '\n'), false},
		{"the last byte removed", base[:len(base)-1], false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SumOf(base) == SumOf(tt.other); got != tt.same {
				t.Errorf("SumOf(base) == SumOf(%q) is %v, want %v", tt.other, got, tt.same)
			}
		})
	}
	if SumOf(nil) != SumOf([]byte{}) {
		t.Error("nil and empty contents have different sums")
	}
}
