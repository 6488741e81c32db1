package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lcptools/lcp/internal/mcpinstall"
)

// MCPInstallOptions are the options of lcp mcp install.
type MCPInstallOptions struct {
	env *Env

	client   string
	name     string
	print    bool
	scope    string
	config   string
	http     string
	token    string
	noToken  bool
	inv      inventoryFlags
	watch    watchFlags
	approval approvalFlags
	// flags are the command's flags: the inventory flags given are
	// passed on to the client's lcp mcp.
	flags *pflag.FlagSet

	// now is time.Now (tests replace it).
	now func() time.Time
}

// NewCmdMCPInstall returns lcp mcp install; runF runs it (nil:
// runMCPInstall).
func NewCmdMCPInstall(env *Env, runF func(*MCPInstallOptions) error) *cobra.Command {
	o := &MCPInstallOptions{env: env, now: time.Now}
	cmd := &cobra.Command{
		Use:   "install CLIENT [--tools DIR]... [--print]",
		Short: "Add lcp to an MCP client's configuration (Claude Desktop, Claude Code, Cursor, VS Code...)",
		Long: `Add lcp mcp to the configuration file of an MCP client, so that the client
starts it: the absolute path of this lcp binary, and the inventory flags
given here (--tools and --file as absolute paths, --host-config,
--mcp-config, --autonomy, --mount, --watch...) as its arguments.

Clients: ` + strings.Join(mcpinstall.Names(), ", ") + `.

The file keeps everything else it holds: the other servers, the client's
settings, their order and the file's formatting; only the entry named by
--name (default "lcp") is added or replaced. The previous file is copied
beside it first (FILE.YYYYMMDD-HHMMSS.bak), and the new one replaces it in
one step. A file that is not plain JSON (comments, trailing commas) is
refused, and nothing changes. --print prints the entry instead.

--scope project writes the configuration of the current folder (for
Claude Code .mcp.json, Cursor .cursor/mcp.json, VS Code .vscode/mcp.json,
Gemini CLI .gemini/settings.json) instead of the user's. Claude Desktop and
Windsurf start servers outside any project: without --workspace, the
entry names the current folder as the workspace.

--http URL adds a running lcp mcp --http server instead (not for Claude
Desktop, whose file starts local servers only), with its bearer token
from --token or $LCP_MCP_TOKEN (--no-token for a server run with
--no-token). The token is written into the file: keep it private. API
keys (--llm's $LCP_API_KEY) are never written: set them in the client's
environment.`,
		Example: `  # the built-in tools, in Claude Desktop
  $ lcp mcp install claude-desktop

  # a tools folder, reloaded when it changes, in Claude Code for every project
  $ lcp mcp install claude-code --tools ./my_tools --watch

  # shell and Python tools that never ask, for this project in VS Code
  $ lcp mcp install vscode --scope project --autonomy full_access

  # see the entry without writing anything
  $ lcp mcp install cursor --tools ./my_tools --print

  # a shared server over HTTP
  $ LCP_MCP_TOKEN=... lcp mcp install gemini --http http://10.0.0.5:8765/mcp --name team-tools`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("lcp mcp install takes one client: %s", strings.Join(mcpinstall.Names(), ", "))
			}
			return nil
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return mcpinstall.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.client, o.flags = args[0], cmd.Flags()
			if runF != nil {
				return runF(o)
			}
			return runMCPInstall(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "lcp", "the server's `name` in the client's configuration")
	f.BoolVar(&o.print, "print", false, "print the entry instead of writing the configuration")
	f.StringVar(&o.scope, "scope", "", "which configuration: user (the default) or project (the current folder's)")
	f.StringVar(&o.config, "config", "", "the configuration `file` to write (default: the client's, for --scope)")
	f.StringVar(&o.http, "http", "", "add the lcp mcp --http server at this `URL` instead of a server the client starts")
	f.StringVar(&o.token, "token", "", "the HTTP server's bearer `token` (default: $LCP_MCP_TOKEN)")
	f.BoolVar(&o.noToken, "no-token", false, "the HTTP server takes no token (lcp mcp --http --no-token)")
	o.inv.register(f, runsTools)
	o.watch.register(f)
	o.approval.register(f, true, "the client's user")
	registerCompletions(cmd, &o.inv)
	return cmd
}

