package lcp

import (
	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/builtin/pylib"
	"github.com/lcptools/lcp/tool"
)

// defaultNative returns the built-in Go library (workspace_tools,
// system_shell, execute_python) for an engine with no tool folders.
func defaultNative(cfg *Config) (tool.Toolset, error) {
	return builtin.New(&builtin.Options{Workspace: cfg.Workspace, Configs: cfg.HostToolConfigs, Python: cfg.Python})
}

// defaultPythonFolders returns the folder of the built-in Python default
// library (the seeds' example libraries), extracted on demand.
func defaultPythonFolders() ([]string, error) {
	dir, err := pylib.Dir()
	if err != nil {
		return nil, err
	}
	return []string{dir}, nil
}
