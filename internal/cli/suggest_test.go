package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSuggest(t *testing.T) {
	tools := []string{"tool_list_files", "tool_read_file", "tool_write_file", "tool_file_info", "fs::read_text_file", "tool_execute_shell_command"}
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"tool_list_file", []string{"tool_list_files"}},
		{"list_files", []string{"tool_list_files"}},
		{"TOOL_READ_FILE", []string{"tool_read_file"}},
		{"tool_reed_file", []string{"tool_read_file"}},
		{"tool_rad_file", []string{"tool_read_file"}},
		{"read_text_file", []string{"fs::read_text_file"}},
		{"tool_execute_shell_comand", []string{"tool_execute_shell_command"}},
		{"tool_deploy", nil},
		{"", nil},
	} {
		if got := suggest(tt.name, tools); !cmp.Equal(got, tt.want) {
			t.Errorf("suggest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := suggest("colour", []string{"flavour", "colours", "color", "paint"}); !cmp.Equal(got, []string{"colours", "color"}) {
		t.Errorf("suggest(colour) = %q", got)
	}
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, " Did you mean a?"},
		{[]string{"a", "b"}, " Did you mean a or b?"},
		{[]string{"a", "b", "c"}, " Did you mean a, b or c?"},
	} {
		if got := didYouMean(tt.names); got != tt.want {
			t.Errorf("didYouMean(%q) = %q, want %q", tt.names, got, tt.want)
		}
	}
}

// Unknown commands, subcommands, flags and arguments: one line on stderr
// with the nearest valid name, exit 2.
func TestDidYouMeanCommandsAndFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"lsit"}, `lcp: unknown command "lsit" for "lcp". Did you mean list?`},
		{[]string{"chekc"}, `lcp: unknown command "chekc" for "lcp". Did you mean check?`},
		{[]string{"frobnicate"}, `lcp: unknown command "frobnicate" for "lcp". Run 'lcp --help' for usage.`},
		{[]string{"mcp", "instal"}, `lcp: unknown command "instal" for "lcp mcp". Did you mean install?`},
		{[]string{"list", "--formt", "openai"}, `lcp: unknown flag: --formt. Did you mean --format?`},
		{[]string{"call", "--jsn", "tool_x"}, `lcp: unknown flag: --jsn. Did you mean --json?`},
		{[]string{"check", "-json"}, `lcp: unknown shorthand flag: 'j' in -json. Did you mean --json?`},
		{[]string{"list", "--zzzzzzzz"}, `lcp: unknown flag: --zzzzzzzz. Run 'lcp list --help' for its flags.`},
		{[]string{"list", "extra"}, `lcp: lcp list takes no arguments, got "extra". Run 'lcp list --help' for usage.`},
		{[]string{"list", "--mount", "system_shel"}, `lcp: --mount: no tool library "system_shel" in the tools folders or the built-in library. Did you mean system_shell?`},
	} {
		_, errOut, code := run(t, "", tt.args...)
		if code != ExitUsage || strings.TrimSpace(errOut) != tt.want || strings.Count(errOut, "\n") != 1 {
			t.Errorf("lcp %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tt.args, " "), code, errOut, tt.want)
		}
	}
}
