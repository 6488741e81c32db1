package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/tool"
	"github.com/spf13/cobra"
)

// ListOptions are the options of lcp list.
type ListOptions struct {
	env *Env
	ctx context.Context

	inv       inventoryFlags
	format    string
	json      bool
	prompts   bool
	dynamic   bool
	libraries bool
	// formatSet: --format was given, which asks for JSON in that format.
	formatSet bool
}

// NewCmdList returns lcp list; runF runs it (nil: runList).
func NewCmdList(env *Env, runF func(*ListOptions) error) *cobra.Command {
	o := &ListOptions{env: env}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Discover tools and print their specs",
		Long: `Discover the tools and print their specs. No Python runs: schemas are read
from source. --dynamic applies tool_<name>_prompt functions (this loads the
libraries that have them); --prompts prints the libraries' system prompts.
--libraries lists the libraries instead of the tools: name, description, icon,
source files, tools and diagnostics (with --json, one object per library).
--precise reads annotations by their meaning (Literal -> enum, list[int] ->
array of integers, Optional -> not required) instead of the LCP rule.`,
		Example: `  # the built-in library's tools, as a table
  $ lcp list

  # a tools folder's specs for OpenAI's API
  $ lcp list --tools ./my_tools --format openai

  # the libraries, with their files and problems
  $ lcp list --tools ./my_tools --libraries

  # descriptions from tool_<name>_prompt functions, and the system prompts
  $ lcp list --tools ./my_tools --dynamic
  $ lcp list --tools ./my_tools --prompts`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ctx, o.formatSet = cmd.Context(), cmd.Flags().Changed("format")
			if runF != nil {
				return runF(o)
			}
			return runList(o)
		},
	}
	o.inv.register(cmd.Flags(), loadsTools)
	o.inv.status = env.Stderr
	cmd.Flags().StringVar(&o.format, "format", "lcp", "print a JSON array of specs in this `format`: lcp, openai, anthropic or mcp")
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON array of specs (in the lcp format unless --format says another)")
	cmd.Flags().BoolVar(&o.prompts, "prompts", false, "print the libraries' system prompts (tool_<stem>_prompt)")
	cmd.Flags().BoolVar(&o.dynamic, "dynamic", false, "apply dynamic descriptions (tool_<name>_prompt)")
	cmd.Flags().BoolVar(&o.libraries, "libraries", false, "list the libraries (metadata, files, tools, diagnostics) instead of the tools")
	registerCompletions(cmd, &o.inv)
	completeWith(cmd, "format", fixedValues("lcp", "openai", "anthropic", "mcp"))
	return cmd
}

func runList(o *ListOptions) error {
	ctx, env := o.ctx, o.env
	defer oneShotGC(env.Getenv)()
	format, err := tool.ParseFormat(o.format)
	if err != nil {
		return &usageError{err}
	}
	eng, err := o.inv.engine(ctx, func(c *lcp.Config) { c.DynamicPrompts = o.dynamic })
	if err != nil {
		return err
	}
	defer eng.Close()
	infos, err := eng.Tools(ctx)
	if err != nil {
		return err
	}
	if o.prompts {
		return printPrompts(ctx, env, eng, o.json)
	}
	if o.libraries {
		return printLibraries(ctx, env, eng, o.json)
	}
	if o.json || o.formatSet {
		return writeSpecs(env.Stdout, infos, format)
	}
	printToolTable(env.Stdout, infos, env.stdoutIsTerminal())
	if n := countProblems(eng.Diagnostics(ctx)); n > 0 {
		fmt.Fprintf(env.Stderr, "%d problem(s) found while reading the tools; run lcp check for details\n", n)
	}
	return nil
}

func countProblems(ds []tool.Diagnostic) int {
	n := 0
	for _, d := range ds {
		if d.Severity != "info" {
			n++
		}
	}
	return n
}

