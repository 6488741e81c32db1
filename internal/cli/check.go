package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/lcptools/lcp/internal/buildinfo"
	"github.com/lcptools/lcp/lint"
	"github.com/spf13/cobra"
)

// CheckOptions are the options of lcp check.
type CheckOptions struct {
	env *Env
	ctx context.Context

	inv    inventoryFlags
	json   bool
	format string
	failOn string
	// formatSet records that --format was given, to refuse --json with
	// another format.
	formatSet bool
}

// NewCmdCheck returns lcp check; runF runs it (nil: runCheck).
func NewCmdCheck(env *Env, runF func(*CheckOptions) error) *cobra.Command {
	o := &CheckOptions{env: env}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Report problems in tool files",
		Long: `Report problems in tool files: the tool author's pre-flight checklist as
static analysis of the parsed source (secrets reaching the model or a log,
parameter paths used without a workspace check, results not in the
{"success", "output"/"error"} shape, numeric parameters used without
coercion, question answers used without a None check, sensitive steps taken
before asking the operator, descriptions too short to tell the model when to
use a tool), and syntax errors, duplicate tools, nested tools, undocumented
parameters, prompt functions without their tool, missing paths and
unreadable files. No Python runs. docs/check.md lists every rule.

Output: compiler-style lines (file:line:col: severity: message [rule-id]),
--format json, or --format sarif (SARIF 2.1.0 for code-scanning services,
paths relative to the checked folder). Exits with status 1 when a finding
is at least as serious as --fail-on (default: error).`,
		Example: `  $ lcp check --tools ./my_tools

  # fail a CI job on warnings too, with SARIF for code scanning
  $ lcp check --tools ./my_tools --fail-on warning --format sarif > lcp.sarif

  # one file, as JSON
  $ lcp check --file ./my_tools/notes.py --format json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ctx = cmd.Context()
			o.formatSet = cmd.Flags().Changed("format")
			if runF != nil {
				return runF(o)
			}
			return runCheck(o)
		},
	}
	o.inv.register(cmd.Flags(), readsTools)
	o.inv.status = env.Stderr
	cmd.Flags().BoolVar(&o.json, "json", false, "print the findings as a JSON array (same as --format json)")
	cmd.Flags().StringVar(&o.format, "format", "text", "output `format`: text, json or sarif")
	cmd.Flags().StringVar(&o.failOn, "fail-on", "error", "exit with status 1 when a finding is at least this `severe`: error, warning, info or none")
	registerCompletions(cmd, &o.inv)
	completeWith(cmd, "format", fixedValues("text", "json", "sarif"))
	return cmd
}

func runCheck(o *CheckOptions) error {
	ctx, env := o.ctx, o.env
	defer oneShotGC(env.Getenv)()
	format := o.format
	if o.json {
		if o.formatSet && format != "json" {
			return usagef("--json and --format %s disagree", format)
		}
		format = "json"
	}
	switch format {
	case "text", "json", "sarif":
	default:
		return usagef("--format %q: want text, json or sarif", format)
	}
	var threshold lint.Severity
	if !strings.EqualFold(strings.TrimSpace(o.failOn), "none") {
		sev, err := lint.ParseSeverity(o.failOn)
		if err != nil {
			return usagef("--fail-on: %v (or none)", err)
		}
		threshold = sev
	}
	o.inv.pathsAsFindings = true // each one a finding, beside the rest
	eng, err := o.inv.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer eng.Close()
	infos, err := eng.Tools(ctx)
	if err != nil {
		return err
	}
	findings := lint.Run(eng.Files(), eng.Diagnostics(ctx))
	cwd, _ := os.Getwd()
	switch format {
	case "json":
		err = lint.WriteJSON(env.Stdout, findings, cwd)
	case "sarif":
		root := cwd
		if len(o.inv.tools) == 1 && len(o.inv.files) == 0 {
			root = o.inv.tools[0]
		}
		err = lint.WriteSARIF(env.Stdout, findings, lint.SARIFOptions{Root: root, ToolVersion: buildinfo.Version()})
	default:
		if err = lint.WriteText(env.Stdout, findings, cwd); err == nil {
			_, err = fmt.Fprintf(env.Stdout, "%d tool(s), %s\n", len(infos), lint.Summary(findings))
		}
	}
	if err != nil {
		return err
	}
	n := 0
	for _, f := range findings {
		if threshold != "" && f.Severity.AtLeast(threshold) {
			n++
		}
	}
	if n > 0 {
		return &exitError{code: ExitFailure, msg: fmt.Sprintf("%d finding(s) at or above %s", n, threshold)}
	}
	return nil
}