// passedFlags are the flags of lcp mcp install that the installed
// lcp mcp gets, in the order it gets them; pathFlags name files.
var (
	passedFlags = []string{"tools", "file", "mount", "builtins", "mcp-config", "mcp-server", "host-config", "autonomy", "precise",
		"workspace", "python", "sandbox", "timeout", "no-coerce", "validate-args", "llm", "watch", "yes", "approve"}
	pathFlags = map[string]bool{"tools": true, "file": true, "mcp-config": true, "host-config": true, "workspace": true}
)

func runMCPInstall(o *MCPInstallOptions) error {
	env := o.env
	client, ok := mcpinstall.Lookup(o.client)
	if !ok {
		return usagef("unknown client %q.%s The clients: %s.", o.client, didYouMean(suggest(o.client, mcpinstall.Names())), strings.Join(mcpinstall.Names(), ", "))
	}
	if o.name == "" {
		return usagef("--name must not be empty")
	}
	scope := client.Scopes[0]
	if o.scope != "" {
		scope = mcpinstall.Scope(o.scope)
		if scope != mcpinstall.User && scope != mcpinstall.Project {
			return usagef("--scope %q: want user or project", o.scope)
		}
	}
	cwd, err := env.getwd()
	if err != nil {
		return err
	}
	path := o.config
	if path == "" {
		if path, err = client.Path(scope, mcpinstall.PathsFromEnv(env.Getenv, cwd)); err != nil {
			return &usageError{err}
		}
	} else if path, err = filepath.Abs(path); err != nil {
		return err
	}

	var entry json.RawMessage
	var notes []string
	if o.http != "" {
		if entry, err = o.httpEntry(client); err != nil {
			return err
		}
	} else {
		if o.token != "" || o.noToken {
			return usagef("--token and --no-token go with --http")
		}
		args, note, err := o.serverArgs(client, cwd)
		if err != nil {
			return err
		}
		if note != "" {
			notes = append(notes, note)
		}
		exe, err := o.lcpPath()
		if err != nil {
			return err
		}
		entry = client.Stdio(exe, args)
	}

	if o.print {
		snippet := map[string]map[string]json.RawMessage{client.Key: {o.name: entry}}
		fmt.Fprintf(env.Stderr, "lcp: the entry for %s (%s):\n", client.Title, path)
		return writeJSON(env.Stdout, snippet)
	}
	res, err := mcpinstall.Install(path, client.Key, o.name, entry, o.now())
	if err != nil {
		return &exitError{code: ExitFailure, msg: err.Error()}
	}
	switch {
	case res.Unchanged:
		fmt.Fprintf(env.Stdout, "%s's configuration %s already has this %q entry; nothing changed.\n", client.Title, res.Path, o.name)
		return nil
	case res.Replaced:
		fmt.Fprintf(env.Stdout, "Replaced the MCP server %q in %s's configuration: %s\n", o.name, client.Title, res.Path)
	case res.Created:
		fmt.Fprintf(env.Stdout, "Created %s's configuration with the MCP server %q: %s\n", client.Title, o.name, res.Path)
	default:
		fmt.Fprintf(env.Stdout, "Added the MCP server %q to %s's configuration: %s\n", o.name, client.Title, res.Path)
	}
	if res.Backup != "" {
		fmt.Fprintf(env.Stdout, "The previous file is kept as %s\n", res.Backup)
	}
	for _, n := range notes {
		fmt.Fprintln(env.Stdout, n)
	}
	fmt.Fprintln(env.Stdout, client.Restart)
	return nil
}

// absAll maps abs over paths into a new slice.
func absAll(abs func(string) string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = abs(p)
	}
	return out
}