func printPrompts(ctx context.Context, env *Env, eng *lcp.Engine, asJSON bool) error {
	prompts := eng.SystemPrompts(ctx)
	if asJSON {
		if prompts == nil {
			return writeJSON(env.Stdout, []any{})
		}
		return writeJSON(env.Stdout, prompts)
	}
	if len(prompts) == 0 {
		fmt.Fprintln(env.Stdout, "No library contributes a system prompt.")
	}
	for _, p := range prompts {
		fmt.Fprintf(env.Stdout, "== %s (%s)\n%s\n\n", p.Library, p.File, strings.TrimRight(p.Text, "\n"))
	}
	for _, d := range eng.Diagnostics(ctx) {
		if d.Code == "prompt-failed" {
			fmt.Fprintln(env.Stderr, d)
		}
	}
	return nil
}

// printToolTable prints one line per tool for humans.
func printToolTable(w io.Writer, infos []tool.Info, colour bool) {
	if len(infos) == 0 {
		fmt.Fprintln(w, "No tools found.")
		return
	}
	tw := newColumns(w)
	bold, reset := "", ""
	if colour {
		bold, reset = "\x1b[1m", "\x1b[0m"
	}
	fmt.Fprintf(tw, "%sTOOL\tLIBRARY\tPARAMETERS\tDESCRIPTION%s\n", bold, reset)
	for _, in := range infos {
		lib := in.Library.ID
		if in.Library.Icon != "" {
			lib = in.Library.Icon + " " + lib
		}
		desc := firstLine(in.Description, 60)
		if in.ParsedViaRegexFallback {
			desc = "(fallback) " + desc
		}
		fmt.Fprintf(tw, "%s%s%s\t%s\t%s\t%s\n", bold, in.Name, reset, lib, paramSummary(in.InputSchema), desc)
	}
	tw.Flush()
}

// paramSummary lists the parameters of a schema: required ones plain,
// optional ones with a trailing "?".
func paramSummary(schema json.RawMessage) string {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return "-"
	}
	names, err := orderedKeys(s.Properties)
	if err != nil || len(names) == 0 {
		return "-"
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	for i, n := range names {
		if !req[n] {
			names[i] = n + "?"
		}
	}
	return strings.Join(names, ", ")
}

func firstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	r := []rune(s)
	if len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// printLibraries prints the inventory's libraries: a JSON array of
// lcp.LibraryInfo, or a table for humans.
func printLibraries(ctx context.Context, env *Env, eng *lcp.Engine, asJSON bool) error {
	libs, err := eng.Libraries(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if libs == nil {
			libs = []lcp.LibraryInfo{}
		}
		return writeJSON(env.Stdout, libs)
	}
	if len(libs) == 0 {
		fmt.Fprintln(env.Stdout, "No libraries found.")
		return nil
	}
	colour := env.stdoutIsTerminal()
	bold, reset := "", ""
	if colour {
		bold, reset = "\x1b[1m", "\x1b[0m"
	}
	tw := newColumns(env.Stdout)
	fmt.Fprintf(tw, "%sLIBRARY\tNAME\tKIND\tTOOLS\tPROBLEMS\tSANDBOX\tSOURCE%s\n", bold, reset)
	for _, l := range libs {
		id := l.ID
		if l.Icon != "" {
			id = l.Icon + " " + id
		}
		src := "-"
		switch len(l.Files) {
		case 0:
		case 1:
			src = l.Files[0]
		default:
			src = fmt.Sprintf("%s (+%d)", l.Files[0], len(l.Files)-1)
		}
		box := "-"
		if l.Sandbox != nil {
			switch {
			case l.Sandbox.Boxed:
				box = "box"
			case l.Sandbox.InProcess:
				box = "in-proc"
			case l.Sandbox.Remote:
				box = "remote"
			default:
				box = "OUTSIDE"
			}
		}
		fmt.Fprintf(tw, "%s%s%s\t%s\t%s\t%d\t%d\t%s\t%s\n", bold, id, reset, l.Name, l.Kind, len(l.Tools), countProblems(l.Diagnostics), box, src)
	}
	return tw.Flush()
}
