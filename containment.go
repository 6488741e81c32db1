package lcp

import (
	"strings"

	"github.com/lcptools/lcp/autonomy"
	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/sandbox"
)

// Containment says whether what a library runs is in lcp's kernel
// sandbox, for lcp doctor and lcp list --libraries.
type Containment struct {
	// Boxed is true when the library's processes run in a box.
	Boxed bool `json:"boxed"`
	// InProcess is true for a library that starts no process (Go code of
	// lcp or of the host).
	InProcess bool `json:"in_process,omitempty"`
	// Remote is true for an MCP server lcp reaches over HTTP: no process
	// of lcp's.
	Remote bool `json:"remote,omitempty"`
	// How says it in one line: where it runs and why.
	How string `json:"how"`
}

// containment tells how the library l of the inventory runs.
func (e *Engine) containment(l *LibraryInfo) Containment {
	switch l.Kind {
	case KindMCP:
		for i := range e.cfg.MCPServers {
			if sc := &e.cfg.MCPServers[i]; sc.Alias == l.ID {
				return ServerContainment(sc)
			}
		}
		return Containment{How: "an MCP server of the host's"}
	case KindBuiltin:
		return e.builtinContainment(l.ID)
	case KindPython, KindDynamic:
		set, mode, boxed, err := e.sandboxMode(l.ID)
		switch {
		case err != nil:
			return Containment{How: "does not start: " + err.Error()}
		case !boxed:
			return Containment{How: `outside a box: Python tool libraries are trusted code and run as you (host_tool_configs["` + l.ID + `"]["sandbox"] or --sandbox box them)`}
		case !sandbox.Supported():
			return Containment{How: "does not start: it is configured for a box and this machine has none (see lcp doctor)"}
		}
		return Containment{Boxed: true, How: "in a box (workspace " + mode.String() + ", " + networkText(set) + ")"}
	}
	return Containment{InProcess: true, How: "in lcp's own process (the host's code)"}
}

func (e *Engine) builtinContainment(id string) Containment {
	if id == builtin.WorkspaceTools {
		return Containment{InProcess: true, How: "in lcp's own process, every path confined to the workspace"}
	}
	cfg := e.cfg.HostToolConfigs[id]
	set, err := sandbox.ReadSettings(cfg)
	switch {
	case err != nil:
		return Containment{How: "runs nothing: " + err.Error()}
	case autonomy.FromConfig(cfg) == autonomy.FullAccess:
		return Containment{How: "outside a box: full_access runs commands on the host"}
	case set.Setting == sandbox.SettingOff:
		return Containment{How: `outside a box: its "sandbox" is "off" (safe mode asks before anything not proven read-only)`}
	case !sandbox.Supported():
		return Containment{How: "outside a box: this machine has no sandbox (safe mode asks before anything not proven read-only)"}
	}
	return Containment{Boxed: true, How: "each run in a box (" + networkText(set) + ")"}
}

func networkText(set sandbox.Settings) string {
	switch {
	case set.Network:
		return "the host's network"
	case len(set.Allow) > 0:
		return "network to " + strings.Join(set.Allow.Strings(), ", ") + ", other hosts asked for"
	}
	return "no network unless asked for"
}

// ServerContainment tells how an MCP server of the configuration runs.
func ServerContainment(sc *mcp.ServerConfig) Containment {
	return Containment{Boxed: sc.Boxed(), Remote: sc.Type != mcp.TypeStdio, How: sc.Containment()}
}
