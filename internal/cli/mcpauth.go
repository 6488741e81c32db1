package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/mcp/oauth"
)

// mcpAuthOptions are the options of lcp mcp login and lcp mcp logout.
type mcpAuthOptions struct {
	config  string
	force   bool
	all     bool
	timeout time.Duration
	// store and openURL replace the token file and the browser (tests).
	store   oauth.Store
	openURL func(string) error
}

func (o *mcpAuthOptions) oauthStore() oauth.Store {
	if o.store != nil {
		return o.store
	}
	return &oauth.FileStore{}
}

func newMCPLoginCmd(env *Env) *cobra.Command {
	o := &mcpAuthOptions{}
	cmd := &cobra.Command{
		Use:   "login --mcp-config FILE [ALIAS...]",
		Short: "Sign in to the MCP servers of a configuration that ask for OAuth",
		Long: `Sign in to the streamable HTTP servers of an MCP configuration (all of them,
or those named) that are protected by OAuth, and keep the tokens for later
runs. Any command that uses the configuration signs in by itself when a
server asks; login does it ahead of time, and tells who is signed in where.

The sign-in page opens in the browser (the link is printed too); lcp waits
for it on a one-time listener on 127.0.0.1. Tokens are kept in
mcp-oauth.json in lcp's configuration directory (readable by you only),
never in the MCP configuration. --force signs in again from scratch.`,
		Example: `  # every server of the configuration that asks for OAuth
  $ lcp mcp login --mcp-config ./mcp.json

  # one of them, from scratch
  $ lcp mcp login --mcp-config ./mcp.json github --force`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCPLogin(cmd.Context(), env, o, args)
		},
	}
	cmd.Flags().StringVar(&o.config, "mcp-config", "", "JSON `file` of MCP servers (required)")
	cmd.Flags().BoolVar(&o.force, "force", false, "forget the stored tokens first and sign in again")
	cmd.Flags().DurationVar(&o.timeout, "timeout", oauth.DefaultSignInTimeout, "how long to wait for each sign-in in the browser")
	return cmd
}

func newMCPLogoutCmd(env *Env) *cobra.Command {
	o := &mcpAuthOptions{}
	cmd := &cobra.Command{
		Use:   "logout [--mcp-config FILE [ALIAS...] | --all]",
		Short: "Forget the OAuth tokens of MCP servers",
		Long: `Forget the tokens (and the client lcp registered) of the servers of an MCP
configuration, all of them or those named; with --all, of every server lcp
has signed in to. The servers' next use signs in again.`,
		Example: `  $ lcp mcp logout --mcp-config ./mcp.json github
  $ lcp mcp logout --all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCPLogout(env, o, args)
		},
	}
	cmd.Flags().StringVar(&o.config, "mcp-config", "", "JSON `file` of MCP servers")
	cmd.Flags().BoolVar(&o.all, "all", false, "forget the tokens of every server")
	return cmd
}

// httpServers returns the streamable HTTP servers of the configuration,
// those named or all of them.
func httpServers(path string, names []string) ([]mcp.ServerConfig, error) {
	if path == "" {
		return nil, usagef("--mcp-config is required")
	}
	all, err := mcp.LoadConfig(path)
	if err != nil {
		return nil, usagef("--mcp-config: %v", err)
	}
	var out []mcp.ServerConfig
	for _, sc := range all {
		if len(names) > 0 && !slices.Contains(names, sc.Alias) {
			continue
		}
		if sc.Type != mcp.TypeHTTP {
			if len(names) > 0 {
				return nil, usagef("server %q is not a streamable HTTP server: it has no OAuth sign-in", sc.Alias)
			}
			continue
		}
		out = append(out, sc)
	}
	for _, n := range names {
		if !slices.ContainsFunc(all, func(sc mcp.ServerConfig) bool { return sc.Alias == n }) {
			return nil, usagef("no server %q in %s", n, path)
		}
	}
	if len(out) == 0 {
		return nil, usagef("%s has no streamable HTTP server", path)
	}
	return out, nil
}

func runMCPLogin(ctx context.Context, env *Env, o *mcpAuthOptions, names []string) error {
	servers, err := httpServers(o.config, names)
	if err != nil {
		return err
	}
	store := o.oauthStore()
	if o.force {
		for _, sc := range servers {
			if err := store.Delete(sc.URL); err != nil {
				return err
			}
		}
	}
	remote, err := mcp.NewClientToolset(ctx, servers, &mcp.ClientOptions{
		OAuth:         &oauth.Options{Store: store, Out: env.Stderr, OpenURL: o.openURL, SignInTimeout: o.timeout},
		RetryInterval: time.Hour, // one attempt per server
	})
	if err != nil {
		return &usageError{err}
	}
	defer remote.Close()
	failed := map[string]string{}
	for _, d := range remote.Diagnostics() {
		for _, sc := range servers {
			if strings.Contains(d.Message, fmt.Sprintf("%q", sc.Alias)) {
				failed[sc.Alias] = d.Message
			}
		}
	}
	var errs []string
	for _, sc := range servers {
		h := remote.OAuth(sc.Alias)
		switch {
		case failed[sc.Alias] != "":
			errs = append(errs, failed[sc.Alias])
			fmt.Fprintf(env.Stdout, "%s: not signed in\n", sc.Alias)
		case h == nil:
			fmt.Fprintf(env.Stdout, "%s: uses the token of its configuration (no OAuth)\n", sc.Alias)
		case h.Credentials() == nil || h.Credentials().AccessToken == "":
			fmt.Fprintf(env.Stdout, "%s: connected; the server asks for no sign-in\n", sc.Alias)
		default:
			fmt.Fprintf(env.Stdout, "%s: signed in: %s\n", sc.Alias, h.Credentials())
		}
	}
	if len(errs) > 0 {
		return &exitError{code: ExitFailure, msg: strings.Join(errs, "; ")}
	}
	return nil
}

func runMCPLogout(env *Env, o *mcpAuthOptions, names []string) error {
	store := o.oauthStore()
	var urls []string
	switch {
	case o.all && (o.config != "" || len(names) > 0):
		return usagef("--all goes alone")
	case o.all:
		fs, ok := store.(*oauth.FileStore)
		if !ok {
			return errors.New("--all needs the token file")
		}
		list, err := fs.Servers()
		if err != nil {
			return err
		}
		urls = list
	default:
		servers, err := httpServers(o.config, names)
		if err != nil {
			return err
		}
		for _, sc := range servers {
			urls = append(urls, sc.URL)
		}
	}
	for _, u := range urls {
		c, err := store.Load(u)
		if err != nil {
			return err
		}
		if err := store.Delete(u); err != nil {
			return err
		}
		if c != nil {
			fmt.Fprintf(env.Stdout, "signed out of %s\n", u)
		} else {
			fmt.Fprintf(env.Stdout, "%s: not signed in\n", u)
		}
	}
	return nil
}
