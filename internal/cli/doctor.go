package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/sandbox"
	"github.com/spf13/cobra"
)

// DoctorOptions are the options of lcp doctor.
type DoctorOptions struct {
	env   *Env
	json  bool
	flags inventoryFlags
	// probe reports what the machine allows (sandbox.Probe; tests
	// replace it).
	probe func() sandbox.Status
	// recovery is what the engine's start recovered in the workspace.
	recovery *sandbox.Recovery
}

// NewCmdDoctor returns lcp doctor; runF runs it (nil: runDoctor), so that
// its flags are tested without probing the machine.
func NewCmdDoctor(env *Env, runF func(*DoctorOptions) error) *cobra.Command {
	if runF == nil {
		runF = runDoctor
	}
	o := &DoctorOptions{env: env, probe: sandbox.Probe}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Tell what this machine allows lcp's sandbox, and what lcp will do",
		Long: `Report what the kernel allows the sandbox that contains shell commands and
Python runs (user, mount, PID, network and IPC namespaces, overlayfs in a user
namespace, Landlock, cgroups, resource limits), whether sandboxed runs work
here, and how each autonomy level behaves as a result; then, for the inventory
the flags describe (the built-in library by default), which libraries and MCP
servers run in a box and which run outside one. No server is started.`,
		Example: `  $ lcp doctor

  # which of my libraries and servers run outside a box
  $ lcp doctor --tools ./my_tools --mcp-config mcp.json

  # for a bug report
  $ lcp doctor --json`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return runF(o) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the findings as a JSON object")
	o.flags.register(cmd.Flags(), loadsTools)
	return cmd
}

// containedRow is one library or server and how it runs.
type containedRow struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	lcp.Containment
}

func runDoctor(o *DoctorOptions) error {
	st := o.probe()
	rows, err := o.containment()
	if err != nil {
		return err
	}
	rec := recoveryLines(o.recovery)
	if o.json {
		return writeJSON(o.env.Stdout, struct {
			sandbox.Status
			Containment []containedRow `json:"containment"`
			Recovery    []string       `json:"recovery,omitempty"`
		}{st, rows, rec})
	}
	writeDoctor(o.env.Stdout, st)
	if len(rec) > 0 {
		fmt.Fprintln(o.env.Stdout, "\nRecovery of the workspace (what dead lcp processes left)")
		for _, l := range rec {
			fmt.Fprintln(o.env.Stdout, "  "+l)
		}
	}
	fmt.Fprintln(o.env.Stdout, "\nWhat runs where")
	for _, r := range rows {
		mark := "box    "
		switch {
		case r.InProcess:
			mark = "in-proc"
		case r.Remote:
			mark = "remote "
		case !r.Boxed:
			mark = "OUTSIDE"
		}
		fmt.Fprintf(o.env.Stdout, "%s %-24s %-8s %s\n", mark, r.ID, r.Kind, r.How)
	}
	return nil
}

// containment lists the libraries of the inventory and the configured MCP
// servers, without starting any server.
func (o *DoctorOptions) containment() ([]containedRow, error) {
	var servers []mcp.ServerConfig
	eng, err := o.flags.engine(context.Background(), func(c *lcp.Config) {
		servers, c.MCPServers = c.MCPServers, nil
	})
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	o.recovery = eng.Recovery()
	libs, err := eng.Libraries(context.Background())
	if err != nil {
		return nil, err
	}
	var rows []containedRow
	for _, l := range libs {
		if l.Sandbox != nil {
			rows = append(rows, containedRow{ID: l.ID, Kind: l.Kind, Containment: *l.Sandbox})
		}
	}
	for i := range servers {
		rows = append(rows, containedRow{ID: servers[i].Alias, Kind: lcp.KindMCP, Containment: lcp.ServerContainment(&servers[i])})
	}
	return rows, nil
}

