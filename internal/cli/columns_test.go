package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestDisplayWidth(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{"notes", 5},
		{"🧰 notes", 8},
		{"☀️ weather", 10}, // U+2600 with VS16: the emoji form, two columns
		{"👩‍💻 dev", 6},     // a ZWJ sequence shows as one emoji
		{"日本語", 6},
		{"café", 4},
		{"e\u0301", 1},
		{"\x1b[1mtool_x\x1b[0m", 6},
	} {
		if got := displayWidth(c.s); got != c.want {
			t.Errorf("displayWidth(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}

// TestColumnsEmoji: the columns after a cell with an emoji start where
// they start on the other lines.
func TestColumnsEmoji(t *testing.T) {
	var b bytes.Buffer
	tw := newColumns(&b)
	fmt.Fprintf(tw, "TOOL\tLIBRARY\tDESCRIPTION\n")
	fmt.Fprintf(tw, "tool_a\t🧰 notes\tfirst\n")
	fmt.Fprintf(tw, "tool_bb\tplain\tsecond\n")
	fmt.Fprintf(tw, "tool_c\t日本\tthird\n")
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"TOOL     LIBRARY   DESCRIPTION",
		"tool_a   🧰 notes  first",
		"tool_bb  plain     second",
		"tool_c   日本      third",
	}, "\n") + "\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
