package cli

import (
	"github.com/lcptools/lcp/internal/buildinfo"
	"github.com/spf13/cobra"
)

// VersionOptions are the options of lcp version.
type VersionOptions struct {
	env  *Env
	json bool
	// info is the build information to print (buildinfo.Read; tests
	// replace it).
	info func() buildinfo.Info
}

// NewCmdVersion returns lcp version; runF runs it (nil: runVersion).
func NewCmdVersion(env *Env, runF func(*VersionOptions) error) *cobra.Command {
	o := &VersionOptions{env: env, info: buildinfo.Read}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print lcp's version, commit and Go version",
		Long: `Print the version of this lcp, the commit it was built from (when it was
built in a git clone, with "modified" when the clone had changes), and the
Go toolchain and platform that built it. MCP clients see the same version
in the server's serverInfo. lcp --version prints the same.`,
		Example: `  $ lcp version
  lcp version v0.0.0-20261201171404-bcdfa0c37d93
  commit bcdfa0c37d93cdfd250212c8d3138a03572bb90b (2026-12-01T17:14:04Z)
  go1.26.0 linux/amd64

  # for scripts and bug reports
  $ lcp version --json`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(o)
			}
			return runVersion(o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON object: version, commit, commit_time, modified, go, platform")
	return cmd
}

func runVersion(o *VersionOptions) error {
	in := o.info()
	if o.json {
		return writeJSON(o.env.Stdout, in)
	}
	_, err := o.env.Stdout.Write([]byte(in.String()))
	return err
}