// serverArgs are the arguments of the lcp mcp the client starts: the
// inventory flags given, with absolute paths. A client that starts servers
// outside any project gets the current folder as the workspace.
func (o *MCPInstallOptions) serverArgs(client *mcpinstall.Client, cwd string) (args []string, note string, err error) {
	abs := func(p string) string {
		switch {
		case p == "":
			return ""
		case filepath.IsAbs(p):
			return filepath.Clean(p)
		}
		return filepath.Join(cwd, p)
	}
	// The same checks lcp mcp makes when it starts, now rather than in
	// the client's log.
	inv := o.inv
	inv.hostConfig, inv.mcpConfig, inv.workspace = abs(inv.hostConfig), abs(inv.mcpConfig), abs(inv.workspace)
	inv.tools, inv.files = absAll(abs, inv.tools), absAll(abs, inv.files)
	if _, err := inv.config(); err != nil {
		return nil, "", err
	}
	if _, err := o.approval.policy(); err != nil {
		return nil, "", err
	}
	args = []string{"mcp"}
	for _, name := range passedFlags {
		fl := o.flags.Lookup(name)
		if fl == nil || !fl.Changed {
			continue
		}
		var values []string
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		} else {
			values = []string{fl.Value.String()}
		}
		for _, v := range values {
			switch {
			case fl.Value.Type() == "bool":
				if v == "true" {
					args = append(args, "--"+name)
				}
				continue
			case pathFlags[name] || (name == "python" && strings.ContainsRune(v, filepath.Separator)):
				v = abs(v)
			}
			args = append(args, "--"+name+"="+v)
		}
		if name == "tools" {
			for _, v := range values {
				if st, err := os.Stat(abs(v)); err != nil || !st.IsDir() {
					fmt.Fprintf(o.env.Stderr, "lcp: warning: --tools %s is not a folder here\n", abs(v))
				}
			}
		}
	}
	if client.Projectless && !o.flags.Changed("workspace") {
		args = append(args, "--workspace="+cwd)
		note = fmt.Sprintf("%s starts servers outside any project: its tools work in %s (--workspace to choose another folder).", client.Title, cwd)
	}
	return args, note, nil
}

// httpEntry is the client's entry for an lcp mcp --http server.
func (o *MCPInstallOptions) httpEntry(client *mcpinstall.Client) (json.RawMessage, error) {
	if !client.Remote {
		return nil, usagef("%s", client.RemoteHint)
	}
	for _, name := range passedFlags {
		if o.flags.Changed(name) {
			return nil, usagef("--%s describes a server the client starts; with --http the server runs elsewhere, with its own flags", name)
		}
	}
	u, err := url.Parse(o.http)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("--http %q: want the server's URL, e.g. http://127.0.0.1:8765/mcp", o.http)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/mcp" // where lcp mcp --http serves
	}
	token := o.token
	if token == "" && o.env.Getenv != nil {
		token = o.env.Getenv("LCP_MCP_TOKEN")
	}
	var headers map[string]string
	switch {
	case o.noToken && o.token != "":
		return nil, usagef("--no-token contradicts --token")
	case o.noToken:
	case token == "":
		return nil, usagef("lcp mcp --http requires a bearer token: give the server's with --token or $LCP_MCP_TOKEN (or --no-token for a server run with --no-token)")
	default:
		headers = map[string]string{"Authorization": "Bearer " + token}
	}
	return client.HTTP(u.String(), headers), nil
}

// lcpPath is the absolute path of this lcp binary, refused when it is a
// temporary build (go run) that will be gone when the client starts it.
func (o *MCPInstallOptions) lcpPath() (string, error) {
	exe, err := o.env.executable()
	if err != nil {
		return "", fmt.Errorf("finding the lcp binary: %w", err)
	}
	exe, err = filepath.Abs(exe)
	if err != nil {
		return "", err
	}
	if strings.Contains(filepath.ToSlash(exe), "/go-build") || strings.HasPrefix(exe, filepath.Clean(os.TempDir())+string(filepath.Separator)) {
		return "", usagef("this lcp is a temporary build (%s), gone when the client starts it: install lcp first (go install ./cmd/lcp), then run lcp mcp install", exe)
	}
	return exe, nil
}
