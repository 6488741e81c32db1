package lcp

import "github.com/lcptools/lcp/tool"

// defaultNative returns the built-in Go library (workspace_tools,
// system_shell, execute_python) for an engine with no tool folders.
func defaultNative(cfg *Config) (tool.Toolset, error) { return nil, nil }

// defaultPythonFolders returns the folders of the built-in Python default
// library (the seeds' example libraries), extracted on demand.
func defaultPythonFolders() ([]string, error) { return nil, nil }