func writeDoctor(w io.Writer, st sandbox.Status) {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	row := func(k, v string) { fmt.Fprintf(w, "%-26s %s\n", k, v) }
	fmt.Fprintln(w, "What this machine allows lcp's sandbox")
	row("system", runtime.GOOS+"/"+runtime.GOARCH+" "+st.Kernel)
	if st.Root {
		row("lcp runs as", "root (the sandbox runs as the workspace's owner, or as nobody for a root-owned workspace shown through an idmapped mount)")
	} else {
		row("lcp runs as", "a normal user (the sandbox runs as that user)")
	}
	ns := yes(st.UserNamespaces)
	if !st.UserNamespaces && st.UserNamespacesWhy != "" {
		ns += " (" + st.UserNamespacesWhy + ")"
	}
	row("user namespaces", ns)
	row("mount, PID, network, IPC", yes(st.UserNamespaces)+" (created with the user namespace)")
	row("overlayfs (copy-on-write)", yes(st.Overlay))
	if st.Seccomp != "" {
		row("seccomp", st.Seccomp)
	}
	if st.LandlockABI > 0 {
		row("Landlock", fmt.Sprintf("ABI %d (a second layer: writes, signals, abstract sockets)", st.LandlockABI))
	} else {
		row("Landlock", "no (the namespaces remain the boundary)")
	}
	cg := st.Cgroups
	if st.PidsController != "" {
		cg += "; pids controller " + st.PidsController
	}
	row("cgroups", cg)
	row("cgroup v2 leaf group", leafGroupRow(sandbox.LeafGroupStatus()))
	l := sandbox.Limits{}.WithDefaults()
	acc := sandbox.Accounting()
	if strings.HasPrefix(acc, "cgroup") {
		row("budget per run", fmt.Sprintf("memory %s for the whole run, disk %s of copy-on-write changes, %d processes and threads (%s, a control group per run)",
			gib(l.TotalMemory), gib(l.Disk), l.Processes, acc))
	} else {
		row("budget per run", fmt.Sprintf("no control group lcp can use: per process limits and tmpfs sizes bound a run (%d processes and threads)", l.Processes))
	}
	row("disk total", diskTotalText(st, l))
	row("limits per process", fmt.Sprintf("memory %s (RLIMIT_DATA), files up to %s, CPU %s, /tmp %s",
		gib(l.Memory), gib(l.FileSize), l.CPUTime.Round(time.Second), gib(l.TmpSize)))
	fmt.Fprintln(w)
	if st.Available {
		row("sandbox", "available")
		fmt.Fprintln(w, `
What lcp does here:
- safe (the default): shell commands and Python code run in the sandbox with no
  question unless they need more (the network, writes outside the workspace,
  running unsandboxed). The workspace is copy-on-write: new files are kept at
  once; changes to existing files wait for one confirmation after the run.
- strict: every run is approved first, then runs in the sandbox, writing the
  workspace directly (.git read-only unless granted).
- full_access: runs on the host, unsandboxed.
- Python tool libraries run unsandboxed unless host_tool_configs[lib]["sandbox"]
  is "workspace-write" or "read-only", or lcp runs with --sandbox.
- stdio MCP servers run in a box unless their entry says "sandbox": false.`)
		return
	}
	why := st.Reason
	if st.Forced {
		why += " (switched off on purpose)"
	}
	row("sandbox", "unavailable: "+why)
	fmt.Fprintln(w, `
What lcp does here:
- safe: asks before any command or code that is not proven read-only (the
  classifiers' judgement; no kernel boundary).
- strict: asks before every run. full_access: runs without asking.
- --sandbox and host_tool_configs[lib]["sandbox"] make Python tool libraries
  fail to start rather than run unsandboxed.
- stdio MCP servers do not start unless their entry says "sandbox": false.`)
}

func gib(n int64) string {
	if n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// toolCommands are the commands that run tools: they warn at start when
// the sandbox is unavailable.
var toolCommands = []string{"call", "chat", "mcp", "serve"}

// warnNoSandbox prints one warning line when a command that runs tools
// starts on a machine without the sandbox.
func warnNoSandbox(env *Env, probe func() sandbox.Status) {
	if len(env.Args) == 0 || !slices.Contains(toolCommands, env.Args[0]) {
		return
	}
	if env.Args[0] == "mcp" && len(env.Args) > 1 && slices.Contains([]string{"install", "login", "logout"}, env.Args[1]) {
		return // they run no tools
	}
	for _, a := range env.Args[1:] {
		if a == "-h" || a == "--help" {
			return
		}
	}
	st := probe()
	if st.Available {
		return
	}
	fmt.Fprintf(env.Stderr, "lcp: warning: no kernel sandbox here (%s); safe mode asks before anything not proven read-only (see lcp doctor)\n",
		strings.TrimSuffix(st.Reason, "."))
}

// recoveryLines says what the engine's start recovered in the workspace.
func recoveryLines(r *sandbox.Recovery) []string {
	if r.Empty() {
		return nil
	}
	lines := append([]string(nil), r.Completed...)
	for _, p := range r.Removed {
		lines = append(lines, "removed "+p)
	}
	for _, err := range r.Errors {
		lines = append(lines, "could not recover: "+err.Error())
	}
	return lines
}

// diskTotalText says whether the disk budget bounds a copy-on-write
// run's changes together, for lcp doctor.
func diskTotalText(st sandbox.Status, l sandbox.Limits) string {
	switch {
	case !st.Available:
		return "no sandbox"
	case st.DiskTotal:
		return fmt.Sprintf("%s of copy-on-write changes (the layer is a tmpfs of that size, in memory)", gib(l.Disk))
	}
	return fmt.Sprintf("%s: the copy-on-write layer stays in the temporary folder, each file capped at %s (the kernel refused a tmpfs layer)",
		sandbox.NoDiskTotal, gib(l.FileSize))
}
