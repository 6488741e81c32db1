package cli

import (
	"errors"
	"fmt"
	"github.com/lcptools/lcp/internal/editdist"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// suggest returns the candidates nearest to name, best first, at most
// three: those within a few edits (more for longer names), ignoring case
// and the tool_ prefix of LCP tools and the alias:: prefix of MCP tools,
// so that "list_files" finds tool_list_files and "read_file" finds
// fs::read_file.
func suggest(name string, candidates []string) []string {
	type scored struct {
		name string
		d    int
	}
	key := func(s string) string {
		s = strings.ToLower(s)
		if i := strings.LastIndex(s, "::"); i >= 0 {
			s = s[i+2:]
		}
		return strings.TrimPrefix(s, "tool_")
	}
	want := key(name)
	if want == "" {
		return nil
	}
	limit := max(2, len([]rune(want))/4)
	var found []scored
	for _, c := range candidates {
		d := editdist.Levenshtein(want, key(c), limit)
		if d <= limit {
			found = append(found, scored{c, d})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return a.d - b.d })
	if len(found) > 0 && found[0].d == 0 {
		// The same name but for case or a prefix: only those.
		n := 1
		for n < len(found) && found[n].d == 0 {
			n++
		}
		found = found[:n]
	}
	var out []string
	for _, f := range found[:min(len(found), 3)] {
		out = append(out, f.name)
	}
	return out
}

// didYouMean is " Did you mean X?" (or "X or Y?") for suggestions, "" for
// none.
func didYouMean(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return " Did you mean " + names[0] + "?"
	}
	return " Did you mean " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1] + "?"
}

// subcommandArgs is the Args check of a command that has subcommands and
// takes no arguments itself: a word that is no subcommand is an unknown
// command, with the nearest ones suggested.
func subcommandArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
			names = append(names, c.Aliases...)
		}
	}
	hint := didYouMean(suggest(args[0], names))
	if hint == "" {
		hint = fmt.Sprintf(" Run '%s --help' for usage.", cmd.CommandPath())
	}
	return usagef("unknown command %q for %q.%s", args[0], cmd.CommandPath(), hint)
}

// flagError is the FlagErrorFunc of every command: a usage error, with
// the nearest flags of the command suggested for an unknown one. For lcp
// call, an unknown flag near no flag is taken for a tool argument given as
// a flag (--city Paris), and the key=value form is suggested; args are the
// command line, where the value is looked up.
func flagError(cmd *cobra.Command, err error, args []string) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		if short, ok := strings.CutPrefix(msg, "unknown shorthand flag: "); ok {
			// "unknown shorthand flag: 'x' in -xyz": -xyz may be a long
			// flag given with one dash.
			if _, word, ok := strings.Cut(short, " in -"); ok && len(word) > 1 {
				name = word
			}
		}
	}
	if name == "" {
		return &usageError{err}
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	var hints []string
	for _, s := range suggest(name, names) {
		hints = append(hints, "--"+s)
	}
	hint := didYouMean(hints)
	if hint == "" && cmd.Name() == "call" && !strings.ContainsAny(name, " =") {
		hint = fmt.Sprintf(" Tool arguments are key=value: %s=%s (or --args '{%q: ...}').", name, argValue(name, args), name)
	}
	if hint == "" {
		hint = fmt.Sprintf(" Run '%s --help' for its flags.", cmd.CommandPath())
	}
	return &usageError{errors.New(msg + "." + hint)}
}

// argValue is the value given after the unknown flag --name on the
// command line (--name VALUE or --name=VALUE), shell-quoted when it needs
// quotes; VALUE when there is none.
func argValue(name string, args []string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return shellWord(v)
		}
		if a == "--"+name && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			return shellWord(args[i+1])
		}
	}
	return "VALUE"
}

// shellWord quotes s for a POSIX shell when it has characters the shell
// would read.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// noArgs is the Args check of a command that takes no arguments: a usage
// error (exit 2) that names the first one.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q. Run '%s --help' for usage.", cmd.CommandPath(), args[0], cmd.CommandPath())
	}
	return nil
}
