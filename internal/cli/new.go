package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/lcptools/lcp/scaffold"
	"github.com/spf13/cobra"
)

// NewOptions are the options of lcp new.
type NewOptions struct {
	env *Env
	ctx context.Context

	name string
	dir  string
}

// NewCmdNew returns lcp new; runF runs it (nil: runNew).
func NewCmdNew(env *Env, runF func(*NewOptions) error) *cobra.Command {
	o := &NewOptions{env: env}
	cmd := &cobra.Command{
		Use:   "new LIBRARY",
		Short: "Write a new tool library to start from",
		Long: `Write a new folder library DIR/LIBRARY/LIBRARY.py that follows the LCP
conventions: library metadata, the hooks that receive the host's
confirmation and user interaction handlers, helpers that ask the user and
the operator, a workspace path check, and one documented tool with
canonical results. It passes lcp check with no finding.

LIBRARY must be a Python identifier. Nothing is overwritten: an existing
DIR/LIBRARY or DIR/LIBRARY.py is an error. DIR (default: the current
directory) is created when missing.`,
		Example: `  $ lcp new my_notes --dir ./my_tools
  $ lcp check --tools ./my_tools
  $ lcp call --tools ./my_tools tool_my_notes_save_note file_name=notes.txt text=Hello`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("lcp new takes one library name, e.g. lcp new my_notes")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ctx, o.name = cmd.Context(), args[0]
			if runF != nil {
				return runF(o)
			}
			return runNew(o)
		},
	}
	cmd.Flags().StringVar(&o.dir, "dir", ".", "the tools `folder` to create the library in")
	registerCompletions(cmd, nil)
	return cmd
}

func runNew(o *NewOptions) error {
	env, name := o.env, o.name
	if err := scaffold.CheckName(name); err != nil {
		return &usageError{err}
	}
	file, err := scaffold.Library(o.dir, name)
	if err != nil {
		return &exitError{code: ExitFailure, msg: err.Error()}
	}
	dir := shellQuote(o.dir)
	tool := scaffold.ToolName(name)
	fmt.Fprintf(env.Stdout, "Created %s with one tool, %s.\n\nTry it:\n", file, tool)
	fmt.Fprintf(env.Stdout, "  lcp check --tools %s\n", dir)
	fmt.Fprintf(env.Stdout, "  lcp call --tools %s %s file_name=notes.txt text=%s\n", dir, tool, shellQuote("Hello from "+name))
	fmt.Fprintf(env.Stdout, "  lcp mcp --tools %s --watch\n", dir)
	return nil
}

var shellSafe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9_./@%+=:,-]+$`)
})

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if shellSafe().MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
