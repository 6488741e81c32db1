package editdist

import (
	"fmt"
	"testing"
)

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"", "", 3, 0},
		{"list", "list", 3, 0},
		{"tool_list_file", "tool_list_files", 3, 1},
		{"kitten", "sitting", 5, 3},
		{"kitten", "sitting", 2, 3}, // over the limit: limit+1
		{"héllo", "hello", 3, 1},    // runes, not bytes
		{"a", "abcdef", 2, 3},       // lengths alone exceed the limit
		{"", "abc", 5, 3},
	} {
		if got := Levenshtein(tc.a, tc.b, tc.limit); got != tc.want {
			t.Errorf("Levenshtein(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.limit, got, tc.want)
		}
	}
}

func ExampleLevenshtein() {
	fmt.Println(Levenshtein("serve", "serv", 2))
	fmt.Println(Levenshtein("serve", "chat", 2))
	// Output:
	// 1
	// 3
}
