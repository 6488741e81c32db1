package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestCommandNames checks that each entry of the commands table is named
// as the command it builds, that the table holds every command, and that hotCommand picks only
// those names.
func TestCommandNames(t *testing.T) {
	root := NewRoot(testEnv())
	var built []string
	for _, c := range root.Commands() {
		if c.Name() != "help" && c.Name() != "completion" {
			built = append(built, c.Name())
		}
	}
	var table []string
	for _, c := range commands {
		table = append(table, c.name)
		if got := c.new(testEnv()).Name(); got != c.name {
			t.Errorf("commands entry %q builds %q", c.name, got)
		}
	}
	slices.Sort(built)
	slices.Sort(table)
	if !slices.Equal(built, table) {
		t.Errorf("root has %v, the table %v", built, table)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"version"}, "version"},
		{[]string{"list", "--json"}, "list"},
		{[]string{"mcp", "install"}, "mcp"},
		{[]string{"--version"}, ""},
		{[]string{"help", "list"}, ""},
		{[]string{"completion", "bash"}, ""},
		{[]string{"__complete", "li"}, ""},
		{[]string{"lis"}, ""},
		{[]string{"-h"}, ""},
	} {
		if got := hotCommand(tc.args); got != tc.want {
			t.Errorf("hotCommand(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestHotRootSameOutput runs command lines through the root Main builds
// (only the named subcommand) and through the whole tree, and compares
// stdout, stderr and the exit code byte for byte.
func TestHotRootSameOutput(t *testing.T) {
	lines := [][]string{
		{"version"},
		{"version", "--json"},
		{"version", "extra"},
		{"version", "--jsn"},
		{"check", "--tools", t.TempDir()},
		{"new", "--bogus"},
		{"mcp", "nosuch"},
		{"mcp", "install", "--help"},
		{"doctor", "--help"},
		{"serve", "--help"},
		{"chat", "--help"},
		{"call", "--city", "Paris"},
	}
	for _, c := range commands {
		lines = append(lines, []string{c.name, "--help"}, []string{c.name, "-h"})
	}
	for _, args := range lines {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			if hotCommand(args) == "" {
				t.Fatalf("%q builds the whole tree", args)
			}
			hot := runRoot(t, args, hotCommand(args))
			full := runRoot(t, args, "")
			if hot != full {
				t.Errorf("only %s:\n%s\nthe whole tree:\n%s", hotCommand(args), hot, full)
			}
			if strings.TrimSpace(hot) == "exit 0" {
				t.Errorf("%q printed nothing", args)
			}
		})
	}
}

// runRoot runs args through newRoot(env, only) as Main does and returns
// its stdout, stderr and exit code as one text.
func runRoot(t *testing.T, args []string, only string) string {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Args: args}
	code := run1(env, newRoot(env, only))
	return "stdout:\n" + out.String() + "\nstderr:\n" + errb.String() + "\nexit " + string(rune('0'+code))
}
