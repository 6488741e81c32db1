package lcp

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/worker"
)

// workerEnv are the variables of a worker's own environment that reach
// it inside a sandbox, beside the sandbox's allow-list.
var workerEnv = []string{"MALLOC_ARENA_MAX", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING"}

// sandboxMode says whether the worker of the library stem runs in the
// kernel sandbox, and how: its host configuration's "sandbox" setting,
// else Config.Sandbox.
func (e *Engine) sandboxMode(stem string) (set sandbox.Settings, mode sandbox.Mode, boxed bool, err error) {
	set, err = sandbox.ReadSettings(e.cfg.HostToolConfigs[stem])
	if err != nil {
		return set, mode, false, fmt.Errorf("library %s: %w", stem, err)
	}
	switch set.Setting {
	case sandbox.SettingReadOnly:
		return set, sandbox.ReadOnly, true, nil
	case sandbox.SettingWorkspaceWrite, sandbox.SettingOn:
		return set, sandbox.Write, true, nil
	case sandbox.SettingOff:
		return set, mode, false, nil
	}
	return set, sandbox.Write, e.cfg.Sandbox, nil
}

// sandboxed reports whether the worker of the library stem runs in the
// kernel sandbox.
func (e *Engine) sandboxed(stem string) (bool, error) {
	_, _, boxed, err := e.sandboxMode(stem)
	return boxed, err
}

// wrapWorker runs the worker of a Python tool library inside the kernel
// sandbox when its host configuration asks for it (sandbox:
// "workspace-write" or "read-only") or Config.Sandbox does for all. Other
// libraries run as they are: they are the user's own, trusted code.
func (e *Engine) wrapWorker(cmd *exec.Cmd, lib worker.Library, ws string) (func(), error) {
	stem := lib.Stem
	if stem == "" {
		stem = strings.TrimSuffix(filepath.Base(lib.Path), ".py")
	}
	set, mode, boxed, err := e.sandboxMode(stem)
	if err != nil {
		return nil, err
	}
	if !boxed {
		return func() {}, nil
	}
	program, paths := sandbox.Python(cmd.Path)
	// Python finds its prefix from argv[0]: a bare name would be looked up
	// in the sandbox's PATH, where a shim's folder may be hidden.
	cmd.Path = program
	if len(cmd.Args) > 0 {
		cmd.Args[0] = program
	}
	if lib.Code == "" && lib.Path != "" {
		paths = append(paths, filepath.Dir(lib.Path))
	}
	var extra []string
	for _, kv := range cmd.Env {
		k, _, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(k, "LCP_") || slices.Contains(workerEnv, k)) && !sandbox.IsSecretName(k) {
			extra = append(extra, kv)
		}
	}
	box, err := sandbox.Wrap(cmd, set.Policy(ws, mode, extra, paths))
	if err != nil {
		return nil, fmt.Errorf("library %s: %w", stem, err)
	}
	// A worker writes its workspace directly: the box holds nothing to
	// read back once the process runs.
	return func() { box.Started(); box.Close() }, nil
}
