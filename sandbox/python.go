package sandbox

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

var (
	pythonMu    sync.Mutex
	pythonCache = map[string]pythonInfo{}
)

type pythonInfo struct {
	program string
	paths   []string
}

// Python returns what running the Python interpreter interp in a sandbox
// takes: the real program behind it (a pyenv or asdf shim lives in the
// home folder, which the sandbox hides) and the folders to show read-only
// (its prefixes and the user's site-packages). It asks the interpreter
// once per interp; when that fails it returns interp and no folder.
func Python(interp string) (program string, paths []string) {
	pythonMu.Lock()
	defer pythonMu.Unlock()
	if info, ok := pythonCache[interp]; ok {
		return info.program, info.paths
	}
	info := pythonInfo{program: interp}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// -E: nothing from PYTHONPATH is imported by the probe (sys and site
	// are loaded before the working folder enters sys.path).
	out, err := exec.CommandContext(ctx, interp, "-E", "-c",
		"import sys, site\nprint(sys.executable)\nprint(sys.prefix)\nprint(sys.base_prefix)\n"+
			"print(site.getusersitepackages() if site.ENABLE_USER_SITE else '')").Output()
	if err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) > 0 && filepath.IsAbs(lines[0]) {
			info.program = lines[0]
		}
		for _, l := range lines[1:] {
			if l = strings.TrimSpace(l); filepath.IsAbs(l) {
				info.paths = append(info.paths, l)
			}
		}
		if real, err := filepath.EvalSymlinks(info.program); err == nil {
			info.paths = append(info.paths, filepath.Dir(filepath.Dir(real)))
		}
	}
	pythonCache[interp] = info
	return info.program, info.paths
}
