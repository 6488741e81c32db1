package cli

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/lcptools/lcp/builtin/pyrisk"
	"github.com/lcptools/lcp/discover"

	"github.com/lcptools/lcp/tool"
	"github.com/spf13/cobra"
)

// CheckOptions are the options of lcp check.
type CheckOptions struct {
	env *Env
	ctx context.Context

	inv  inventoryFlags
	json bool
}

// NewCmdCheck returns lcp check; runF runs it (nil: runCheck).
func NewCmdCheck(env *Env, runF func(*CheckOptions) error) *cobra.Command {
	o := &CheckOptions{env: env}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Report problems in tool files",
		Long: `Report syntax errors (with line and column), duplicate tool names, tools
nested in functions or classes that cannot be called, parameters without a
docstring line, prompt functions without their tool, missing paths and
unreadable files. Exits with status 1 when an error is found.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ctx = cmd.Context()
			if runF != nil {
				return runF(o)
			}
			return runCheck(o)
		},
	}
	o.inv.register(cmd.Flags())
	cmd.Flags().BoolVar(&o.json, "json", false, "print the diagnostics as a JSON array")
	return cmd
}

func runCheck(o *CheckOptions) error {
	ctx, env := o.ctx, o.env
	eng, err := o.inv.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer eng.Close()
	infos, err := eng.Tools(ctx)
	if err != nil {
		return err
	}
	diags := append(eng.Diagnostics(ctx), riskyPatterns(eng.Files())...)
	errorsFound := 0
	for _, d := range diags {
		if d.Severity == "error" {
			errorsFound++
		}
	}
	if o.json {
		if diags == nil {
			diags = []tool.Diagnostic{}
		}
		if err := writeJSON(env.Stdout, diags); err != nil {
			return err
		}
	} else {
		for _, d := range diags {
			fmt.Fprintln(env.Stdout, d)
		}
		fmt.Fprintf(env.Stdout, "%d tool(s), %d error(s), %d diagnostic(s)\n", len(infos), errorsFound, len(diags))
	}
	if errorsFound > 0 {
		return &exitError{code: ExitFailure, msg: fmt.Sprintf("%d error(s) found", errorsFound)}
	}
	return nil
}

// asksForConfirmation finds the names through which an LCP library gets
// and uses the host's confirmation handler.
var asksForConfirmation = regexp.MustCompile(`\b(confirm_handler|set_confirm_handler|_CONFIRM_HANDLER)\b`)

// riskyPatterns reports tool files that spawn processes or escape to the
// shell (judged from the parsed code, as execute_python's safe mode does)
// without ever using the host's confirmation handler.
func riskyPatterns(files []*discover.File) []tool.Diagnostic {
	var out []tool.Diagnostic
	for _, f := range files {
		if f.Source == nil || f.Source.SyntaxErrors != nil {
			continue
		}
		src, err := os.ReadFile(f.Path)
		if err != nil {
			continue
		}
		v := pyrisk.Classify(string(src), nil)
		if !v.Risky || asksForConfirmation.Match(src) {
			continue
		}
		out = append(out, tool.Diagnostic{
			Severity: "warning", Code: "risky-pattern", File: f.Path,
			Message: fmt.Sprintf("%s; the library never asks the operator (use the confirm handler from set_confirm_handler or init_tools_library's config)",
				strings.Join(v.Reasons, "; ")),
		})
	}
	return out
}
